//===- GradientTest.cpp - Every VJP rule against central differences -----===//
//
// One test per op kind (lib/Train/Vjp/*.cpp), each on 3 random shape draws
// (seeded): the gradient @train_step computes (SGD, lr = 1: g = p - p')
// against central differences of the loss of the original @main
// (GradientCheck.h). Models are f64 so that h = 1e-6 differences are exact
// to ~1e-9.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <sstream>

using namespace autoshard::gradcheck;

namespace {

constexpr int kDraws = 3;

int64_t pick(std::mt19937_64 &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

/// A float literal MLIR parses back to the same double.
std::string lit(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17e", v);
  return buf;
}

std::string list(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

std::string trace(const std::string &what, int draw) {
  return what + " (draw " + std::to_string(draw) + ")";
}

bool check(const std::string &source, uint64_t seed,
           CheckOptions options = {}) {
  options.seed = seed;
  return checkGradients(source, options);
}

std::vector<unsigned> identity(unsigned rank) {
  std::vector<unsigned> v(rank);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

std::vector<int64_t> randomShape(std::mt19937_64 &rng, unsigned rank,
                                 int64_t lo, int64_t hi) {
  std::vector<int64_t> s;
  for (unsigned i = 0; i < rank; ++i)
    s.push_back(pick(rng, lo, hi));
  return s;
}

} // namespace

//===----------------------------------------------------------------------===//
// The harness itself
//===----------------------------------------------------------------------===//

TEST(GradientCheckHarness, DetectsAMismatch) {
  // exp is far from linear over +-0.5: differences that coarse cannot match
  // the exact gradient, so the check must report the parameter.
  std::string model = R"(
func.func @main(%x: tensor<2x3xf64> {dist.param}) -> tensor<2x3xf64> {
  %e = tensor.empty() : tensor<2x3xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf64>) outs(%e : tensor<2x3xf64>) {
  ^bb0(%a: f64, %out: f64):
    %y = math.exp %a : f64
    linalg.yield %y : f64
  } -> tensor<2x3xf64>
  return %r : tensor<2x3xf64>
})";
  CheckOptions coarse;
  coarse.h = 0.5;
  EXPECT_NONFATAL_FAILURE(checkGradients(model, coarse),
                          "elements differ from central differences");
  EXPECT_TRUE(checkGradients(model, CheckOptions()));
  // A model the pass rejects is reported with the diagnostic.
  std::string noParams = R"(
func.func @main(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
})";
  EXPECT_NONFATAL_FAILURE(checkGradients(noParams, CheckOptions()),
                          "has no parameters");
}

//===----------------------------------------------------------------------===//
// linalg.matmul / linalg.batch_matmul
//===----------------------------------------------------------------------===//

TEST(GradientCheck, Matmul) {
  std::mt19937_64 rng(101);
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t m = pick(rng, 1, 6), k = pick(rng, 1, 6), n = pick(rng, 1, 6);
    SCOPED_TRACE(trace("matmul " + dims({m, k}) + " x " + dims({k, n}), draw));
    std::string x = f64Tensor({m, k}), w = f64Tensor({k, n}),
                y = f64Tensor({m, n});
    // The weight only (the input is data), into a zero fill.
    check(subst(R"(
func.func @main(%x: ${X}, %w: ${W} {dist.param}) -> ${Y} {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : ${Y}
  %init = linalg.fill ins(%zero : f64) outs(%e : ${Y}) -> ${Y}
  %y = linalg.matmul ins(%x, %w : ${X}, ${W}) outs(%init : ${Y}) -> ${Y}
  return %y : ${Y}
})",
                {{"X", x}, {"W", w}, {"Y", y}}),
          10 + draw);
    // Both factors and the accumulator are parameters.
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}, %w: ${W} {dist.param}, %c: ${Y} {dist.param}) -> ${Y} {
  %y = linalg.matmul ins(%x, %w : ${X}, ${W}) outs(%c : ${Y}) -> ${Y}
  return %y : ${Y}
})",
                {{"X", x}, {"W", w}, {"Y", y}}),
          20 + draw);
  }
}

TEST(GradientCheck, BatchMatmul) {
  std::mt19937_64 rng(102);
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t b = pick(rng, 1, 3), m = pick(rng, 1, 5), k = pick(rng, 1, 5),
            n = pick(rng, 1, 5);
    SCOPED_TRACE(trace("batch_matmul " + dims({b, m, k}) + " x " +
                           dims({b, k, n}),
                       draw));
    std::string x = f64Tensor({b, m, k}), w = f64Tensor({b, k, n}),
                y = f64Tensor({b, m, n});
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}, %w: ${W} {dist.param}) -> ${Y} {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : ${Y}
  %init = linalg.fill ins(%zero : f64) outs(%e : ${Y}) -> ${Y}
  %y = linalg.batch_matmul ins(%x, %w : ${X}, ${W}) outs(%init : ${Y}) -> ${Y}
  return %y : ${Y}
})",
                {{"X", x}, {"W", w}, {"Y", y}}),
          30 + draw);
    check(subst(R"(
func.func @main(%x: ${X}, %w: ${W} {dist.param}, %c: ${Y} {dist.param}) -> ${Y} {
  %y = linalg.batch_matmul ins(%x, %w : ${X}, ${W}) outs(%c : ${Y}) -> ${Y}
  return %y : ${Y}
})",
                {{"X", x}, {"W", w}, {"Y", y}}),
          40 + draw);
  }
}

//===----------------------------------------------------------------------===//
// Elementwise linalg.generic: one scalar op per case
//===----------------------------------------------------------------------===//

