//===- ShardingRuleTest.cpp - Layouts, enumeration and matching of rules --===//

#include "autoshard/Propagate/ShardingRule.h"

#include "gtest/gtest.h"

using namespace autoshard;

namespace {
DeviceMesh mesh2x4() { return DeviceMesh({{"dp", 2}, {"mp", 4}}); }

/// C[m, n] += A[m, k] * B[k, n] with the accumulator tied to the result.
ShardingRule matmulRule(int64_t m, int64_t n, int64_t k) {
  ShardingRule r;
  int64_t fm = r.addFactor(m, FactorKind::Parallel, "m");
  int64_t fn = r.addFactor(n, FactorKind::Parallel, "n");
  int64_t fk = r.addFactor(k, FactorKind::Reduction, "k");
  r.operandDims = {{{fm}, {fk}}, {{fk}, {fn}}, {{fm}, {fn}}};
  r.resultDims = {{{fm}, {fn}}};
  r.operandIsInit = {false, false, false};
  r.tiedResult = {-1, -1, 0};
  r.flopsPerPoint = 2.0;
  return r;
}

std::vector<std::vector<int64_t>> dims(const TensorLayout &l) {
  std::vector<std::vector<int64_t>> out;
  for (const LayoutAxes &axes : l.dimAxes)
    out.push_back(axes.vec());
  return out;
}
} // namespace

TEST(ShardingRuleTest, MatmulContractionSplitIsPartial) {
  ShardingRule r = matmulRule(8, 16, 64);
  ASSERT_EQ(r.verify(), "");
  std::vector<TensorLayout> ins, outs;
  std::string error;
  ASSERT_TRUE(r.getLayouts(mesh2x4(), {{0}, {}, {1}}, ins, outs, error))
      << error;
  EXPECT_EQ(dims(ins[0]), (std::vector<std::vector<int64_t>>{{0}, {1}}));
  EXPECT_EQ(dims(ins[1]), (std::vector<std::vector<int64_t>>{{1}, {}}));
  EXPECT_EQ(outs[0].partialAxes, std::vector<int64_t>{1});
  EXPECT_EQ(outs[0].partialKind, ReductionKind::Sum);
  // The accumulator takes the result's layout, pending sum included.
  EXPECT_EQ(ins[2], outs[0]);
  EXPECT_DOUBLE_EQ(estimateFlops(r, mesh2x4(), {{0}, {}, {1}}),
                   2.0 * 8 * 16 * 64 / 8);
}

TEST(ShardingRuleTest, RejectsUnrepresentableAssignments) {
  ShardingRule r = matmulRule(8, 16, 6);
  std::vector<TensorLayout> ins, outs;
  std::string error;
  // Axis used twice.
  EXPECT_FALSE(r.getLayouts(mesh2x4(), {{0}, {0}, {}}, ins, outs, error));
  EXPECT_NE(error.find("assigned to both m and n"), std::string::npos) << error;
  // 6 is not divisible by 4.
  EXPECT_FALSE(r.getLayouts(mesh2x4(), {{}, {}, {1}}, ins, outs, error));
  EXPECT_NE(error.find("not divisible by its split count 4"), std::string::npos)
      << error;
  // Wrong arity and out-of-range axes.
  EXPECT_FALSE(r.getLayouts(mesh2x4(), {{}, {}}, ins, outs, error));
  EXPECT_FALSE(r.getLayouts(mesh2x4(), {{5}, {}, {}}, ins, outs, error));
  // A need-replication factor may not be split.
  r.factors[1].kind = FactorKind::NeedReplication;
  EXPECT_FALSE(r.getLayouts(mesh2x4(), {{}, {1}, {}}, ins, outs, error));
  EXPECT_NE(error.find("need-replication factor n"), std::string::npos)
      << error;
}

TEST(ShardingRuleTest, CompoundDimSplitsOnlyItsMajorFactor) {
  // collapse [4, 6] -> [24].
  ShardingRule r = buildReshapeRule({4, 6}, {24});
  ASSERT_EQ(r.verify(), "");
  ASSERT_EQ(r.factors.size(), 2u);
  EXPECT_EQ(r.resultDims[0], (TensorFactors{{0, 1}}));
  DeviceMesh mesh({{"x", 2}, {"y", 3}});
  std::vector<TensorLayout> ins, outs;
  std::string error;
  // Major factor split: passes through to the merged dim.
  ASSERT_TRUE(r.getLayouts(mesh, {{0}, {}}, ins, outs, error)) << error;
  EXPECT_EQ(dims(ins[0]), (std::vector<std::vector<int64_t>>{{0}, {}}));
  EXPECT_EQ(dims(outs[0]), (std::vector<std::vector<int64_t>>{{0}}));
  // Minor factor alone: its shards are not contiguous in the merged dim.
  EXPECT_FALSE(r.getLayouts(mesh, {{}, {1}}, ins, outs, error));
  EXPECT_NE(error.find("would not be contiguous"), std::string::npos) << error;
  // Major factor split down to single rows: the minor one may split too.
  DeviceMesh mesh43({{"x", 4}, {"y", 3}});
  ASSERT_TRUE(r.getLayouts(mesh43, {{0}, {1}}, ins, outs, error)) << error;
  EXPECT_EQ(dims(outs[0]), (std::vector<std::vector<int64_t>>{{0, 1}}));
}

