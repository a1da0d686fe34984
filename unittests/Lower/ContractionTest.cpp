//===- ContractionTest.cpp - Contractions as GEMMs vs the loop nests ------===//
//
// Random multiply-accumulate linalg.generics (any permutation of batch, M, N
// and K dims in every operand, size-1 and empty dims, f32 and f64, inits
// from an argument, a fill or tensor.empty) lowered with and without GEMM
// lowering and run on the CPU backend: the GEMM plan has one Matmul or
// BatchMatmul and no Generic, and both plans agree. Named cases pin down
// which layouts need no packing Transpose.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Lower/ProgramLoader.h"
#include "autoshard/Runtime/Executor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <random>
#include <sstream>

using namespace mlir;
using namespace autoshard;

namespace {

enum Role { InA = 1, InB = 2, InC = 4 };

/// A contraction as loops (ranges, which operands index them) and, per
/// operand, its dims as loop numbers (-1: a constant-0 index, size 1).
struct Contraction {
  std::vector<int64_t> ranges;
  std::vector<std::vector<int64_t>> dims; // A, B, C
  bool f64 = false;
  bool swapMul = false, swapAdd = false;
  enum Init { Arg, Fill, Empty } init = Arg;
};

std::string tensorType(const Contraction &c, int operand) {
  std::string s = "tensor<";
  for (int64_t l : c.dims[operand])
    s += std::to_string(l < 0 ? 1 : c.ranges[l]) + "x";
  return s + (c.f64 ? "f64>" : "f32>");
}

std::string toMlir(const Contraction &c) {
  std::ostringstream os;
  int64_t n = c.ranges.size();
  auto loops = [&] {
    std::string s = "(";
    for (int64_t l = 0; l < n; ++l)
      s += (l ? ", d" : "d") + std::to_string(l);
    return s + ")";
  };
  for (int i = 0; i < 3; ++i) {
    os << "#m" << i << " = affine_map<" << loops() << " -> (";
    for (size_t d = 0; d < c.dims[i].size(); ++d)
      os << (d ? ", " : "")
         << (c.dims[i][d] < 0 ? "0" : "d" + std::to_string(c.dims[i][d]));
    os << ")>\n";
  }
  std::string elem = c.f64 ? "f64" : "f32";
  std::string ta = tensorType(c, 0), tb = tensorType(c, 1),
              tc = tensorType(c, 2);
  os << "func.func @main(%a: " << ta << ", %b: " << tb;
  if (c.init == Contraction::Arg)
    os << ", %c: " << tc;
  os << ") -> " << tc << " {\n";
  if (c.init != Contraction::Arg)
    os << "  %e = tensor.empty() : " << tc << "\n";
  if (c.init == Contraction::Fill)
    os << "  %v = arith.constant 0.5 : " << elem << "\n"
       << "  %c = linalg.fill ins(%v : " << elem << ") outs(%e : " << tc
       << ") -> " << tc << "\n";
  if (c.init == Contraction::Empty)
    os << "  %c = tensor.empty() : " << tc << "\n";
  os << "  %r = linalg.generic {indexing_maps = [#m0, #m1, #m2], "
        "iterator_types = [";
  for (int64_t l = 0; l < n; ++l) {
    bool inC = llvm::is_contained(c.dims[2], l);
    os << (l ? ", " : "") << (inC ? "\"parallel\"" : "\"reduction\"");
  }
  os << "]} ins(%a, %b : " << ta << ", " << tb << ") outs(%c : " << tc
     << ") {\n"
     << "  ^bb0(%x: " << elem << ", %y: " << elem << ", %acc: " << elem
     << "):\n"
     << "    %p = arith.mulf " << (c.swapMul ? "%y, %x" : "%x, %y") << " : "
     << elem << "\n"
     << "    %s = arith.addf " << (c.swapAdd ? "%p, %acc" : "%acc, %p") << " : "
     << elem << "\n"
     << "    linalg.yield %s : " << elem << "\n"
     << "  } -> " << tc << "\n"
     << "  return %r : " << tc << "\n}\n";
  return os.str();
}

/// The contraction `spec` ("bmk,kn->bmn", one letter a loop) with those
/// loop sizes (3 for letters without one).
Contraction fromEinsum(const std::string &spec,
                       const std::map<char, int64_t> &sizes = {}) {
  Contraction c;
  std::string letters;
  for (char ch : spec)
    if (std::isalpha(ch) && letters.find(ch) == std::string::npos)
      letters += ch;
  for (char ch : letters)
    c.ranges.push_back(sizes.count(ch) ? sizes.at(ch) : 3);
  c.dims.resize(3);
  int operand = 0;
  for (char ch : spec) {
    if (ch == ',' || ch == '>')
      ++operand;
    else if (std::isalpha(ch))
      c.dims[operand].push_back(letters.find(ch));
  }
  return c;
}

class ContractionTest : public ::testing::Test {
protected:
  ContractionTest() {
    context.loadDialect<arith::ArithDialect, func::FuncDialect,
                        linalg::LinalgDialect, math::MathDialect,
                        tensor::TensorDialect>();
  }