namespace {
struct ScalarCase {
  const char *name;
  const char *body; // reads %a, %b (f64), defines %r
};

const ScalarCase kScalarCases[] = {
    {"addf", "%r = arith.addf %a, %b : f64"},
    {"subf", "%r = arith.subf %a, %b : f64"},
    {"mulf", "%r = arith.mulf %a, %b : f64"},
    {"divf", R"(%c = arith.constant 1.5 : f64
    %bb = arith.mulf %b, %b : f64
    %d = arith.addf %bb, %c : f64
    %r = arith.divf %a, %d : f64)"},
    {"exp", R"(%e = math.exp %a : f64
    %r = arith.mulf %e, %b : f64)"},
    {"log", R"(%c = arith.constant 0.5 : f64
    %aa = arith.mulf %a, %a : f64
    %d = arith.addf %aa, %c : f64
    %l = math.log %d : f64
    %r = arith.mulf %l, %b : f64)"},
    {"tanh", R"(%t = math.tanh %a : f64
    %r = arith.mulf %t, %b : f64)"},
    {"erf", R"(%t = math.erf %a : f64
    %r = arith.mulf %t, %b : f64)"},
    {"sqrt", R"(%c = arith.constant 0.5 : f64
    %aa = arith.mulf %a, %a : f64
    %d = arith.addf %aa, %c : f64
    %s = math.sqrt %d : f64
    %r = arith.mulf %s, %b : f64)"},
    {"rsqrt", R"(%c = arith.constant 0.5 : f64
    %aa = arith.mulf %a, %a : f64
    %d = arith.addf %aa, %c : f64
    %s = math.rsqrt %d : f64
    %r = arith.mulf %s, %b : f64)"},
    {"relu", R"(%zero = arith.constant 0.0 : f64
    %m = arith.maximumf %a, %zero : f64
    %r = arith.mulf %m, %b : f64)"},
    {"maximumf", "%r = arith.maximumf %a, %b : f64"},
    {"negf", R"(%n = arith.negf %a : f64
    %r = arith.mulf %n, %b : f64)"},
    {"composite", R"(%e = math.exp %b : f64
    %t = math.tanh %a : f64
    %p = arith.mulf %t, %e : f64
    %q = arith.subf %p, %a : f64
    %c = arith.constant 2.0 : f64
    %d = arith.addf %e, %c : f64
    %r = arith.divf %q, %d : f64)"},
};

class ElementwiseGeneric : public ::testing::TestWithParam<ScalarCase> {};
} // namespace

TEST_P(ElementwiseGeneric, MatchesFiniteDifferences) {
  const ScalarCase &c = GetParam();
  std::mt19937_64 rng(200 + (&c - kScalarCases));
  for (int draw = 0; draw < kDraws; ++draw) {
    unsigned rank = static_cast<unsigned>(pick(rng, 1, 3));
    std::vector<int64_t> shape = randomShape(rng, rank, 1, 5);
    SCOPED_TRACE(trace(std::string(c.name) + " on " + dims(shape), draw));
    std::string t = f64Tensor(shape), id = affineMap(rank, identity(rank));
    check(subst(R"(
func.func @main(%x: ${T} {dist.param}, %y: ${T} {dist.param}) -> ${T} {
  %init = tensor.empty() : ${T}
  %r = linalg.generic {indexing_maps = [${ID}, ${ID}, ${ID}], iterator_types = ${IT}}
      ins(%x, %y : ${T}, ${T}) outs(%init : ${T}) {
  ^bb0(%a: f64, %b: f64, %out: f64):
    ${BODY}
    linalg.yield %r : f64
  } -> ${T}
  return %r : ${T}
})",
                {{"T", t},
                 {"ID", id},
                 {"IT", iterators(std::string(rank, 'p'))},
                 {"BODY", c.body}}),
          300 + draw);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ops, ElementwiseGeneric, ::testing::ValuesIn(kScalarCases),
    [](const ::testing::TestParamInfo<ScalarCase> &info) {
      return std::string(info.param.name);
    });

//===----------------------------------------------------------------------===//
// Broadcasting generic (a bias) and reductions
//===----------------------------------------------------------------------===//

TEST(GradientCheck, BroadcastAddGeneric) {
  std::mt19937_64 rng(103);
  const char *tmpl = R"(
func.func @main(%x: ${X} {dist.param}, %bias: ${B} {dist.param}) -> ${X} {
  %e = tensor.empty() : ${X}
  %r = linalg.generic {indexing_maps = [${IDX}, ${BMAP}, ${IDX}], iterator_types = ${IT}}
      ins(%x, %bias : ${X}, ${B}) outs(%e : ${X}) {
  ^bb0(%a: f64, %b: f64, %out: f64):
    %s = arith.addf %a, %b : f64
    linalg.yield %s : f64
  } -> ${X}
  return %r : ${X}
})";
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t b = pick(rng, 1, 3), m = pick(rng, 1, 5), n = pick(rng, 1, 5);
    SCOPED_TRACE(trace("bias on " + dims({b, m, n}), draw));
    // [M, N] + [N] (a row bias), [M, N] + [M] (a column bias),
    // [B, M, N] + [M, N] (the position embedding's form).
    check(subst(tmpl, {{"X", f64Tensor({m, n})},
                       {"B", f64Tensor({n})},
                       {"IDX", affineMap(2, {0, 1})},
                       {"BMAP", affineMap(2, {1})},
                       {"IT", iterators("pp")}}),
          400 + draw);
    check(subst(tmpl, {{"X", f64Tensor({m, n})},
                       {"B", f64Tensor({m})},
                       {"IDX", affineMap(2, {0, 1})},
                       {"BMAP", affineMap(2, {0})},
                       {"IT", iterators("pp")}}),
          410 + draw);
    check(subst(tmpl, {{"X", f64Tensor({b, m, n})},
                       {"B", f64Tensor({m, n})},
                       {"IDX", affineMap(3, {0, 1, 2})},
                       {"BMAP", affineMap(3, {1, 2})},
                       {"IT", iterators("ppp")}}),
          420 + draw);
    // A rank-0 parameter read at every point (map to ()), and an input read
    // transposed ((d0, d1) -> (d1, d0)).
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}, %s: tensor<f64> {dist.param}, %t: ${XT} {dist.param}) -> ${X} {
  %e = tensor.empty() : ${X}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s, %t : ${X}, tensor<f64>, ${XT}) outs(%e : ${X}) {
  ^bb0(%a: f64, %b: f64, %c: f64, %out: f64):
    %p = arith.mulf %a, %b : f64
    %q = arith.mulf %c, %c : f64
    %u = arith.addf %p, %q : f64
    linalg.yield %u : f64
  } -> ${X}
  return %r : ${X}
})",
                {{"X", f64Tensor({m, n})}, {"XT", f64Tensor({n, m})}}),
          430 + draw);
  }
}