TEST(ShardingRuleTest, ReshapeRefinement) {
  // [B*S, H] -> [B, S, H] with S = 6 = 2 * 3.
  ShardingRule r = buildReshapeRule({24, 8}, {4, 6, 8});
  ASSERT_EQ(r.verify(), "");
  EXPECT_EQ(r.operandDims[0], (TensorFactors{{0, 1}, {2}}));
  EXPECT_EQ(r.resultDims[0], (TensorFactors{{0}, {1}, {2}}));
  // Size-1 dims hold no factor.
  ShardingRule ones = buildReshapeRule({1, 4, 1}, {4});
  EXPECT_EQ(ones.operandDims[0], (TensorFactors{{}, {0}, {}}));
  EXPECT_EQ(ones.resultDims[0], (TensorFactors{{0}}));
  // [6, 4] -> [4, 6]: only the major 2 is shared; the rest stays whole.
  // Issue 22: a zero-size dim took a remainder by zero (SIGFPE); nothing
  // passes through it.
  ShardingRule zero = buildReshapeRule({0, 3, 4}, {3, 4, 0});
  ASSERT_EQ(zero.verify(), "");
  EXPECT_EQ(zero.operandDims[0], (TensorFactors{{}, {0}, {1}}));
  EXPECT_EQ(zero.resultDims[0], (TensorFactors{{2}, {3}, {}}));
  for (const auto &f : zero.factors)
    EXPECT_EQ(f.kind, FactorKind::NeedReplication);
  ShardingRule swap = buildReshapeRule({6, 4}, {4, 6});
  ASSERT_EQ(swap.verify(), "");
  EXPECT_EQ(swap.factors[0].size, 2);
  EXPECT_EQ(swap.factors[0].kind, FactorKind::Parallel);
  for (size_t f = 1; f < swap.factors.size(); ++f)
    EXPECT_EQ(swap.factors[f].kind, FactorKind::NeedReplication);
  EXPECT_EQ(swap.operandDims[0][0].front(), 0);
  EXPECT_EQ(swap.resultDims[0][0].front(), 0);
  EXPECT_EQ(enumerateCandidates(swap, mesh2x4()).size(), 2u);
}

TEST(ShardingRuleTest, EnumerationCounts) {
  DeviceMesh mesh = mesh2x4();
  // Matmul 8x16x4 on dp=2, mp=4: axes to {none, m, n, k} with orders gives
  // 1 + 6 + 6 + 6 = 19 assignments; k = 4 cannot take 8 ways (2 orders).
  std::vector<Candidate> mm = enumerateCandidates(matmulRule(8, 16, 4), mesh);
  EXPECT_EQ(mm.size(), 17u);
  // Most parallel first; the replicated candidate is last.
  EXPECT_EQ(mm.front().getParallelism(mesh), 8);
  EXPECT_EQ(mm.back().getParallelism(mesh), 1);
  EXPECT_TRUE(mm.back().resultLayouts[0].isReplicated());
  // Deterministic.
  std::vector<Candidate> again =
      enumerateCandidates(matmulRule(8, 16, 4), mesh);
  ASSERT_EQ(again.size(), mm.size());
  for (size_t i = 0; i < mm.size(); ++i)
    EXPECT_EQ(again[i].factorAxes, mm[i].factorAxes);
  // No duplicate layouts.
  for (size_t i = 0; i < mm.size(); ++i)
    for (size_t j = i + 1; j < mm.size(); ++j)
      EXPECT_FALSE(mm[i].operandLayouts == mm[j].operandLayouts &&
                   mm[i].resultLayouts == mm[j].resultLayouts);

  EnumerateOptions noReduce;
  noReduce.allowReductionSplits = false;
  // Without k: 1 + 4 + 2 + 4 = 11.
  EXPECT_EQ(enumerateCandidates(matmulRule(8, 16, 4), mesh, noReduce).size(),
            11u);
  EnumerateOptions oneAxis;
  oneAxis.maxAxesPerFactor = 1;
  // 1 + 6 + 6 = 13.
  EXPECT_EQ(enumerateCandidates(matmulRule(8, 16, 4), mesh, oneAxis).size(),
            13u);
  EnumerateOptions bounded;
  bounded.maxCandidates = 5;
  std::vector<Candidate> few =
      enumerateCandidates(matmulRule(8, 16, 4), mesh, bounded);
  ASSERT_EQ(few.size(), 5u);
  EXPECT_TRUE(few.back().resultLayouts[0].isReplicated());
  EXPECT_EQ(few.front().factorAxes, mm.front().factorAxes);

  // A fully need-replication rule has exactly the replicated candidate.
  ShardingRule rep = makeReplicatedRule({{8, 16}}, {{8, 16}});
  EXPECT_EQ(enumerateCandidates(rep, mesh).size(), 1u);
}