  OwningOpRef<ModuleOp> parse(const std::string &source) {
    std::string diag;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      llvm::raw_string_ostream(diag) << d << "\n";
      return success();
    });
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diag << source;
    return module;
  }

  rt::Program lower(ModuleOp module, bool gemm) {
    LowerOptions options;
    options.gemmContractions = gemm;
    FailureOr<rt::Program> program = lowerToProgram(module, "", options);
    EXPECT_TRUE(succeeded(program));
    return succeeded(program) ? std::move(*program) : rt::Program();
  }

  static int count(const rt::Program &p, rt::OpKind kind) {
    return std::count_if(
        p.instructions.begin(), p.instructions.end(),
        [&](const rt::Instruction &inst) { return inst.kind == kind; });
  }

  std::vector<rt::Tensor> run(const rt::Program &program,
                              const std::vector<rt::Tensor> &inputs) {
    std::unique_ptr<rt::Backend> backend = rt::createCpuBackend();
    std::unique_ptr<rt::Communicator> comm =
        rt::createLocalCommunicator(program.mesh);
    rt::Executor executor(program, *backend, *comm);
    return executor.run(inputs);
  }

  std::vector<rt::Tensor> randomInputs(const rt::Program &program) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<rt::Tensor> inputs;
    for (const rt::ProgramIO &io : program.inputs) {
      const rt::ValueInfo &info = program.values[io.value];
      rt::Tensor t(info.type, info.shape);
      for (int64_t i = 0; i < t.getNumElements(); ++i)
        t.setFromDouble(i, dist(rng));
      inputs.push_back(t);
    }
    return inputs;
  }

  /// |actual - expected| <= tol (1 + |expected|) elementwise.
  static void compare(const std::vector<rt::Tensor> &expected,
                      const std::vector<rt::Tensor> &actual, double tol,
                      const std::string &context) {
    ASSERT_EQ(expected.size(), actual.size()) << context;
    for (size_t k = 0; k < expected.size(); ++k) {
      ASSERT_EQ(expected[k].getShape(), actual[k].getShape()) << context;
      for (int64_t i = 0; i < expected[k].getNumElements(); ++i) {
        double e = expected[k].getAsDouble(i), a = actual[k].getAsDouble(i);
        ASSERT_LE(std::abs(e - a), tol * (1 + std::abs(e)))
            << "output " << k << " element " << i << ": " << a << " vs " << e
            << "\n"
            << context;
      }
    }
  }

  /// Lowers `source` both ways, runs both on the same random inputs and
  /// compares; returns the GEMM plan.
  rt::Program check(const std::string &source, bool f64,
                    bool expectGemm = true) {
    OwningOpRef<ModuleOp> module = parse(source);
    if (!module)
      return {};
    rt::Program gemm = lower(*module, true);
    rt::Program loops = lower(*module, false);
    EXPECT_EQ(count(gemm, rt::OpKind::Generic), expectGemm ? 0 : 1)
        << source << gemm.str();
    EXPECT_EQ(count(gemm, rt::OpKind::Matmul) +
                  count(gemm, rt::OpKind::BatchMatmul),
              expectGemm ? 1 : 0)
        << source << gemm.str();
    std::vector<rt::Tensor> inputs = randomInputs(loops);
    std::vector<rt::Tensor> expected, actual;
    try {
      expected = run(loops, inputs);
      actual = run(gemm, inputs);
    } catch (const rt::Error &e) {
      ADD_FAILURE() << e.what() << "\n" << source << gemm.str();
      return gemm;
    }
    double tol = f64 ? 1e-12 : 1e-5;
    compare(expected, actual, tol, source + gemm.str());
    return gemm;
  }

  /// A named case (see fromEinsum), checked.
  rt::Program checkEinsum(const std::string &spec,
                          const std::map<char, int64_t> &sizes,
                          Contraction::Init init = Contraction::Arg) {
    Contraction c = fromEinsum(spec, sizes);
    c.init = init;
    return check(toMlir(c), false);
  }

  MLIRContext context;
  std::mt19937 rng{12345};
};