namespace {
/// A reduction of `x` (rank `rank`) over dim `dim` with `body` (reads %a,
/// %out; defines %r) into an init: a fill of `initValue`, or the parameter
/// %c when `initValue` is empty.
std::string reductionModel(const std::vector<int64_t> &shape, unsigned dim,
                           const std::string &body,
                           const std::string &initValue) {
  unsigned rank = shape.size();
  std::vector<int64_t> outShape = shape;
  outShape.erase(outShape.begin() + dim);
  std::vector<unsigned> outDims;
  std::string kinds;
  for (unsigned d = 0; d < rank; ++d) {
    kinds += d == dim ? 'r' : 'p';
    if (d != dim)
      outDims.push_back(d);
  }
  std::string init =
      initValue.empty()
          ? ""
          : subst(R"(
  %v = arith.constant ${V} : f64
  %e = tensor.empty() : ${Y}
  %c = linalg.fill ins(%v : f64) outs(%e : ${Y}) -> ${Y})",
                  {{"V", initValue}, {"Y", f64Tensor(outShape)}});
  std::string args = "%x: " + f64Tensor(shape) + " {dist.param}";
  if (initValue.empty())
    args += ", %c: " + f64Tensor(outShape) + " {dist.param}";
  return subst(R"(
func.func @main(${ARGS}) -> ${Y} {${INIT}
  %r = linalg.generic {indexing_maps = [${IN}, ${OUT}], iterator_types = ${IT}}
      ins(%x : ${X}) outs(%c : ${Y}) {
  ^bb0(%a: f64, %out: f64):
    ${BODY}
    linalg.yield %r : f64
  } -> ${Y}
  return %r : ${Y}
})",
               {{"ARGS", args},
                {"INIT", init},
                {"IN", affineMap(rank, identity(rank))},
                {"OUT", affineMap(rank, outDims)},
                {"IT", iterators(kinds)},
                {"X", f64Tensor(shape)},
                {"Y", f64Tensor(outShape)},
                {"BODY", body}});
}
} // namespace

TEST(GradientCheck, SumReductionGeneric) {
  std::mt19937_64 rng(104);
  for (int draw = 0; draw < kDraws; ++draw) {
    unsigned rank = static_cast<unsigned>(pick(rng, 2, 3));
    std::vector<int64_t> shape = randomShape(rng, rank, 1, 5);
    unsigned dim = static_cast<unsigned>(pick(rng, 0, rank - 1));
    shape[dim] = pick(rng, 2, 5); // something to reduce
    SCOPED_TRACE(trace("sum over dim " + std::to_string(dim) + " of " +
                           dims(shape),
                       draw));
    check(reductionModel(shape, dim, "%r = arith.addf %a, %out : f64", "0.0"),
          500 + draw);
    // A function of the input summed (the LayerNorm sum of squares form),
    // out on the left.
    check(reductionModel(shape, dim, R"(%s = arith.mulf %a, %a : f64
    %r = arith.addf %out, %s : f64)",
                         "0.0"),
          510 + draw);
    // The init is a parameter too: it passes into every output once.
    check(reductionModel(shape, dim, R"(%t = math.tanh %a : f64
    %r = arith.addf %t, %out : f64)",
                         ""),
          520 + draw);
    // Every dim reduced: a rank-0 output (and a rank-0 mse).
    std::vector<unsigned> none;
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}) -> tensor<f64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<f64>
  %c = linalg.fill ins(%zero : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %r = linalg.generic {indexing_maps = [${IN}, ${OUT}], iterator_types = ${IT}}
      ins(%x : ${X}) outs(%c : tensor<f64>) {
  ^bb0(%a: f64, %out: f64):
    %s = math.sin %a : f64
    %r = arith.addf %s, %out : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %r : tensor<f64>
})",
                {{"X", f64Tensor(shape)},
                 {"IN", affineMap(rank, identity(rank))},
                 {"OUT", affineMap(rank, none)},
                 {"IT", iterators(std::string(rank, 'r'))}}),
          530 + draw);
  }
}

TEST(GradientCheck, MaxReductionGeneric) {
  std::mt19937_64 rng(105);
  const std::string negInf = "0xFFF0000000000000", posInf = "0x7FF0000000000000";
  for (int draw = 0; draw < kDraws; ++draw) {
    unsigned rank = static_cast<unsigned>(pick(rng, 2, 3));
    std::vector<int64_t> shape = randomShape(rng, rank, 1, 5);
    unsigned dim = static_cast<unsigned>(pick(rng, 0, rank - 1));
    shape[dim] = pick(rng, 2, 5); // something to reduce
    SCOPED_TRACE(trace("max over dim " + std::to_string(dim) + " of " +
                           dims(shape),
                       draw));
    check(reductionModel(shape, dim, "%r = arith.maximumf %a, %out : f64",
                         negInf),
          600 + draw);
    check(reductionModel(shape, dim, "%r = arith.maximumf %out, %a : f64",
                         negInf),
          610 + draw);
    check(reductionModel(shape, dim, "%r = arith.minimumf %a, %out : f64",
                         posInf),
          620 + draw);
    // max of a function of the input: the winner's f' carries the gradient.
    check(reductionModel(shape, dim, R"(%s = math.sin %a : f64
    %r = arith.maximumf %s, %out : f64)",
                         negInf),
          630 + draw);
  }
}

//===----------------------------------------------------------------------===//
// The importer's patterns: LayerNorm, GELU, the contraction generic
//===----------------------------------------------------------------------===//