TEST(ShardingRuleTest, PackedAndPrintedKeysAgree) {
  // An axis name with a space makes enumeration compare printed layouts
  // and build every assignment's layouts; plain names take the packed path,
  // which only records assignments and builds the kept ones at the end.
  // Both must give the same candidates in the same order.
  DeviceMesh plain({{"x", 2}, {"y", 2}, {"z", 2}});
  DeviceMesh printed({{"x", 2}, {"y y", 2}, {"z", 2}});
  std::vector<ShardingRule> rules = {
      matmulRule(8, 16, 4), buildReshapeRule({4, 8, 16}, {32, 16}),
      buildReshapeRule({6, 4}, {4, 6}),
      buildElementwiseRule({{8, 16}, {1, 16}}, {8, 16})};
  for (const ShardingRule &rule : rules) {
    for (int64_t bound : {0, 7}) {
      EnumerateOptions options;
      options.maxCandidates = bound;
      std::vector<Candidate> a = enumerateCandidates(rule, plain, options);
      std::vector<Candidate> b = enumerateCandidates(rule, printed, options);
      ASSERT_EQ(a.size(), b.size()) << rule.str();
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].factorAxes, b[i].factorAxes) << rule.str();
        EXPECT_EQ(a[i].operandLayouts, b[i].operandLayouts) << rule.str();
        EXPECT_EQ(a[i].resultLayouts, b[i].resultLayouts) << rule.str();
        EXPECT_EQ(a[i].flops, b[i].flops) << rule.str();
      }
    }
  }
}

TEST(ShardingRuleTest, CandidatesWithoutFactorAxes) {
  // withFactorAxes = false leaves every candidate's factor axes empty and
  // changes nothing else, on the packed and the printed-key paths (the
  // factor axes a candidate is built from are reused between candidates).
  DeviceMesh plain({{"x", 2}, {"y", 2}, {"z", 2}});
  DeviceMesh printed({{"x", 2}, {"y y", 2}, {"z", 2}});
  for (const DeviceMesh &mesh : {plain, printed}) {
    for (const ShardingRule &rule :
         {matmulRule(8, 16, 4), buildReshapeRule({4, 8, 16}, {32, 16})}) {
      EnumerateOptions without;
      without.withFactorAxes = false;
      std::vector<Candidate> a = enumerateCandidates(rule, mesh);
      std::vector<Candidate> b = enumerateCandidates(rule, mesh, without);
      ASSERT_EQ(a.size(), b.size()) << rule.str();
      size_t split = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_TRUE(b[i].factorAxes.empty()) << rule.str();
        EXPECT_EQ(a[i].operandLayouts, b[i].operandLayouts) << rule.str();
        EXPECT_EQ(a[i].resultLayouts, b[i].resultLayouts) << rule.str();
        EXPECT_EQ(a[i].flops, b[i].flops) << rule.str();
        split += a[i].getParallelism(mesh) > 1;
      }
      EXPECT_GT(split, 1u) << rule.str();
    }
  }
}

TEST(ShardingRuleTest, ElementwiseBroadcastRule) {
  ShardingRule r = buildElementwiseRule({{8, 16}, {1, 16}, {1}}, {8, 16});
  ASSERT_EQ(r.verify(), "");
  EXPECT_EQ(r.operandDims[1], (TensorFactors{{}, {1}}));
  EXPECT_EQ(r.operandDims[2], (TensorFactors{{}}));
  // Elementwise work = local elements.
  EXPECT_DOUBLE_EQ(estimateFlops(r, mesh2x4(), {{0}, {1}}), 8.0 * 16 / 8);
  EXPECT_EQ(r.str(), "factors: f0=8 par, f1=16 par; operands: [f0][f1], "
                     "[][f1], []; results: [f0][f1]");
}