TEST_F(ContractionTest, RandomPermutations) {
  std::uniform_int_distribution<int> coin(0, 1), groupSize(0, 2), pick(0, 9);
  const int64_t sizes[] = {2, 3, 4, 5, 7, 1, 2, 3, 6, 0};
  int checked = 0;
  for (int iter = 0; iter < 400; ++iter) {
    int counts[4];
    for (int &k : counts)
      k = groupSize(rng);
    if (counts[3] == 0 && (counts[1] == 0 || counts[2] == 0))
      continue;
    Contraction c;
    c.f64 = coin(rng);
    c.swapMul = coin(rng);
    c.swapAdd = coin(rng);
    c.init = static_cast<Contraction::Init>(pick(rng) % 3);
    // Loops: batch, M, N, K, then some size-1 loops in any operands.
    std::vector<unsigned> roles;
    const unsigned groupRoles[4] = {InA | InB | InC, InA | InC, InB | InC,
                                    InA | InB};
    for (int g = 0; g < 4; ++g)
      for (int k = 0; k < counts[g]; ++k)
        roles.push_back(groupRoles[g]);
    int extra = pick(rng) < 3 ? 1 : 0;
    for (int k = 0; k < extra; ++k)
      roles.push_back(1 + pick(rng) % 7);
    std::shuffle(roles.begin(), roles.end(), rng);
    int64_t total = 1;
    bool present[8] = {};
    for (unsigned role : roles) {
      int64_t size = sizes[pick(rng)];
      if (size == 0 && pick(rng) < 7)
        size = 2; // empty dims: sometimes
      if (role != (InA | InB | InC) && role != (InA | InC) &&
          role != (InB | InC) && role != (InA | InB))
        size = 1;
      c.ranges.push_back(size);
      total *= std::max<int64_t>(size, 1);
      present[role] |= size != 1;
    }
    // Without K loops or both M and N loops (of size > 1) it is an
    // elementwise multiply-add, with batch loops but no M or N loops a
    // batched dot product: left to the loop-nest evaluator.
    bool m = present[InA | InC], n = present[InB | InC];
    bool gemm = (present[InA | InB] || (m && n)) &&
                !(present[InA | InB | InC] && !m && !n);
    if (total > 20000)
      continue;
    c.dims.resize(3);
    for (int i = 0; i < 3; ++i) {
      for (size_t l = 0; l < roles.size(); ++l)
        if (roles[l] & (1u << i))
          c.dims[i].push_back(l);
      std::shuffle(c.dims[i].begin(), c.dims[i].end(), rng);
      if (pick(rng) == 0) // a constant-0 index on a size-1 dim
        c.dims[i].insert(c.dims[i].begin() + pick(rng) % (c.dims[i].size() + 1),
                         -1);
    }
    SCOPED_TRACE("case " + std::to_string(iter));
    check(toMlir(c), c.f64, gemm);
    ++checked;
    if (HasFatalFailure() || HasFailure())
      return;
  }
  EXPECT_GT(checked, 250);
}

/// The importer's rank-3 x rank-2 MatMul: one GEMM over batch x seq rows.
TEST_F(ContractionTest, ImporterMatMul) {
  rt::Program p =
      checkEinsum("bsk,kn->bsn", {{'b', 3}, {'s', 4}, {'k', 5}, {'n', 6}});
  EXPECT_EQ(count(p, rt::OpKind::Matmul), 1);
  EXPECT_EQ(count(p, rt::OpKind::Transpose), 0);
}