TEST(GradientCheck, LayerNormPattern) {
  std::mt19937_64 rng(106);
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t r = pick(rng, 1, 5), d = pick(rng, 2, 8);
    SCOPED_TRACE(trace("layernorm on " + dims({r, d}), draw));
    // examples/gpt.mlir's generics, in f64.
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}, %g: ${V} {dist.param}, %b: ${V} {dist.param}) -> ${X} {
  %zero = arith.constant 0.0 : f64
  %empty1 = tensor.empty() : ${R}
  %init0 = linalg.fill ins(%zero : f64) outs(%empty1 : ${R}) -> ${R}
  %ln_sum0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : ${X}) outs(%init0 : ${R}) {
    ^bb0(%in0: f64, %out: f64):
      %r = arith.addf %in0, %out : f64
      linalg.yield %r : f64
    } -> ${R}
  %empty2 = tensor.empty() : ${X}
  %ln_centered0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ln_sum0 : ${X}, ${R}) outs(%empty2 : ${X}) {
    ^bb0(%in0: f64, %in1: f64, %out: f64):
      %c_inv_n = arith.constant ${INVN} : f64
      %mean = arith.mulf %in1, %c_inv_n : f64
      %r = arith.subf %in0, %mean : f64
      linalg.yield %r : f64
    } -> ${X}
  %empty3 = tensor.empty() : ${R}
  %init1 = linalg.fill ins(%zero : f64) outs(%empty3 : ${R}) -> ${R}
  %ln_sqsum0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%ln_centered0 : ${X}) outs(%init1 : ${R}) {
    ^bb0(%in0: f64, %out: f64):
      %sq = arith.mulf %in0, %in0 : f64
      %r = arith.addf %sq, %out : f64
      linalg.yield %r : f64
    } -> ${R}
  %empty4 = tensor.empty() : ${X}
  %ln0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%ln_centered0, %ln_sqsum0, %g, %b : ${X}, ${R}, ${V}, ${V}) outs(%empty4 : ${X}) {
    ^bb0(%in0: f64, %in1: f64, %in2: f64, %in3: f64, %out: f64):
      %c_inv_n = arith.constant ${INVN} : f64
      %c_eps = arith.constant 1.000000000e-05 : f64
      %var = arith.mulf %in1, %c_inv_n : f64
      %vare = arith.addf %var, %c_eps : f64
      %rstd = math.rsqrt %vare : f64
      %xn = arith.mulf %in0, %rstd : f64
      %xg = arith.mulf %xn, %in2 : f64
      %r = arith.addf %xg, %in3 : f64
      linalg.yield %r : f64
    } -> ${X}
  return %ln0 : ${X}
})",
                {{"X", f64Tensor({r, d})},
                 {"R", f64Tensor({r})},
                 {"V", f64Tensor({d})},
                 {"INVN", lit(1.0 / static_cast<double>(d))}}),
          700 + draw);
  }
}

TEST(GradientCheck, GeluPattern) {
  std::mt19937_64 rng(107);
  const char *tmpl = R"(
func.func @main(%x: ${X} {dist.param}, %w: ${W} {dist.param}) -> ${Y} {
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : ${Y}
  %init = linalg.fill ins(%zero : f64) outs(%e0 : ${Y}) -> ${Y}
  %h = linalg.matmul ins(%x, %w : ${X}, ${W}) outs(%init : ${Y}) -> ${Y}
  %e1 = tensor.empty() : ${Y}
  %gelu = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%h : ${Y}) outs(%e1 : ${Y}) {
    ^bb0(%in0: f64, %out: f64):
      ${BODY}
      linalg.yield %r : f64
    } -> ${Y}
  return %gelu : ${Y}
})";
  // The ONNX importer's erf form: 0.5 x (1 + erf(x / sqrt 2)).
  const char *erfBody = R"(%c_half = arith.constant 5.000000000e-01 : f64
      %c_one = arith.constant 1.000000000e+00 : f64
      %c_rsqrt2 = arith.constant 7.07106781186547573e-01 : f64
      %s = arith.mulf %in0, %c_rsqrt2 : f64
      %er = math.erf %s : f64
      %onep = arith.addf %c_one, %er : f64
      %hx = arith.mulf %c_half, %in0 : f64
      %r = arith.mulf %hx, %onep : f64)";
  // examples/gpt.mlir's tanh form.
  const char *tanhBody = R"(%c_half = arith.constant 5.000000000e-01 : f64
      %c_one = arith.constant 1.000000000e+00 : f64
      %c_k = arith.constant 4.471500000e-02 : f64
      %c_s = arith.constant 7.978845608e-01 : f64
      %x2 = arith.mulf %in0, %in0 : f64
      %x3 = arith.mulf %x2, %in0 : f64
      %kx3 = arith.mulf %c_k, %x3 : f64
      %inner = arith.addf %in0, %kx3 : f64
      %scaled = arith.mulf %c_s, %inner : f64
      %th = math.tanh %scaled : f64
      %onep = arith.addf %c_one, %th : f64
      %hx = arith.mulf %c_half, %in0 : f64
      %r = arith.mulf %hx, %onep : f64)";
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t m = pick(rng, 1, 5), k = pick(rng, 1, 5), n = pick(rng, 1, 6);
    SCOPED_TRACE(trace("gelu(" + dims({m, k}) + " x " + dims({k, n}) + ")",
                       draw));
    for (const char *body : {erfBody, tanhBody})
      check(subst(tmpl, {{"X", f64Tensor({m, k})},
                         {"W", f64Tensor({k, n})},
                         {"Y", f64Tensor({m, n})},
                         {"BODY", body}}),
            800 + draw);
  }
}

TEST(GradientCheck, ContractionGeneric) {
  std::mt19937_64 rng(108);
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t b = pick(rng, 1, 3), s = pick(rng, 1, 4), k = pick(rng, 1, 5),
            n = pick(rng, 1, 5);
    SCOPED_TRACE(trace("contraction " + dims({b, s, k}) + " x " + dims({k, n}),
                       draw));
    // The importer's MatMul with broadcast batch dims: loops (b, s, n, k).
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}, %w: ${W} {dist.param}) -> ${Y} {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : ${Y}
  %init = linalg.fill ins(%zero : f64) outs(%e : ${Y}) -> ${Y}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : ${X}, ${W}) outs(%init : ${Y}) {
    ^bb0(%in0: f64, %in1: f64, %out: f64):
      %p = arith.mulf %in0, %in1 : f64
      %r = arith.addf %out, %p : f64
      linalg.yield %r : f64
    } -> ${Y}
  return %y : ${Y}
})",
                {{"X", f64Tensor({b, s, k})},
                 {"W", f64Tensor({k, n})},
                 {"Y", f64Tensor({b, s, n})}}),
          900 + draw);
  }
}

//===----------------------------------------------------------------------===//
// Structural ops
//===----------------------------------------------------------------------===//

TEST(GradientCheck, Softmax) {
  std::mt19937_64 rng(109);
  for (int draw = 0; draw < kDraws; ++draw) {
    unsigned rank = static_cast<unsigned>(pick(rng, 1, 3));
    std::vector<int64_t> shape = randomShape(rng, rank, 2, 5);
    int64_t dim = pick(rng, 0, rank - 1);
    SCOPED_TRACE(trace("softmax dim " + std::to_string(dim) + " of " +
                           dims(shape),
                       draw));
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}) -> ${X} {
  %e = tensor.empty() : ${X}
  %s = linalg.softmax dimension(${D}) ins(%x : ${X}) outs(%e : ${X}) -> ${X}
  return %s : ${X}
})",
                {{"X", f64Tensor(shape)}, {"D", std::to_string(dim)}}),
          1000 + draw);
  }
}

