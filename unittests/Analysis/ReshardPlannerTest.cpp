//===- ReshardPlannerTest.cpp - Chosen plans on hand-picked reshards ------===//

#include "CollectiveSimulator.h"

#include "autoshard/Analysis/ReshardPlanner.h"

#include "gtest/gtest.h"

using namespace autoshard;

namespace {

DeviceMesh makeMesh(std::vector<std::pair<std::string, int64_t>> axes) {
  std::vector<MeshAxis> out;
  for (auto &[name, size] : axes)
    out.push_back(MeshAxis{name, size, 0.0, 0.0});
  return DeviceMesh(out);
}

TensorLayout layout(std::vector<std::vector<int64_t>> dims,
                    std::vector<int64_t> partial = {},
                    ReductionKind kind = ReductionKind::Sum) {
  TensorLayout l;
  l.dimAxes = std::move(dims);
  l.partialAxes = std::move(partial);
  l.partialKind = kind;
  return l;
}

std::vector<CollectiveKind> kindsOf(const ReshardPlan &plan) {
  std::vector<CollectiveKind> out;
  for (const CollectiveStep &s : plan.steps)
    out.push_back(s.kind);
  return out;
}

std::string describe(const DeviceMesh &mesh, const ReshardPlan &plan) {
  std::string s;
  for (const CollectiveStep &step : plan.steps)
    s += "\n  " + step.str(mesh);
  return s;
}

/// Plans and checks the plan on real data; returns the plan.
ReshardPlan planAndRun(const CostModel &model,
                       const std::vector<int64_t> &shape,
                       const TensorLayout &from, const TensorLayout &to,
                       PlannerOptions options = {}) {
  std::string error;
  auto plan = planReshard(model, shape, 4, from, to, options, error);
  EXPECT_TRUE(plan.has_value()) << error;
  if (!plan)
    return {};
  sim::CollectiveSimulator simulator(model.getMesh(), shape);
  std::mt19937 rng(7);
  std::string err = simulator.simulate(plan->steps, from, to, rng);
  EXPECT_EQ(err, "") << describe(model.getMesh(), *plan);
  double time = 0, bytes = 0;
  for (const CollectiveStep &s : plan->steps) {
    time += model.getStepTimeUs(s, shape, 4);
    bytes += model.getStepBytes(s, shape, 4);
  }
  EXPECT_DOUBLE_EQ(plan->timeUs, time);
  EXPECT_DOUBLE_EQ(plan->bytesPerDevice, bytes);
  return *plan;
}

using K = CollectiveKind;

TEST(ReshardPlanner, PartialToReplicatedIsAllReduce) {
  CostModel model(makeMesh({{"dp", 2}, {"mp", 4}}));
  ReshardPlan plan =
      planAndRun(model, {64, 64}, layout({{0}, {}}, {1}), layout({{0}, {}}));
  EXPECT_EQ(kindsOf(plan), std::vector<K>{K::AllReduce});
  EXPECT_EQ(plan.steps[0].axes, std::vector<int64_t>{1});
  // 2 * 3/4 of the [32, 64] f32 shard.
  EXPECT_DOUBLE_EQ(plan.bytesPerDevice, 2 * 0.75 * 32 * 64 * 4);
}

TEST(ReshardPlanner, PartialToSplitIsReduceScatter) {
  CostModel model(makeMesh({{"dp", 2}, {"mp", 4}}));
  ReshardPlan plan =
      planAndRun(model, {64, 64}, layout({{0}, {}}, {1}), layout({{0}, {1}}));
  EXPECT_EQ(kindsOf(plan), std::vector<K>{K::ReduceScatter});
  EXPECT_EQ(plan.steps[0].dim, 1);
}

TEST(ReshardPlanner, ReplicatedToSplitIsOneLocalSlice) {
  CostModel model(makeMesh({{"x", 2}, {"y", 2}, {"z", 2}}));
  ReshardPlan plan =
      planAndRun(model, {8, 8}, layout({{}, {}}), layout({{2, 0}, {1}}));
  ASSERT_EQ(kindsOf(plan), (std::vector<K>{K::AllSlice, K::AllSlice}));
  const CollectiveStep &dim0 =
      plan.steps[0].dim == 0 ? plan.steps[0] : plan.steps[1];
  EXPECT_EQ(dim0.axes, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(plan.timeUs, 0.0);
}

TEST(ReshardPlanner, AllToAllOnlyWhenEnabled) {
  CostModel model(makeMesh({{"x", 4}}));
  TensorLayout from = layout({{0}, {}}), to = layout({{}, {0}});
  ReshardPlan off = planAndRun(model, {64, 64}, from, to);
  EXPECT_EQ(kindsOf(off), (std::vector<K>{K::AllGather, K::AllSlice}));
  PlannerOptions on;
  on.enableAllToAll = true;
  ReshardPlan with = planAndRun(model, {64, 64}, from, to, on);
  EXPECT_EQ(kindsOf(with), std::vector<K>{K::AllToAll});
  EXPECT_EQ(with.steps[0].srcDim, 0);
  EXPECT_EQ(with.steps[0].dim, 1);
  EXPECT_LT(with.timeUs, off.timeUs);
}

TEST(ReshardPlanner, AxisSwapOnTwoByTwo) {
  // Upstream shard-partition gets this one wrong (anchors.md).
  CostModel model(makeMesh({{"dp", 2}, {"mp", 2}}));
  TensorLayout from = layout({{0}, {1}}), to = layout({{1}, {0}});
  ReshardPlan plan = planAndRun(model, {64, 64}, from, to);
  ASSERT_EQ(kindsOf(plan), std::vector<K>{K::Permute});
  // (0,1) and (1,0) exchange their blocks; the diagonal stays.
  std::vector<std::pair<int64_t, int64_t>> expected = {{2, 1}, {1, 2}};
  EXPECT_EQ(plan.steps[0].pairs, expected);
  EXPECT_EQ(plan.steps[0].axes, (std::vector<int64_t>{0, 1}));
  // One point-to-point shard move: alpha + 32*32*4 bytes / beta.
  EXPECT_DOUBLE_EQ(plan.timeUs, 2.0 + 32 * 32 * 4 / 150e3);
}

TEST(ReshardPlanner, GatherSliceWhenPermuteIsSlower) {
  // With a very slow link on both axes but latency-dominated costs, a swap
  // still must be correct; on a mesh where a permute is impossible (axes of
  // different sizes) the planner falls back to collectives.
  CostModel model(makeMesh({{"a", 2}, {"b", 4}}));
  TensorLayout from = layout({{0}, {1}}), to = layout({{1}, {0}});
  ReshardPlan plan = planAndRun(model, {16, 16}, from, to);
  EXPECT_GE(plan.steps.size(), 2u);
  PlannerOptions on;
  on.enableAllToAll = true;
  planAndRun(model, {16, 16}, from, to, on);
}

TEST(ReshardPlanner, HierarchicalAllReduceAcrossNodes) {
  // Reducing over node and gpu at once sends everything over the slow
  // inter-node link; reduce_scatter inside the node, all_reduce the 1/8
  // shard across nodes, all_gather inside the node is much cheaper.
  CostModel model(makeMesh({{"node", 2}, {"gpu", 8}}));
  ReshardPlan plan =
      planAndRun(model, {256, 256}, layout({{}, {}}, {0, 1}), layout({{}, {}}));
  EXPECT_EQ(kindsOf(plan),
            (std::vector<K>{K::ReduceScatter, K::AllReduce, K::AllGather}));
  EXPECT_EQ(plan.steps[0].axes, std::vector<int64_t>{1});
  EXPECT_EQ(plan.steps[1].axes, std::vector<int64_t>{0});
  double direct = 10.0 + 2.0 * 15 / 16 * 262144.0 / 25e3;
  EXPECT_LT(plan.timeUs * 1.5, direct);
}

TEST(ReshardPlanner, SeveralAxesOnOneDimAndNonSuffixAxes) {
  CostModel model(makeMesh({{"x", 2}, {"y", 2}, {"z", 2}}));
  // Drop the major axis x of [x, y]: it is not a suffix, so gather y then x
  // and re-slice y, or gather all at once and slice y.
  ReshardPlan plan =
      planAndRun(model, {8, 8}, layout({{0, 1}, {}}), layout({{1}, {}}));
  EXPECT_FALSE(plan.steps.empty());
  // Reverse the order of two axes on one dim.
  planAndRun(model, {8, 8}, layout({{0, 1}, {2}}), layout({{1, 0}, {2}}));
  planAndRun(model, {8, 8}, layout({{0, 1, 2}, {}}), layout({{2}, {0, 1}}));
}

TEST(ReshardPlanner, UnevenSplits) {
  CostModel model(makeMesh({{"x", 2}, {"y", 2}}));
  TensorLayout uneven = layout({{0}, {}});
  uneven.unevenSizes = {{1, 5}, {}};
  // Gathering an uneven dim gives the replicated tensor.
  ReshardPlan gather = planAndRun(model, {6, 4}, uneven, layout({{}, {}}));
  EXPECT_EQ(kindsOf(gather), std::vector<K>{K::AllGather});
  // Slicing into the target's uneven sizes.
  ReshardPlan slice = planAndRun(model, {6, 4}, layout({{}, {}}), uneven);
  EXPECT_EQ(kindsOf(slice), std::vector<K>{K::AllSlice});
  // Uneven over two axes, reached by slicing x then y.
  TensorLayout four = layout({{0, 1}, {}});
  four.unevenSizes = {{1, 0, 2, 3}, {}};
  planAndRun(model, {6, 4}, uneven, four);
  planAndRun(model, {6, 4}, four, layout({{1}, {0}}));
  // Partial into uneven.
  TensorLayout partial = layout({{}, {}}, {0});
  ReshardPlan rs = planAndRun(model, {6, 4}, partial, uneven);
  EXPECT_EQ(kindsOf(rs), std::vector<K>{K::ReduceScatter});
}

TEST(ReshardPlanner, MakePartialAndReductionKinds) {
  CostModel model(makeMesh({{"x", 2}, {"y", 2}}));
  ReshardPlan mk =
      planAndRun(model, {4, 4}, layout({{}, {}}), layout({{}, {}}, {0, 1}));
  EXPECT_EQ(kindsOf(mk), std::vector<K>{K::MakePartial});
  EXPECT_EQ(mk.steps[0].axes, (std::vector<int64_t>{0, 1}));
  // A pending sum cannot become a pending max without reducing first.
  ReshardPlan kinds = planAndRun(model, {4, 4}, layout({{}, {}}, {0}),
                                 layout({{}, {}}, {0}, ReductionKind::Max));
  EXPECT_EQ(kinds.steps.front().kind, K::AllReduce);
  EXPECT_EQ(kinds.steps.back().kind, K::MakePartial);
  EXPECT_EQ(kinds.steps.back().reduction, ReductionKind::Max);
  planAndRun(model, {4, 4}, layout({{1}, {}}, {0}, ReductionKind::Product),
             layout({{0}, {}}, {1}, ReductionKind::Product));
  planAndRun(model, {4, 4}, layout({{}, {}}, {0, 1}, ReductionKind::Min),
             layout({{0}, {}}, {1}, ReductionKind::Min));
}

TEST(ReshardPlanner, IdenticalLayoutsNeedNoStep) {
  CostModel model(makeMesh({{"x", 2}}));
  std::string error;
  auto plan =
      planReshard(model, {4}, 4, layout({{0}}), layout({{0}}), {}, error);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->steps.empty());
  EXPECT_EQ(plan->timeUs, 0.0);
}

TEST(ReshardPlanner, InvalidLayoutsAreErrors) {
  CostModel model(makeMesh({{"x", 4}}));
  std::string error;
  EXPECT_FALSE(
      planReshard(model, {6}, 4, layout({{}}), layout({{0}}), {}, error));
  EXPECT_NE(error.find("invalid target layout"), std::string::npos) << error;
  EXPECT_NE(error.find("not divisible"), std::string::npos) << error;
  EXPECT_FALSE(
      planReshard(model, {8}, 4, layout({{3}}), layout({{0}}), {}, error));
  EXPECT_NE(error.find("invalid source layout"), std::string::npos) << error;
  EXPECT_FALSE(
      planReshard(model, {8, 8}, 4, layout({{0}}), layout({{0}}), {}, error));
  EXPECT_NE(error.find("rank"), std::string::npos) << error;
  EXPECT_FALSE(
      planReshard(model, {-1}, 4, layout({{}}), layout({{0}}), {}, error));
  EXPECT_NE(error.find("dynamic"), std::string::npos) << error;
}

TEST(ReshardPlanner, DeterministicAndMemoised) {
  CostModel model(makeMesh({{"x", 2}, {"y", 2}, {"z", 2}}));
  ReshardPlanner planner(model);
  TensorLayout from = layout({{0, 2}, {}}, {1}), to = layout({{1}, {2, 0}});
  std::string error;
  auto a = planner.plan({8, 8}, 4, from, to, error);
  auto b = planner.plan({8, 8}, 4, from, to, error);
  auto c = planReshard(model, {8, 8}, 4, from, to, {}, error);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(planner.getNumCacheHits(), 1u);
  EXPECT_EQ(planner.getNumCacheEntries(), 1u);
  ASSERT_EQ(a->steps.size(), c->steps.size());
  for (size_t i = 0; i < a->steps.size(); ++i)
    EXPECT_EQ(a->steps[i].str(model.getMesh()),
              c->steps[i].str(model.getMesh()));
  EXPECT_EQ(a->timeUs, c->timeUs);
  // Errors are memoised too.
  EXPECT_FALSE(planner.plan({7, 8}, 4, from, to, error));
  EXPECT_FALSE(error.empty());
}

} // namespace