/// Attention scores Q K^T and the weighted values: strided-batched GEMMs,
/// the transposed K folded into transB.
TEST_F(ContractionTest, Attention) {
  std::map<char, int64_t> sizes = {
      {'b', 2}, {'h', 3}, {'q', 4}, {'k', 5}, {'d', 6}};
  rt::Program qk = checkEinsum("bhqd,bhkd->bhqk", sizes);
  EXPECT_EQ(count(qk, rt::OpKind::BatchMatmul), 1);
  EXPECT_EQ(count(qk, rt::OpKind::Transpose), 0);
  for (const rt::Instruction &inst : qk.instructions)
    if (inst.kind == rt::OpKind::BatchMatmul)
      EXPECT_TRUE(!inst.transA && inst.transB);
  rt::Program av = checkEinsum("bhqk,bhkd->bhqd", sizes);
  EXPECT_EQ(count(av, rt::OpKind::BatchMatmul), 1);
  EXPECT_EQ(count(av, rt::OpKind::Transpose), 0);
  // Heads merged back into the sequence (bhsd -> bshd): the result is
  // packed once; the fill init is made in the packed order.
  rt::Program merged = checkEinsum("bhqk,bhkd->bqhd", sizes, Contraction::Fill);
  EXPECT_EQ(count(merged, rt::OpKind::Transpose), 1);
  rt::Program mergedArg = checkEinsum("bhqk,bhkd->bqhd", sizes);
  EXPECT_EQ(count(mergedArg, rt::OpKind::Transpose), 2);
}

/// The training step's backward contractions: dX = dY W^T and
/// dW = X^T dY over batch x seq, and a C held as [N][M] (B^T A^T).
TEST_F(ContractionTest, Backward) {
  std::map<char, int64_t> sizes = {{'b', 2}, {'s', 3}, {'k', 4}, {'n', 5}};
  for (const char *spec : {"bsn,kn->bsk", "bsk,bsn->kn", "kn,bsn->bsk",
                           "bsn,bsk->nk", "sk,nk->ns", "s,s->"}) {
    SCOPED_TRACE(spec);
    rt::Program p = checkEinsum(spec, sizes);
    EXPECT_EQ(count(p, rt::OpKind::Transpose), 0) << p.str();
  }
}

/// Operands whose dims interleave the groups are packed once each.
TEST_F(ContractionTest, Interleaved) {
  rt::Program p =
      checkEinsum("mkb,bnk->nbm", {{'b', 2}, {'m', 3}, {'k', 4}, {'n', 5}});
  EXPECT_EQ(count(p, rt::OpKind::BatchMatmul), 1);
  EXPECT_LE(count(p, rt::OpKind::Transpose), 4);
}