TEST(GradientCheck, Transpose) {
  std::mt19937_64 rng(110);
  for (int draw = 0; draw < kDraws; ++draw) {
    unsigned rank = draw == 0 ? 3u : static_cast<unsigned>(pick(rng, 2, 4));
    std::vector<int64_t> shape = randomShape(rng, rank, 1, 4);
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    if (draw == 0) {
      // A cycle (its own inverse only for rank 2): [1, 2, ..., 0].
      std::rotate(perm.begin(), perm.begin() + 1, perm.end());
    } else {
      while (std::is_sorted(perm.begin(), perm.end()))
        std::shuffle(perm.begin(), perm.end(), rng);
    }
    std::vector<int64_t> out;
    for (int64_t p : perm)
      out.push_back(shape[p]);
    SCOPED_TRACE(trace("transpose " + dims(shape) + " by [" + list(perm) + "]",
                       draw));
    // Scaled by a second parameter so each output element is distinct.
    std::string id = affineMap(rank, identity(rank));
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}, %s: ${Y} {dist.param}) -> ${Y} {
  %e = tensor.empty() : ${Y}
  %t = linalg.transpose ins(%x : ${X}) outs(%e : ${Y}) permutation = [${P}]
  %e2 = tensor.empty() : ${Y}
  %r = linalg.generic {indexing_maps = [${ID}, ${ID}, ${ID}], iterator_types = ${IT}}
      ins(%t, %s : ${Y}, ${Y}) outs(%e2 : ${Y}) {
    ^bb0(%a: f64, %b: f64, %out: f64):
      %m = arith.mulf %a, %b : f64
      linalg.yield %m : f64
    } -> ${Y}
  return %r : ${Y}
})",
                {{"X", f64Tensor(shape)},
                 {"Y", f64Tensor(out)},
                 {"P", list(perm)},
                 {"ID", id},
                 {"IT", iterators(std::string(rank, 'p'))}}),
          1100 + draw);
  }
}

TEST(GradientCheck, ExpandCollapseShape) {
  std::mt19937_64 rng(111);
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t a = pick(rng, 1, 4), b = pick(rng, 1, 4), c = pick(rng, 1, 4);
    SCOPED_TRACE(trace("reshape " + dims({a * b, c}) + " -> " +
                           dims({a, b, c}) + " -> " + dims({a, b * c}),
                       draw));
    // [A*B, C] -> [A, B, C] -> [A, B*C], then scaled by a parameter of the
    // final shape.
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}, %s: ${Z} {dist.param}) -> ${Z} {
  %y = tensor.expand_shape %x [[0, 1], [2]] output_shape [${A}, ${B}, ${C}] : ${X} into ${Y}
  %z = tensor.collapse_shape %y [[0], [1, 2]] : ${Y} into ${Z}
  %e = tensor.empty() : ${Z}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%z, %s : ${Z}, ${Z}) outs(%e : ${Z}) {
    ^bb0(%p: f64, %q: f64, %out: f64):
      %m = arith.mulf %p, %q : f64
      linalg.yield %m : f64
    } -> ${Z}
  return %r : ${Z}
})",
                {{"X", f64Tensor({a * b, c})},
                 {"Y", f64Tensor({a, b, c})},
                 {"Z", f64Tensor({a, b * c})},
                 {"A", std::to_string(a)},
                 {"B", std::to_string(b)},
                 {"C", std::to_string(c)}}),
          1200 + draw);
    // tensor.reshape with a constant shape.
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}) -> ${Z} {
  %shape = arith.constant dense<[${A}, ${BC}]> : tensor<2xi64>
  %z = tensor.reshape %x(%shape) : (${X}, tensor<2xi64>) -> ${Z}
  return %z : ${Z}
})",
                {{"X", f64Tensor({a * b, c})},
                 {"Z", f64Tensor({a, b * c})},
                 {"A", std::to_string(a)},
                 {"BC", std::to_string(b * c)}}),
          1210 + draw);
    // tensor.reshape that changes the rank: [A*B, C] -> [A, B, C] and
    // [A*B, C] -> [A*B*C] (the gradient's shape constant has the source's
    // rank, not the result's).
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}) -> ${Z} {
  %shape = arith.constant dense<[${A}, ${B}, ${C}]> : tensor<3xi64>
  %z = tensor.reshape %x(%shape) : (${X}, tensor<3xi64>) -> ${Z}
  return %z : ${Z}
})",
                {{"X", f64Tensor({a * b, c})},
                 {"Z", f64Tensor({a, b, c})},
                 {"A", std::to_string(a)},
                 {"B", std::to_string(b)},
                 {"C", std::to_string(c)}}),
          1220 + draw);
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}) -> ${Z} {
  %shape = arith.constant dense<[${ABC}]> : tensor<1xi64>
  %z = tensor.reshape %x(%shape) : (${X}, tensor<1xi64>) -> ${Z}
  return %z : ${Z}
})",
                {{"X", f64Tensor({a * b, c})},
                 {"Z", f64Tensor({a * b * c})},
                 {"ABC", std::to_string(a * b * c)}}),
          1230 + draw);
  }
}

TEST(GradientCheck, LinalgBroadcast) {
  std::mt19937_64 rng(112);
  const char *tmpl = R"(
func.func @main(%x: ${X} {dist.param}) -> ${Y} {
  %e = tensor.empty() : ${Y}
  %b = linalg.broadcast ins(%x : ${X}) outs(%e : ${Y}) dimensions = [${D}]
  return %b : ${Y}
})";
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t m = pick(rng, 1, 5), k = pick(rng, 1, 4), n = pick(rng, 1, 5);
    SCOPED_TRACE(trace("broadcast into " + dims({m, k, n}), draw));
    check(subst(tmpl, {{"X", f64Tensor({n})},
                       {"Y", f64Tensor({m, n})},
                       {"D", "0"}}),
          1300 + draw);
    check(subst(tmpl, {{"X", f64Tensor({m})},
                       {"Y", f64Tensor({m, n})},
                       {"D", "1"}}),
          1310 + draw);
    check(subst(tmpl, {{"X", f64Tensor({m, n})},
                       {"Y", f64Tensor({m, k, n})},
                       {"D", "1"}}),
          1320 + draw);
    check(subst(tmpl, {{"X", f64Tensor({k})},
                       {"Y", f64Tensor({m, k, n})},
                       {"D", "0, 2"}}),
          1330 + draw);
  }
}