TEST(ShardingRuleTest, PrintsAndVerifies) {
  // Every part of the printed form: kinds, the reduction, init and
  // accumulator operands, unnamed factors, scalars, compound dims.
  ShardingRule r = matmulRule(8, 16, 64);
  r.reduction = ReductionKind::Max;
  r.operandIsInit = {false, false, true};
  int64_t rep = r.addFactor(3, FactorKind::NeedReplication);
  r.operandDims.push_back({});
  r.operandIsInit.push_back(false);
  r.tiedResult.push_back(-1);
  r.resultDims.push_back({{0, rep}});
  ASSERT_EQ(r.verify(), "");
  EXPECT_EQ(r.str(), "factors: m=8 par, n=16 par, k=64 red(max), f3=3 rep; "
                     "operands: [m][k], [k][n], init [m][n], scalar; "
                     "results: [m][n], [m,f3]");
  r.operandIsInit = {false, false, false, false};
  EXPECT_NE(r.str().find("acc [m][n]"), std::string::npos) << r.str();
  EXPECT_EQ(ShardingRule().str(),
            "factors: none; operands: none; results: none");

  // The first bad tensor is named, operands before results.
  ShardingRule twice = r;
  twice.resultDims[1] = {{0}, {0}};
  EXPECT_EQ(twice.verify(), "result #1 holds factor m twice");
  twice.operandDims[1] = {{5}};
  EXPECT_EQ(twice.verify(), "operand #1 refers to factor 5 but the rule has 4");
  // A factor may appear once in each of several tensors.
  ShardingRule shared = r;
  shared.operandDims[3] = {{2}};
  EXPECT_EQ(shared.verify(), "");
}

TEST(ShardingRuleTest, InferFactorAxesFromUserLayouts) {
  ShardingRule r = matmulRule(8, 16, 64);
  DeviceMesh mesh = mesh2x4();
  TensorLayout a = TensorLayout::replicated(2), b = TensorLayout::replicated(2);
  a.dimAxes = {{0}, {1}};
  b.dimAxes = {{1}, {}};
  Candidate c;
  std::string error;
  ASSERT_TRUE(inferFactorAxes(r, mesh, {&a, &b}, {}, c, error)) << error;
  EXPECT_EQ(c.factorAxes, (FactorAxes{{0}, {}, {1}}));
  EXPECT_EQ(c.resultLayouts[0].partialAxes, std::vector<int64_t>{1});

  // Contraction split on one side only.
  a.dimAxes = {{0}, {}};
  TensorLayout b2 = TensorLayout::replicated(2);
  b2.dimAxes = {{1}, {}};
  EXPECT_FALSE(inferFactorAxes(r, mesh, {&a, &b2}, {}, c, error));
  EXPECT_EQ(error, "operand #1 splits reduction factor k (size 64) over "
                   "['mp'] but operand #0 does not");

  // A partial input is refused; an inconsistent result is refused.
  TensorLayout partial = TensorLayout::replicated(2);
  partial.partialAxes = {1};
  EXPECT_FALSE(inferFactorAxes(r, mesh, {&partial, nullptr}, {}, c, error));
  EXPECT_NE(error.find("partial over ['mp']"), std::string::npos) << error;
  TensorLayout a2 = TensorLayout::replicated(2);
  a2.dimAxes = {{0}, {}};
  // A factor only the result holds (n) takes the result's axes.
  TensorLayout out = TensorLayout::replicated(2);
  out.dimAxes = {{0}, {1}};
  ASSERT_TRUE(inferFactorAxes(r, mesh, {&a2}, {&out}, c, error)) << error;
  EXPECT_EQ(c.factorAxes, (FactorAxes{{0}, {1}, {}}));
  EXPECT_EQ(dims(c.operandLayouts[1]),
            (std::vector<std::vector<int64_t>>{{}, {1}}));
  // The result disagrees with operand #0 on m.
  out.dimAxes = {{}, {1}};
  EXPECT_FALSE(inferFactorAxes(r, mesh, {&a2}, {&out}, c, error));
  EXPECT_EQ(error, "result #0 does not split parallel factor m (size 8) but "
                   "operand #0 splits it over ['dp']");
  // A pending sum no reduction factor explains.
  out.dimAxes = {{0}, {}};
  out.partialAxes = {1};
  EXPECT_FALSE(inferFactorAxes(r, mesh, {&a2}, {&out}, c, error));
  EXPECT_NE(error.find("give it"), std::string::npos) << error;
}