/// Named linalg contractions reach the same lowering.
TEST_F(ContractionTest, NamedOps) {
  const char *source = R"mlir(
#ta = affine_map<(m, n, k) -> (k, m)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @main(%a: tensor<5x3xf32>, %b: tensor<5x4xf32>, %c: tensor<3x4xf32>,
                %v: tensor<4xf32>, %w: tensor<3xf32>, %x: tensor<5xf32>,
                %y: tensor<5xf32>, %s: tensor<f32>)
    -> (tensor<3x4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>,
        tensor<3x4xf32>) {
  %0 = linalg.matmul indexing_maps = [#ta, #b, #c]
      ins(%a, %b : tensor<5x3xf32>, tensor<5x4xf32>)
      outs(%c : tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = linalg.matvec ins(%c, %v : tensor<3x4xf32>, tensor<4xf32>)
      outs(%w : tensor<3xf32>) -> tensor<3xf32>
  %2 = linalg.vecmat ins(%w, %c : tensor<3xf32>, tensor<3x4xf32>)
      outs(%v : tensor<4xf32>) -> tensor<4xf32>
  %3 = linalg.dot ins(%x, %y : tensor<5xf32>, tensor<5xf32>)
      outs(%s : tensor<f32>) -> tensor<f32>
  %4 = linalg.contract indexing_maps = [#ta, #b, #c]
      ins(%a, %b : tensor<5x3xf32>, tensor<5x4xf32>)
      outs(%c : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0, %1, %2, %3, %4
      : tensor<3x4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>,
        tensor<3x4xf32>
}
)mlir";
  OwningOpRef<ModuleOp> module = parse(source);
  ASSERT_TRUE(module);
  rt::Program gemm = lower(*module, true);
  EXPECT_EQ(count(gemm, rt::OpKind::Generic), 0) << gemm.str();
  EXPECT_EQ(count(gemm, rt::OpKind::Matmul), 5) << gemm.str();
  EXPECT_EQ(count(gemm, rt::OpKind::Transpose), 0) << gemm.str();
  rt::Program loops = lower(*module, false);
  std::vector<rt::Tensor> inputs = randomInputs(loops);
  std::vector<rt::Tensor> expected = run(loops, inputs),
                          actual = run(gemm, inputs);
  compare(expected, actual, 1e-5, gemm.str());
}

/// Multiply-adds that are not matrix products, and batched dot products
/// (a GEMM call per row), stay loop nests.
TEST_F(ContractionTest, NotContractions) {
  for (const char *spec : {"ij,ij->ij", "ij,j->ij", "ik,ik->ik", "bk,bk->b"}) {
    OwningOpRef<ModuleOp> module = parse(toMlir(fromEinsum(spec)));
    ASSERT_TRUE(module);
    rt::Program p = lower(*module, true);
    EXPECT_EQ(count(p, rt::OpKind::Generic), 1) << spec;
    EXPECT_EQ(count(p, rt::OpKind::Matmul), 0) << spec;
  }
  // A sum over a dim of A alone is no GEMM either.
  Contraction c;
  c.ranges = {3, 5};
  c.dims = {{0, 1}, {0}, {0}};
  OwningOpRef<ModuleOp> module = parse(toMlir(c));
  ASSERT_TRUE(module);
  EXPECT_EQ(count(lower(*module, true), rt::OpKind::Generic), 1);
}

} // namespace

/// linalg.transposes read only by contractions fold into them: a K^T
/// into transB, a weight's transpose into a generic contraction, one into a
/// plain batch_matmul; a transpose also read by a non-contraction runs.
TEST_F(ContractionTest, FoldedTransposes) {
  const char *source = R"mlir(
#x = affine_map<(b, s, n, k) -> (b, s, k)>
#w = affine_map<(b, s, n, k) -> (k, n)>
#xw = affine_map<(b, s, n, k) -> (b, s, n)>
func.func @main(%q: tensor<6x4x8xf32>, %k: tensor<6x5x8xf32>,
                %x: tensor<2x3x4xf32>, %w: tensor<5x4xf32>,
                %y: tensor<6x8x4xf32>, %u: tensor<4x6xf32>)
    -> (tensor<6x4x5xf32>, tensor<2x3x5xf32>, tensor<6x4x4xf32>,
        tensor<6x4xf32>, tensor<6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<6x8x5xf32>
  %kt = linalg.transpose ins(%k : tensor<6x5x8xf32>)
      outs(%e0 : tensor<6x8x5xf32>) permutation = [0, 2, 1]
  %e1 = tensor.empty() : tensor<6x4x5xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<6x4x5xf32>)
      -> tensor<6x4x5xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<6x4x8xf32>, tensor<6x8x5xf32>)
      outs(%z1 : tensor<6x4x5xf32>) -> tensor<6x4x5xf32>
  %e2 = tensor.empty() : tensor<4x5xf32>
  %wt = linalg.transpose ins(%w : tensor<5x4xf32>)
      outs(%e2 : tensor<4x5xf32>) permutation = [1, 0]
  %e3 = tensor.empty() : tensor<2x3x5xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x3x5xf32>)
      -> tensor<2x3x5xf32>
  %r = linalg.generic {indexing_maps = [#x, #w, #xw],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wt : tensor<2x3x4xf32>, tensor<4x5xf32>)
      outs(%z3 : tensor<2x3x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x3x5xf32>
  // Y^T Y: both inputs the same transpose, both in place.
  %e4 = tensor.empty() : tensor<6x4x8xf32>
  %yt = linalg.transpose ins(%y : tensor<6x8x4xf32>)
      outs(%e4 : tensor<6x4x8xf32>) permutation = [0, 2, 1]
  %e5 = tensor.empty() : tensor<6x4x4xf32>
  %z5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<6x4x4xf32>)
      -> tensor<6x4x4xf32>
  %g = linalg.batch_matmul ins(%yt, %y : tensor<6x4x8xf32>, tensor<6x8x4xf32>)
      outs(%z5 : tensor<6x4x4xf32>) -> tensor<6x4x4xf32>
  // Also returned: the transpose runs.
  %e6 = tensor.empty() : tensor<6x4xf32>
  %ut = linalg.transpose ins(%u : tensor<4x6xf32>)
      outs(%e6 : tensor<6x4xf32>) permutation = [1, 0]
  %e7 = tensor.empty() : tensor<6x6xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<6x6xf32>)
      -> tensor<6x6xf32>
  %uu = linalg.matmul ins(%ut, %u : tensor<6x4xf32>, tensor<4x6xf32>)
      outs(%z7 : tensor<6x6xf32>) -> tensor<6x6xf32>
  return %s, %r, %g, %ut, %uu
      : tensor<6x4x5xf32>, tensor<2x3x5xf32>, tensor<6x4x4xf32>,
        tensor<6x4xf32>, tensor<6x6xf32>
}
)mlir";
  OwningOpRef<ModuleOp> module = parse(source);
  ASSERT_TRUE(module);
  rt::Program gemm = lower(*module, true);
  EXPECT_EQ(count(gemm, rt::OpKind::Transpose), 1) << gemm.str();
  EXPECT_EQ(count(gemm, rt::OpKind::Generic), 0) << gemm.str();
  rt::Program loops = lower(*module, false);
  EXPECT_EQ(count(loops, rt::OpKind::Transpose), 4) << loops.str();
  std::vector<rt::Tensor> inputs = randomInputs(loops);
  compare(run(loops, inputs), run(gemm, inputs), 1e-5, gemm.str());
}