TEST(GradientCheck, Concat) {
  std::mt19937_64 rng(113);
  for (int draw = 0; draw < kDraws; ++draw) {
    unsigned rank = static_cast<unsigned>(pick(rng, 1, 3));
    std::vector<int64_t> base = randomShape(rng, rank, 1, 4);
    int64_t dim = pick(rng, 0, rank - 1);
    std::vector<int64_t> a = base, b = base, c = base, y = base;
    a[dim] = pick(rng, 1, 3);
    b[dim] = pick(rng, 1, 3);
    c[dim] = pick(rng, 1, 3);
    y[dim] = a[dim] + b[dim] + c[dim];
    SCOPED_TRACE(trace("concat dim " + std::to_string(dim) + " of " +
                           dims(a) + ", " + dims(b) + ", " + dims(c),
                       draw));
    check(subst(R"(
func.func @main(%a: ${A} {dist.param}, %b: ${B}, %c: ${C} {dist.param}) -> ${Y} {
  %y = tensor.concat dim(${D}) %a, %b, %c : (${A}, ${B}, ${C}) -> ${Y}
  return %y : ${Y}
})",
                {{"A", f64Tensor(a)},
                 {"B", f64Tensor(b)},
                 {"C", f64Tensor(c)},
                 {"Y", f64Tensor(y)},
                 {"D", std::to_string(dim)}}),
          1400 + draw);
  }
}

TEST(GradientCheck, ExtractSlice) {
  std::mt19937_64 rng(114);
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t m = pick(rng, 2, 6), n = pick(rng, 2, 6);
    int64_t s0 = pick(rng, 1, m), s1 = pick(rng, 1, n);
    int64_t o0 = pick(rng, 0, m - s0), o1 = pick(rng, 0, n - s1);
    int64_t r0 = pick(rng, 0, m - 1);
    SCOPED_TRACE(trace("slice [" + list({o0, o1}) + "] [" + list({s0, s1}) +
                           "] of " + dims({m, n}) + ", row " +
                           std::to_string(r0),
                       draw));
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}) -> ${Y} {
  %s = tensor.extract_slice %x[${O0}, ${O1}] [${S0}, ${S1}] [1, 1] : ${X} to ${Y}
  return %s : ${Y}
})",
                {{"X", f64Tensor({m, n})},
                 {"Y", f64Tensor({s0, s1})},
                 {"O0", std::to_string(o0)},
                 {"O1", std::to_string(o1)},
                 {"S0", std::to_string(s0)},
                 {"S1", std::to_string(s1)}}),
          1500 + draw);
    // Rank-reducing: one row.
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}) -> ${Y} {
  %s = tensor.extract_slice %x[${R0}, ${O1}] [1, ${S1}] [1, 1] : ${X} to ${Y}
  return %s : ${Y}
})",
                {{"X", f64Tensor({m, n})},
                 {"Y", f64Tensor({s1})},
                 {"R0", std::to_string(r0)},
                 {"O1", std::to_string(o1)},
                 {"S1", std::to_string(s1)}}),
          1510 + draw);
    // Rank-reducing: part of one column.
    int64_t c0 = pick(rng, 0, n - 1);
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}) -> ${Y} {
  %s = tensor.extract_slice %x[${O0}, ${C0}] [${S0}, 1] [1, 1] : ${X} to ${Y}
  return %s : ${Y}
})",
                {{"X", f64Tensor({m, n})},
                 {"Y", f64Tensor({s0})},
                 {"O0", std::to_string(o0)},
                 {"C0", std::to_string(c0)},
                 {"S0", std::to_string(s0)}}),
          1520 + draw);
  }
}

TEST(GradientCheck, Pad) {
  std::mt19937_64 rng(115);
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t m = pick(rng, 1, 4), n = pick(rng, 1, 4);
    std::vector<int64_t> low = {pick(rng, 0, 2), pick(rng, 0, 2)},
                         high = {pick(rng, 0, 2), pick(rng, 0, 2)};
    std::vector<int64_t> out = {m + low[0] + high[0], n + low[1] + high[1]};
    SCOPED_TRACE(trace("pad " + dims({m, n}) + " low [" + list(low) +
                           "] high [" + list(high) + "]",
                       draw));
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}) -> ${Y} {
  %cst = arith.constant 2.5e-01 : f64
  %p = tensor.pad %x low[${L}] high[${H}] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f64
  } : ${X} to ${Y}
  return %p : ${Y}
})",
                {{"X", f64Tensor({m, n})},
                 {"Y", f64Tensor(out)},
                 {"L", list(low)},
                 {"H", list(high)}}),
          1600 + draw);
  }
}

TEST(GradientCheck, GatherEmbedding) {
  std::mt19937_64 rng(116);
  const char *tmpl = R"(
func.func @main(%table: ${TBL} {dist.param}, %ids: ${IDS}) -> ${Y} {
  %idx = tensor.expand_shape %ids [[0], [1, 2]] output_shape [${B}, ${S}, 1] : ${IDS} into ${IDX}
  %g = tensor.gather %table[%idx] gather_dims([0]) : (${TBL}, ${IDX}) -> ${Y}
  return %g : ${Y}
})";
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t v = pick(rng, 2, 6), d = pick(rng, 1, 4), b = pick(rng, 1, 3),
            s = pick(rng, 2, 5);
    SCOPED_TRACE(trace("embedding " + dims({v, d}) + " at ids " + dims({b, s}),
                       draw));
    CheckOptions options;
    options.intBound = v; // ids in [0, V); with B*S > V rows repeat
    std::string ids = "tensor<" + dims({b, s}) + "xi64>",
                idx = "tensor<" + dims({b, s, 1}) + "xi64>";
    // The gathered unit dim dropped (the importer's form) and kept.
    for (std::vector<int64_t> y :
         {std::vector<int64_t>{b, s, d}, std::vector<int64_t>{b, s, 1, d}})
      check(subst(tmpl, {{"TBL", f64Tensor({v, d})},
                         {"IDS", ids},
                         {"IDX", idx},
                         {"Y", f64Tensor(y)},
                         {"B", std::to_string(b)},
                         {"S", std::to_string(s)}}),
            1700 + draw, options);
    // Positions [N] (indices [N, 1]) into a rank-3 table [V, 2, D].
    int64_t np = b * s;
    check(subst(R"(
func.func @main(%table: ${TBL} {dist.param}, %ids: ${IDS}) -> ${Y} {
  %idx = tensor.expand_shape %ids [[0, 1]] output_shape [${N}, 1] : ${IDS} into ${IDX}
  %g = tensor.gather %table[%idx] gather_dims([0]) : (${TBL}, ${IDX}) -> ${Y}
  return %g : ${Y}
})",
                {{"TBL", f64Tensor({v, 2, d})},
                 {"IDS", "tensor<" + std::to_string(np) + "xi64>"},
                 {"IDX", "tensor<" + dims({np, 1}) + "xi64>"},
                 {"Y", f64Tensor({np, 2, d})},
                 {"N", std::to_string(np)}}),
          1710 + draw, options);
    // ONNX Gather on axis 1: columns of a [D, V] table (gather_dims([1])).
    check(subst(R"(
func.func @main(%table: ${TBL} {dist.param}, %ids: ${IDS}) -> ${Y} {
  %idx = tensor.expand_shape %ids [[0, 1]] output_shape [${N}, 1] : ${IDS} into ${IDX}
  %g = tensor.gather %table[%idx] gather_dims([1]) : (${TBL}, ${IDX}) -> ${Y}
  return %g : ${Y}
})",
                {{"TBL", f64Tensor({d + 1, v})},
                 {"IDS", "tensor<" + std::to_string(np) + "xi64>"},
                 {"IDX", "tensor<" + dims({np, 1}) + "xi64>"},
                 {"Y", f64Tensor({np, d + 1})},
                 {"N", std::to_string(np)}}),
          1720 + draw, options);
  }
}

TEST(GradientCheck, Annotate) {
  std::mt19937_64 rng(117);
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t m = pick(rng, 1, 5), n = pick(rng, 1, 5);
    SCOPED_TRACE(trace("dist.annotate of " + dims({m, n}), draw));
    check(subst(R"(
#mesh = #dist.mesh<[x = 1]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%w: ${T} {dist.param}) -> ${T} {
    %a = dist.annotate %w : ${T} as #dist.layout<#mesh, [[x], []]>
    %e = tensor.empty() : ${T}
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%a : ${T}) outs(%e : ${T}) {
      ^bb0(%p: f64, %out: f64):
        %t = math.tanh %p : f64
        linalg.yield %t : f64
      } -> ${T}
    return %r : ${T}
  }
})",
                {{"T", f64Tensor({m, n})}}),
          1800 + draw);
  }
}

//===----------------------------------------------------------------------===//
// Several uses of one parameter; arith/math on tensors
//===----------------------------------------------------------------------===//

TEST(GradientCheck, ParameterUsedTwice) {
  std::mt19937_64 rng(118);
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t m = pick(rng, 1, 5), n = pick(rng, 1, 5);
    SCOPED_TRACE(trace("w " + dims({n, n}) + ", x " + dims({m, n}), draw));
    std::string w = f64Tensor({n, n}), x = f64Tensor({m, n}),
                id = affineMap(2, {0, 1}), row = affineMap(2, {1});
    // x·w + w[row 0 broadcast]: w feeds a matmul and a generic.
    check(subst(R"(
func.func @main(%x: ${X}, %w: ${W} {dist.param}) -> ${X} {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : ${X}
  %init = linalg.fill ins(%zero : f64) outs(%e : ${X}) -> ${X}
  %h = linalg.matmul ins(%x, %w : ${X}, ${W}) outs(%init : ${X}) -> ${X}
  %d = tensor.extract_slice %w[0, 0] [1, ${N}] [1, 1] : ${W} to tensor<${N}xf64>
  %e2 = tensor.empty() : ${X}
  %r = linalg.generic {indexing_maps = [${ID}, ${ROW}, ${ID}], iterator_types = ["parallel", "parallel"]}
      ins(%h, %d : ${X}, tensor<${N}xf64>) outs(%e2 : ${X}) {
    ^bb0(%a: f64, %b: f64, %out: f64):
      %t = math.tanh %b : f64
      %s = arith.addf %a, %t : f64
      linalg.yield %s : f64
    } -> ${X}
  return %r : ${X}
})",
                {{"X", x},
                 {"W", w},
                 {"N", std::to_string(n)},
                 {"ID", id},
                 {"ROW", row}}),
          1900 + draw);
    // The same value as both inputs of one generic (w * w) and of one
    // tensor op (w + w), then the two combined.
    check(subst(R"(
func.func @main(%w: ${W} {dist.param}) -> ${W} {
  %e = tensor.empty() : ${W}
  %sq = linalg.generic {indexing_maps = [${ID}, ${ID}, ${ID}], iterator_types = ["parallel", "parallel"]}
      ins(%w, %w : ${W}, ${W}) outs(%e : ${W}) {
    ^bb0(%a: f64, %b: f64, %out: f64):
      %m = arith.mulf %a, %b : f64
      linalg.yield %m : f64
    } -> ${W}
  %tw = arith.addf %w, %w : ${W}
  %r = arith.mulf %sq, %tw : ${W}
  return %r : ${W}
})",
                {{"W", w}, {"ID", id}}),
          1910 + draw);
  }
}

TEST(GradientCheck, ArithOnTensors) {
  std::mt19937_64 rng(119);
  for (int draw = 0; draw < kDraws; ++draw) {
    unsigned rank = static_cast<unsigned>(pick(rng, 1, 3));
    std::vector<int64_t> shape = randomShape(rng, rank, 1, 4);
    SCOPED_TRACE(trace("arith on " + dims(shape), draw));
    std::string t = f64Tensor(shape);
    check(subst(R"(
func.func @main(%a: ${T} {dist.param}, %b: ${T} {dist.param}) -> ${T} {
  %r = arith.addf %a, %b : ${T}
  return %r : ${T}
})",
                {{"T", t}}),
          2000 + draw);
    check(subst(R"(
func.func @main(%a: ${T} {dist.param}, %b: ${T} {dist.param}) -> ${T} {
  %r = arith.mulf %a, %b : ${T}
  return %r : ${T}
})",
                {{"T", t}}),
          2010 + draw);
    check(subst(R"(
func.func @main(%a: ${T} {dist.param}, %b: ${T} {dist.param}) -> ${T} {
  %s = arith.addf %a, %b : ${T}
  %m = arith.mulf %s, %a : ${T}
  %d = arith.subf %m, %b : ${T}
  %t = math.tanh %d : ${T}
  %e = math.exp %b : ${T}
  %q = arith.divf %t, %e : ${T}
  %n = arith.negf %q : ${T}
  %r = arith.maximumf %n, %a : ${T}
  return %r : ${T}
})",
                {{"T", t}}),
          2020 + draw);
  }
}

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