/// --dist-mixed-precision's contractions: bf16/f16 inputs extended in the
/// body, f32 init and result (named ops and generics) are one GEMM each with
/// A and B of the 2-byte type and C f32, equal to the loop nests' FP32
/// accumulation of the same inputs; a dist.tf32 op sets the GEMM's tf32.
TEST_F(ContractionTest, MixedPrecision) {
  for (const char *low : {"bf16", "f16"}) {
    SCOPED_TRACE(low);
    std::string source = R"mlir(
#x = affine_map<(b, s, n, k) -> (b, s, k)>
#w = affine_map<(b, s, n, k) -> (k, n)>
#xw = affine_map<(b, s, n, k) -> (b, s, n)>
func.func @main(%a: tensor<6x5xLOW>, %b: tensor<5x4xLOW>, %c: tensor<6x4xf32>,
                %x: tensor<2x3x5xLOW>, %w: tensor<5x4xLOW>,
                %d: tensor<2x3x4xf32>, %q: tensor<2x4x5xLOW>)
    -> (tensor<6x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %0 = linalg.matmul {dist.tf32} ins(%a, %b : tensor<6x5xLOW>, tensor<5x4xLOW>)
      outs(%c : tensor<6x4xf32>) -> tensor<6x4xf32>
  %1 = linalg.generic {indexing_maps = [#x, #w, #xw],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x3x5xLOW>, tensor<5x4xLOW>)
      outs(%d : tensor<2x3x4xf32>) {
  ^bb0(%u: LOW, %v: LOW, %acc: f32):
    %eu = arith.extf %u : LOW to f32
    %ev = arith.extf %v : LOW to f32
    %p = arith.mulf %eu, %ev : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  %e = tensor.empty() : tensor<2x5x4xLOW>
  %t = linalg.transpose ins(%q : tensor<2x4x5xLOW>) outs(%e : tensor<2x5x4xLOW>)
      permutation = [0, 2, 1]
  %2 = linalg.batch_matmul ins(%x, %t : tensor<2x3x5xLOW>, tensor<2x5x4xLOW>)
      outs(%d : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1, %2 : tensor<6x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
)mlir";
    for (size_t at; (at = source.find("LOW")) != std::string::npos;)
      source.replace(at, 3, low);
    OwningOpRef<ModuleOp> module = parse(source);
    ASSERT_TRUE(module);
    rt::Program gemm = lower(*module, true);
    EXPECT_EQ(count(gemm, rt::OpKind::Generic), 0) << gemm.str();
    EXPECT_EQ(count(gemm, rt::OpKind::Transpose), 0) << gemm.str();
    EXPECT_EQ(count(gemm, rt::OpKind::Matmul), 2) << gemm.str();
    EXPECT_EQ(count(gemm, rt::OpKind::BatchMatmul), 1) << gemm.str();
    rt::DType lowType =
        std::string(low) == "bf16" ? rt::DType::BF16 : rt::DType::F16;
    int tf32 = 0;
    for (const rt::Instruction &inst : gemm.instructions) {
      if (inst.kind != rt::OpKind::Matmul &&
          inst.kind != rt::OpKind::BatchMatmul)
        continue;
      tf32 += inst.tf32;
      EXPECT_EQ(gemm.values[inst.operands[0]].type, lowType);
      EXPECT_EQ(gemm.values[inst.operands[1]].type, lowType);
      EXPECT_EQ(gemm.values[inst.operands[2]].type, rt::DType::F32);
      EXPECT_EQ(gemm.values[inst.results[0]].type, rt::DType::F32);
    }
    EXPECT_EQ(tf32, 1);
    rt::Program loops = lower(*module, false);
    std::vector<rt::Tensor> inputs = randomInputs(loops);
    compare(run(loops, inputs), run(gemm, inputs), 1e-5, gemm.str());
  }
}