TEST(GradientCheck, CrossEntropy) {
  std::mt19937_64 rng(120);
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t b = pick(rng, 1, 3), s = pick(rng, 1, 4), k = pick(rng, 1, 4),
            c = pick(rng, 2, 6);
    SCOPED_TRACE(trace("logits " + dims({b, s, c}) + " from " +
                           dims({b, s, k}) + " x " + dims({k, c}),
                       draw));
    CheckOptions options;
    options.loss = "cross_entropy";
    // The importer's contraction, then a bias: logits [B, S, C], labels
    // [B, S].
    check(subst(R"(
func.func @main(%x: ${X}, %w: ${W} {dist.param}, %bias: ${C} {dist.param}) -> ${Y} {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : ${Y}
  %init = linalg.fill ins(%zero : f64) outs(%e : ${Y}) -> ${Y}
  %h = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : ${X}, ${W}) outs(%init : ${Y}) {
    ^bb0(%in0: f64, %in1: f64, %out: f64):
      %p = arith.mulf %in0, %in1 : f64
      %r = arith.addf %out, %p : f64
      linalg.yield %r : f64
    } -> ${Y}
  %e2 = tensor.empty() : ${Y}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h, %bias : ${Y}, ${C}) outs(%e2 : ${Y}) {
    ^bb0(%a: f64, %bb: f64, %out: f64):
      %r = arith.addf %a, %bb : f64
      linalg.yield %r : f64
    } -> ${Y}
  return %y : ${Y}
})",
                {{"X", f64Tensor({b, s, k})},
                 {"W", f64Tensor({k, c})},
                 {"C", f64Tensor({c})},
                 {"Y", f64Tensor({b, s, c})}}),
          2100 + draw, options);
    // 2-D logits [B*S, C] from a matmul, the classifier of an MLP.
    int64_t n = b * s;
    check(subst(R"(
func.func @main(%x: ${X} {dist.param}, %w: ${W} {dist.param}) -> ${Y} {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : ${Y}
  %init = linalg.fill ins(%zero : f64) outs(%e : ${Y}) -> ${Y}
  %y = linalg.matmul ins(%x, %w : ${X}, ${W}) outs(%init : ${Y}) -> ${Y}
  return %y : ${Y}
})",
                {{"X", f64Tensor({n, k})},
                 {"W", f64Tensor({k, c})},
                 {"Y", f64Tensor({n, c})}}),
          2110 + draw, options);
  }
}

//===----------------------------------------------------------------------===//
// A composite: one attention head with a residual, LayerNorm-free
//===----------------------------------------------------------------------===//

TEST(GradientCheck, AttentionHead) {
  std::mt19937_64 rng(121);
  for (int draw = 0; draw < kDraws; ++draw) {
    int64_t s = pick(rng, 2, 4), e = pick(rng, 2, 4);
    SCOPED_TRACE(trace("attention on " + dims({s, e}), draw));
    // softmax(q kᵀ / sqrt(E)) v, q/k/v = x·w, heads [1, S, E] through
    // expand_shape and batch_matmul, plus x.
    check(subst(R"(
func.func @main(%x: ${SE} {dist.param}, %wq: ${EE} {dist.param}, %wk: ${EE} {dist.param}, %wv: ${EE} {dist.param}) -> ${SE} {
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : ${SE}
  %z0 = linalg.fill ins(%zero : f64) outs(%e0 : ${SE}) -> ${SE}
  %q = linalg.matmul ins(%x, %wq : ${SE}, ${EE}) outs(%z0 : ${SE}) -> ${SE}
  %k = linalg.matmul ins(%x, %wk : ${SE}, ${EE}) outs(%z0 : ${SE}) -> ${SE}
  %v = linalg.matmul ins(%x, %wv : ${SE}, ${EE}) outs(%z0 : ${SE}) -> ${SE}
  %e1 = tensor.empty() : ${ES}
  %kt = linalg.transpose ins(%k : ${SE}) outs(%e1 : ${ES}) permutation = [1, 0]
  %qb = tensor.expand_shape %q [[0, 1], [2]] output_shape [1, ${S}, ${E}] : ${SE} into ${BSE}
  %kb = tensor.expand_shape %kt [[0, 1], [2]] output_shape [1, ${E}, ${S}] : ${ES} into ${BES}
  %e2 = tensor.empty() : ${BSS}
  %z2 = linalg.fill ins(%zero : f64) outs(%e2 : ${BSS}) -> ${BSS}
  %scores = linalg.batch_matmul ins(%qb, %kb : ${BSE}, ${BES}) outs(%z2 : ${BSS}) -> ${BSS}
  %e3 = tensor.empty() : ${BSS}
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%scores : ${BSS}) outs(%e3 : ${BSS}) {
    ^bb0(%a: f64, %out: f64):
      %c = arith.constant ${SCALE} : f64
      %r = arith.mulf %a, %c : f64
      linalg.yield %r : f64
    } -> ${BSS}
  %e4 = tensor.empty() : ${BSS}
  %probs = linalg.softmax dimension(2) ins(%scaled : ${BSS}) outs(%e4 : ${BSS}) -> ${BSS}
  %p2 = tensor.collapse_shape %probs [[0, 1], [2]] : ${BSS} into ${SS}
  %e5 = tensor.empty() : ${SE}
  %z5 = linalg.fill ins(%zero : f64) outs(%e5 : ${SE}) -> ${SE}
  %ctx = linalg.matmul ins(%p2, %v : ${SS}, ${SE}) outs(%z5 : ${SE}) -> ${SE}
  %e6 = tensor.empty() : ${SE}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%ctx, %x : ${SE}, ${SE}) outs(%e6 : ${SE}) {
    ^bb0(%a: f64, %b: f64, %out: f64):
      %r = arith.addf %a, %b : f64
      linalg.yield %r : f64
    } -> ${SE}
  return %y : ${SE}
})",
                {{"SE", f64Tensor({s, e})},
                 {"ES", f64Tensor({e, s})},
                 {"EE", f64Tensor({e, e})},
                 {"SS", f64Tensor({s, s})},
                 {"BSE", f64Tensor({1, s, e})},
                 {"BES", f64Tensor({1, e, s})},
                 {"BSS", f64Tensor({1, s, s})},
                 {"S", std::to_string(s)},
                 {"E", std::to_string(e)},
                 {"SCALE", lit(1.0 / std::sqrt(static_cast<double>(e)))}}),
          2200 + draw);
  }
}
