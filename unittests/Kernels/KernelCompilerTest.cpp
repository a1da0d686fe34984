//===- KernelCompilerTest.cpp - Compiled kernels against the interpreter --===//
//
// Every kind of loop nest is lowered twice, with interpreted and with compiled
// kernels, run with the same seeded inputs, and compared. Shapes are drawn at
// random (fixed seed). Each kind runs for two targets:
//  - cpu: the native library (KernelCompiler.h) on the CPU executor, bit for
//    bit with the interpreter (math functions included: both evaluate them
//    in double and round);
//  - cuda: the generated PTX (GpuKernelCompiler.h). Everywhere: every loop
//    nest gets a PTX kernel and the module assembles with ptxas -arch=sm_90
//    (that part skipped, with a message, without ptxas). With a GPU: the
//    kernels run on the CUDA backend against the CPU interpreter, bit for
//    bit for + - * / (IEEE, no contraction), reductions (sequential in loop
//    order) and integers; within 1 ulp for f32 math functions (libdevice in
//    double, rounded to f32: the double results may differ from libm's in
//    the last double bit, which can move the f32 rounding by one).
//
//===----------------------------------------------------------------------===//

#include "autoshard/Lower/GpuKernelCompiler.h"
#include "autoshard/Lower/KernelCompiler.h"
#include "autoshard/Lower/ProgramLoader.h"
#include "autoshard/Runtime/Backend.h"
#include "autoshard/Runtime/Communicator.h"
#include "autoshard/Runtime/CudaBackend.h"
#include "autoshard/Runtime/Executor.h"
#include "autoshard/Runtime/HostIO.h"
#include "autoshard/Runtime/KernelLibrary.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

using namespace mlir;
using namespace autoshard;

namespace {

/// A cache directory for this process, removed at exit.
struct CacheDir : ::testing::Environment {
  static std::string &path() {
    static std::string p;
    return p;
  }
  void SetUp() override {
    SmallString<128> dir;
    ASSERT_FALSE(
        llvm::sys::fs::createUniqueDirectory("autoshard-kernels", dir));
    path() = std::string(dir);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(path()); }
};
const auto *cacheEnv = ::testing::AddGlobalTestEnvironment(new CacheDir);

/// `text` with every "$X" replaced by vars[X].
std::string subst(std::string text,
                  const std::vector<std::pair<std::string, int64_t>> &vars) {
  for (const auto &[name, value] : vars) {
    std::string key = "$" + name;
    for (size_t pos; (pos = text.find(key)) != std::string::npos;)
      text.replace(pos, key.size(), std::to_string(value));
  }
  return text;
}

/// `text` with every "$T" replaced by `type`.
std::string substType(std::string text, const std::string &type) {
  for (size_t pos; (pos = text.find("$T")) != std::string::npos;)
    text.replace(pos, 2, type);
  return text;
}

struct Lowered {
  std::string diagnostics;
  FailureOr<rt::Program> program = failure();
};

class KernelTest : public ::testing::Test {
protected:
  KernelTest() {
    context.loadDialect<arith::ArithDialect, func::FuncDialect,
                        linalg::LinalgDialect, math::MathDialect,
                        tensor::TensorDialect>();
  }

  OwningOpRef<ModuleOp> parse(const std::string &text) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    return module;
  }

  Lowered lower(ModuleOp module, KernelMode mode, bool fuse = false,
                std::string cacheDir = "", bool gpu = false) {
    Lowered out;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      llvm::raw_string_ostream os(out.diagnostics);
      os << d << "\n";
      return success();
    });
    LowerOptions options;
    options.kernels.mode = mode;
    options.kernels.fuse = fuse;
    options.kernels.compileThreshold = 1;
    options.kernels.cacheDir = cacheDir.empty() ? CacheDir::path() : cacheDir;
    options.kernels.gpu = gpu;
    out.program = lowerToProgram(module, "", options);
    return out;
  }

  /// Runs `program` on seeded inputs on the CPU, or on GPU 0 with `cuda`
  /// (inputs uploaded, outputs downloaded).
  static std::vector<rt::Tensor> run(const rt::Program &program, uint64_t seed,
                                     bool cuda = false) {
    std::unique_ptr<rt::Backend> backend =
        cuda ? rt::createCudaBackend(0) : rt::createCpuBackend();
    std::unique_ptr<rt::Communicator> comm =
        rt::createLocalCommunicator(program.mesh);
    rt::Executor executor(program, *backend, *comm);
    std::vector<rt::Tensor> inputs;
    for (size_t i = 0; i < program.inputs.size(); ++i) {
      const rt::ValueInfo &info = program.values[program.inputs[i].value];
      rt::Tensor t = rt::makeSeededTensor(info.type, info.shape, seed, i);
      inputs.push_back(cuda ? backend->upload(t) : std::move(t));
    }
    std::vector<rt::Tensor> outputs = executor.run(inputs);
    if (cuda)
      for (rt::Tensor &t : outputs)
        t = backend->download(t);
    return outputs;
  }

  /// Generic instructions with (compiled) or without a CPU or CUDA kernel.
  static int countGenerics(const rt::Program &p, bool compiled) {
    int n = 0;
    for (const rt::Instruction &inst : p.instructions)
      if (inst.kind == rt::OpKind::Generic &&
          (inst.generic->kernel.empty() && inst.generic->gpuKernel.empty()) !=
              compiled)
        ++n;
    return n;
  }

  /// Assembles `ptx` with the toolkit's ptxas for sm_90 (a skip message
  /// without one).
  static void assemble(const std::string &ptx) {
    std::string ptxas = "/usr/local/cuda/bin/ptxas";
    if (const char *home = std::getenv("CUDA_HOME"); home && *home)
      ptxas = std::string(home) + "/bin/ptxas";
    if (!llvm::sys::fs::can_execute(ptxas)) {
      static bool said = false;
      if (!said)
        llvm::errs() << "note: no " << ptxas
                     << ": generated PTX not assembled\n";
      said = true;
      return;
    }
    std::string stem = CacheDir::path() + "/kernels";
    std::string in = stem + ".ptx", out = stem + ".cubin", log = stem + ".log";
    std::ofstream(in) << ptx;
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                            StringRef(log)};
    int rc = llvm::sys::ExecuteAndWait(
        ptxas, {ptxas, "-arch=sm_90", in, "-o", out}, std::nullopt,
        redirects);
    std::string text;
    if (auto buf = llvm::MemoryBuffer::getFile(log))
      text = (*buf)->getBuffer().str();
    EXPECT_EQ(rc, 0) << "ptxas failed:\n" << text << "\n" << ptx;
  }

  /// Units in the last place between two floats of the same type.
  static int64_t ulps(double a, double b, bool f32) {
    if (a == b || (std::isnan(a) && std::isnan(b)))
      return 0;
    if (f32) {
      float fa = a, fb = b;
      int32_t ia, ib;
      std::memcpy(&ia, &fa, 4);
      std::memcpy(&ib, &fb, 4);
      if (ia < 0)
        ia = INT32_MIN - ia;
      if (ib < 0)
        ib = INT32_MIN - ib;
      return std::llabs(static_cast<int64_t>(ia) - ib);
    }
    int64_t ia, ib;
    std::memcpy(&ia, &a, 8);
    std::memcpy(&ib, &b, 8);
    if (ia < 0)
      ia = INT64_MIN - ia;
    if (ib < 0)
      ib = INT64_MIN - ib;
    return std::llabs(ia - ib);
  }

  /// Lowers `text` interpreted and compiled (optionally fused), runs both
  /// and compares every output within `maxUlps` (0: bit-exact). Returns the
  /// compiled program for further checks.
  rt::Program check(const std::string &text, int64_t maxUlps = 0,
                    bool fuse = false, int expectCompiled = -1,
                    int expectInterpreted = 0) {
    OwningOpRef<ModuleOp> module = parse(text);
    if (!module)
      return {};
    Lowered ref = lower(*module, KernelMode::Interpreted);
    Lowered fast = lower(*module, KernelMode::Compiled, fuse, "", gpu);
    EXPECT_TRUE(succeeded(ref.program)) << ref.diagnostics;
    EXPECT_TRUE(succeeded(fast.program)) << fast.diagnostics;
    if (failed(ref.program) || failed(fast.program))
      return {};
    EXPECT_TRUE(ref.program->kernelLibrary.empty());
    if (gpu) {
      EXPECT_TRUE(fast.program->kernelLibrary.empty());
      EXPECT_FALSE(fast.program->gpuModule.empty()) << text;
      assemble(fast.program->gpuModule);
      if (!rt::isCudaAvailable()) {
        static bool said = false;
        if (!said)
          llvm::errs() << "note: generated CUDA kernels not run: "
                       << rt::getCudaUnavailableReason() << "\n";
        said = true;
      }
    } else {
      EXPECT_FALSE(fast.program->kernelLibrary.empty()) << text;
    }
    EXPECT_EQ(countGenerics(*ref.program, true), 0);
    if (expectCompiled >= 0)
      EXPECT_EQ(countGenerics(*fast.program, true), expectCompiled)
          << fast.program->str();
    EXPECT_EQ(countGenerics(*fast.program, false), expectInterpreted)
        << fast.program->str();
    if (gpu && !rt::isCudaAvailable())
      return std::move(*fast.program);
    if (gpu)
      maxUlps = std::max(maxUlps, gpuMathUlps);
    for (uint64_t seed : {1, 2}) {
      std::vector<rt::Tensor> a = run(*ref.program, seed);
      std::vector<rt::Tensor> b = run(*fast.program, seed, gpu);
      EXPECT_EQ(a.size(), b.size());
      for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
        EXPECT_EQ(a[k].getTypeString(), b[k].getTypeString());
        if (a[k].getTypeString() != b[k].getTypeString())
          continue;
        bool isFloat = rt::isFloatDType(a[k].getDType());
        bool f32 = a[k].getDType() == rt::DType::F32;
        int64_t worst = 0, bad = 0;
        for (int64_t i = 0; i < a[k].getNumElements(); ++i) {
          int64_t d = isFloat
                          ? ulps(a[k].getAsDouble(i), b[k].getAsDouble(i), f32)
                          : (a[k].getAsInt(i) != b[k].getAsInt(i));
          worst = std::max(worst, d);
          // Chains of libm calls: an error of maxUlps ulps of 1 is fine
          // where cancellation made the result small.
          if (d > maxUlps && isFloat &&
              std::fabs(a[k].getAsDouble(i) - b[k].getAsDouble(i)) <=
                  maxUlps * (f32 ? 0x1p-23 : 0x1p-52))
            d = 0;
          if (d > maxUlps && bad++ < 3)
            ADD_FAILURE() << "output " << k << " element " << i
                          << ": interpreted " << a[k].getAsDouble(i)
                          << ", compiled " << b[k].getAsDouble(i) << " (" << d
                          << " ulps)\n"
                          << text;
        }
      }
    }
    return std::move(*fast.program);
  }

  /// check() compiles for the CUDA backend (KernelKindTest's "cuda").
  bool gpu = false;
  /// The tolerance check() allows on the GPU (tests with math functions).
  int64_t gpuMathUlps = 0;
  std::mt19937 rng{20261126};
  int64_t dim(int64_t lo = 1, int64_t hi = 37) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  MLIRContext context;
};

/// The kernel kinds, for the CPU library and for the CUDA kernels.
class KernelKindTest : public KernelTest,
                       public ::testing::WithParamInterface<std::string> {
protected:
  void SetUp() override { gpu = GetParam() == "cuda"; }
};

//===----------------------------------------------------------------------===//
// Kernel kinds
//===----------------------------------------------------------------------===//

TEST_P(KernelKindTest, BinaryArithmeticMultiOutputExact) {
  const char *text = R"(
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: tensor<$Mx$Nx$T>, %b: tensor<$Mx$Nx$T>)
    -> (tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>) {
  %e = tensor.empty() : tensor<$Mx$Nx$T>
  %r:4 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id],
      iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>)
      outs(%e, %e, %e, %e : tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>) {
  ^bb0(%x: $T, %y: $T, %o0: $T, %o1: $T, %o2: $T, %o3: $T):
    %s = arith.addf %x, %y : $T
    %d = arith.subf %x, %y : $T
    %m = arith.mulf %x, %y : $T
    %q = arith.divf %s, %y : $T
    linalg.yield %s, %d, %m, %q : $T, $T, $T, $T
  } -> (tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>)
  return %r#0, %r#1, %r#2, %r#3 : tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>
}
)";
  // bf16/f16: f32 arithmetic rounded to the type (HalfEmulation.h).
  for (const char *type : {"f32", "f64", "bf16", "f16"})
    for (int rep = 0; rep < 2; ++rep)
      check(substType(subst(text, {{"M", dim()}, {"N", dim()}}), type), 0,
            false, 1);
}

TEST_P(KernelKindTest, UnaryMathWithinUlps) {
  const char *text = R"(
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @main(%a: tensor<$Ax$Bx$Cxf32>) -> ($TYPES) {
  %e = tensor.empty() : tensor<$Ax$Bx$Cxf32>
  %r:6 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id, #id],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<$Ax$Bx$Cxf32>) outs(%e, %e, %e, %e, %e, %e : $TYPES) {
  ^bb0(%x: f32, %o0: f32, %o1: f32, %o2: f32, %o3: f32, %o4: f32, %o5: f32):
    %ex = math.exp %x : f32
    %th = math.tanh %x : f32
    %er = math.erf %x : f32
    %ab = math.absf %x : f32
    %sq = math.sqrt %ab : f32
    %lg = math.log %ab : f32
    %rs = math.rsqrt %ab : f32
    linalg.yield %ex, %th, %er, %sq, %lg, %rs : f32, f32, f32, f32, f32, f32
  } -> ($TYPES)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : $TYPES
}
)";
  // Both evaluate f32 math functions in double and round to f32.
  gpuMathUlps = 1;
  for (int rep = 0; rep < 2; ++rep) {
    std::string t = subst(text, {{"A", dim(1, 5)}, {"B", dim()}, {"C", dim()}});
    size_t at = t.find("tensor<");
    std::string one = t.substr(at, t.find('>', at) - at + 1);
    std::string types = one;
    for (int k = 1; k < 6; ++k)
      types += ", " + one;
    for (size_t pos; (pos = t.find("$TYPES")) != std::string::npos;)
      t.replace(pos, 6, types);
    check(t, 0, false, 1);
  }
}

TEST_P(KernelKindTest, BroadcastExact) {
  const char *text = R"(
func.func @main(%row: tensor<$Nxf32>, %col: tensor<$Mxf32>, %x: tensor<$Mx$Nxf32>) -> tensor<$Mx$Nxf32> {
  %e = tensor.empty() : tensor<$Mx$Nxf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i)>,
      affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%row, %col, %x : tensor<$Nxf32>, tensor<$Mxf32>, tensor<$Mx$Nxf32>) outs(%e : tensor<$Mx$Nxf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.subf %m, %b : f32
    linalg.yield %s : f32
  } -> tensor<$Mx$Nxf32>
  return %r : tensor<$Mx$Nxf32>
}
)";
  for (int rep = 0; rep < 3; ++rep) {
    rt::Program p = check(subst(text, {{"M", dim()}, {"N", dim()}}), 0, false, 1);
    // a * c - b stays two roundings (no fma contraction).
    if (gpu)
      EXPECT_EQ(p.gpuModule.find("fma.rn"), std::string::npos) << p.gpuModule;
  }
}

TEST_P(KernelKindTest, ReductionsInnerAndOuterExact) {
  const char *text = R"(
func.func @main(%x: tensor<$Mx$Nxf32>) -> (tensor<$Mxf32>, tensor<$Nxf32>, tensor<$Mxf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %em = tensor.empty() : tensor<$Mxf32>
  %en = tensor.empty() : tensor<$Nxf32>
  %zm = linalg.fill ins(%zero : f32) outs(%em : tensor<$Mxf32>) -> tensor<$Mxf32>
  %zn = linalg.fill ins(%zero : f32) outs(%en : tensor<$Nxf32>) -> tensor<$Nxf32>
  %im = linalg.fill ins(%ninf : f32) outs(%em : tensor<$Mxf32>) -> tensor<$Mxf32>
  %inner = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<$Mx$Nxf32>) outs(%zm : tensor<$Mxf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<$Mxf32>
  %outer = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
      iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<$Mx$Nxf32>) outs(%zn : tensor<$Nxf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<$Nxf32>
  %max = linalg.reduce ins(%x : tensor<$Mx$Nxf32>) outs(%im : tensor<$Mxf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %m = arith.maximumf %a, %acc : f32
      linalg.yield %m : f32
    }
  return %inner, %outer, %max : tensor<$Mxf32>, tensor<$Nxf32>, tensor<$Mxf32>
}
)";
  for (int rep = 0; rep < 3; ++rep) {
    int64_t m = dim(), n = dim(1, 300);
    rt::Program p = check(subst(text, {{"M", m}, {"N", n}}), 0, false, 3);
    if (!gpu)
      continue;
    // One thread per point of the parallel dims, wherever they are.
    std::vector<int64_t> threads;
    for (const rt::Instruction &inst : p.instructions)
      if (inst.kind == rt::OpKind::Generic)
        threads.push_back(inst.generic->gpuThreads);
    EXPECT_EQ(threads, (std::vector<int64_t>{m, n, m}));
  }
}

TEST_P(KernelKindTest, IntegersCompareSelectExact) {
  const char *text = R"(
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<$Nxi32>, %b: tensor<$Nxi64>, %p: tensor<$Nxi1>, %x: tensor<$Nxf32>)
    -> (tensor<$Nxi32>, tensor<$Nxi64>, tensor<$Nxi1>, tensor<$Nxf32>) {
  %e32 = tensor.empty() : tensor<$Nxi32>
  %e64 = tensor.empty() : tensor<$Nxi64>
  %e1 = tensor.empty() : tensor<$Nxi1>
  %ef = tensor.empty() : tensor<$Nxf32>
  %r:4 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id, #id, #id],
      iterator_types = ["parallel"]}
      ins(%a, %b, %p, %x : tensor<$Nxi32>, tensor<$Nxi64>, tensor<$Nxi1>, tensor<$Nxf32>)
      outs(%e32, %e64, %e1, %ef : tensor<$Nxi32>, tensor<$Nxi64>, tensor<$Nxi1>, tensor<$Nxf32>) {
  ^bb0(%ia: i32, %ib: i64, %ip: i1, %fx: f32, %o0: i32, %o1: i64, %o2: i1, %o3: f32):
    %c3 = arith.constant 3 : i32
    %m = arith.muli %ia, %c3 : i32
    %x1 = arith.xori %m, %ia : i32
    %ext = arith.extsi %x1 : i32 to i64
    %sum = arith.subi %ext, %ib : i64
    %lt = arith.cmpi slt, %ext, %ib : i64
    %neg = arith.cmpf olt, %fx, %fx : f32
    %pos = arith.cmpf ogt, %fx, %fx : f32
    %z = arith.constant 0.0 : f32
    %isneg = arith.cmpf olt, %fx, %z : f32
    %both = arith.xori %isneg, %ip : i1
    %sel = arith.select %both, %fx, %z : f32
    %big = arith.select %lt, %sum, %ib : i64
    %conv = arith.sitofp %x1 : i32 to f32
    %out = arith.addf %sel, %conv : f32
    linalg.yield %x1, %big, %both, %out : i32, i64, i1, f32
  } -> (tensor<$Nxi32>, tensor<$Nxi64>, tensor<$Nxi1>, tensor<$Nxf32>)
  return %r#0, %r#1, %r#2, %r#3 : tensor<$Nxi32>, tensor<$Nxi64>, tensor<$Nxi1>, tensor<$Nxf32>
}
)";
  for (int rep = 0; rep < 3; ++rep)
    check(subst(text, {{"N", dim(1, 500)}}), 0, false, 1);
}

TEST_P(KernelKindTest, LinalgIndexExact) {
  const char *text = R"(
func.func @main(%x: tensor<$Mx$Nxf32>) -> (tensor<$Mx$Nxi64>, tensor<$Mx$Nxf32>) {
  %e = tensor.empty() : tensor<$Mx$Nxi64>
  %ef = tensor.empty() : tensor<$Mx$Nxf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
      affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<$Mx$Nxf32>) outs(%e, %ef : tensor<$Mx$Nxi64>, tensor<$Mx$Nxf32>) {
  ^bb0(%a: f32, %o: i64, %of: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %n = arith.constant $N : index
    %lin = arith.muli %i, %n : index
    %flat = arith.addi %lin, %j : index
    %v = arith.index_cast %flat : index to i64
    %le = arith.cmpi ule, %i, %j : index
    %z = arith.constant 0.0 : f32
    %tri = arith.select %le, %a, %z : f32
    linalg.yield %v, %tri : i64, f32
  } -> (tensor<$Mx$Nxi64>, tensor<$Mx$Nxf32>)
  return %r#0, %r#1 : tensor<$Mx$Nxi64>, tensor<$Mx$Nxf32>
}
)";
  for (int rep = 0; rep < 3; ++rep)
    check(subst(text, {{"M", dim()}, {"N", dim()}}), 0, false, 1);
}

TEST_P(KernelKindTest, CapturesAndTensorArithExact) {
  // A scalar from outside the body (a captured rank-0 value), a constant
  // from outside, arith and math directly on tensors.
  const char *text = R"(
func.func @main(%s: tensor<f32>, %x: tensor<$Mx$Nxf32>, %y: tensor<$Mx$Nxf32>) -> tensor<$Mx$Nxf32> {
  %scale = tensor.extract %s[] : tensor<f32>
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<$Mx$Nxf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<$Mx$Nxf32>) outs(%e : tensor<$Mx$Nxf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %scale : f32
    %h = arith.mulf %m, %half : f32
    linalg.yield %h : f32
  } -> tensor<$Mx$Nxf32>
  %sum = arith.addf %g, %y : tensor<$Mx$Nxf32>
  %q = arith.divf %sum, %y : tensor<$Mx$Nxf32>
  return %q : tensor<$Mx$Nxf32>
}
)";
  for (int rep = 0; rep < 2; ++rep)
    // tensor.extract stays interpreted (its bounds are checked).
    check(subst(text, {{"M", dim()}, {"N", dim()}}), 0, false, 3, 1);
}

TEST_P(KernelKindTest, IntegerDivisionCompiledOnlyByConstants) {
  // Native code traps (or PTX computes garbage) where the interpreter
  // reports a zero divisor or the signed INT_MIN / -1: only constant
  // divisors that are neither compile. %b | 1 is never zero but not a
  // constant, so its nest and the tensor division stay interpreted.
  const char *text = R"(
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<$Nxi32>, %b: tensor<$Nxi32>, %w: tensor<$Nxi64>)
    -> (tensor<$Nxi32>, tensor<$Nxi64>, tensor<$Nxi32>, tensor<$Nxi32>) {
  %e32 = tensor.empty() : tensor<$Nxi32>
  %e64 = tensor.empty() : tensor<$Nxi64>
  %m3 = arith.constant -3 : i32
  %c:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %w : tensor<$Nxi32>, tensor<$Nxi64>) outs(%e32, %e64 : tensor<$Nxi32>, tensor<$Nxi64>) {
  ^bb0(%x: i32, %y: i64, %o0: i32, %o1: i64):
    %c7 = arith.constant 7 : i32
    %cm1 = arith.constant -1 : i64
    %c5 = arith.constant 5 : i64
    %i = linalg.index 0 : index
    %c3 = arith.constant 3 : index
    %q = arith.divsi %x, %m3 : i32
    %r = arith.remsi %x, %c7 : i32
    %s = arith.addi %q, %r : i32
    %u = arith.divui %y, %cm1 : i64
    %v = arith.remui %y, %c5 : i64
    %ir = arith.remui %i, %c3 : index
    %iq = arith.divui %i, %c3 : index
    %is = arith.addi %ir, %iq : index
    %il = arith.index_cast %is : index to i64
    %t0 = arith.addi %u, %v : i64
    %t = arith.addi %t0, %il : i64
    linalg.yield %s, %t : i32, i64
  } -> (tensor<$Nxi32>, tensor<$Nxi64>)
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<$Nxi32>, tensor<$Nxi32>) outs(%e32 : tensor<$Nxi32>) {
  ^bb0(%x: i32, %y: i32, %o: i32):
    %one = arith.constant 1 : i32
    %odd = arith.ori %y, %one : i32
    %q = arith.divsi %x, %odd : i32
    %r = arith.remui %x, %odd : i32
    %s = arith.addi %q, %r : i32
    linalg.yield %s : i32
  } -> tensor<$Nxi32>
  %ones = arith.constant dense<1> : tensor<$Nxi32>
  %odd = arith.ori %b, %ones : tensor<$Nxi32>
  %t = arith.remsi %a, %odd : tensor<$Nxi32>
  return %c#0, %c#1, %d, %t : tensor<$Nxi32>, tensor<$Nxi64>, tensor<$Nxi32>, tensor<$Nxi32>
}
)";
  // Compiled: the constant-divisor nest and the elementwise ori.
  for (int rep = 0; rep < 2; ++rep)
    check(subst(text, {{"N", dim(1, 500)}}), 0, false, 2, 2);
}

TEST_P(KernelKindTest, ZeroDivisorIsTheInterpretersError) {
  const char *text = R"(
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<64xi32>, %b: tensor<64xi32>) -> tensor<64xi32> {
  %e = tensor.empty() : tensor<64xi32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<64xi32>, tensor<64xi32>) outs(%e : tensor<64xi32>) {
  ^bb0(%x: i32, %y: i32, %o: i32):
    %q = arith.divsi %x, %y : i32
    linalg.yield %q : i32
  } -> tensor<64xi32>
  return %d : tensor<64xi32>
}
)";
  OwningOpRef<ModuleOp> module = parse(text);
  ASSERT_TRUE(module);
  Lowered fast = lower(*module, KernelMode::Compiled, false, "", gpu);
  ASSERT_TRUE(succeeded(fast.program)) << fast.diagnostics;
  EXPECT_EQ(countGenerics(*fast.program, true), 0) << fast.program->str();
  if (gpu && !rt::isCudaAvailable())
    return;
  std::unique_ptr<rt::Backend> backend =
      gpu ? rt::createCudaBackend(0) : rt::createCpuBackend();
  std::unique_ptr<rt::Communicator> comm =
      rt::createLocalCommunicator(fast.program->mesh);
  rt::Executor executor(*fast.program, *backend, *comm);
  rt::Tensor a = rt::makeSeededTensor(rt::DType::I32, {64}, 1, 0);
  rt::Tensor b(rt::DType::I32, {64});
  for (int64_t i = 0; i < 64; ++i)
    b.setFromInt(i, i == 40 ? 0 : i + 1);
  std::vector<rt::Tensor> inputs;
  inputs.push_back(gpu ? backend->upload(a) : std::move(a));
  inputs.push_back(gpu ? backend->upload(b) : std::move(b));
  // A device raises the fault at its next synchronising call.
  std::string error;
  try {
    std::vector<rt::Tensor> out = executor.run(inputs);
    backend->synchronize();
  } catch (const rt::Error &e) {
    error = e.what();
  }
  EXPECT_NE(error.find("integer division by zero"), std::string::npos)
      << error;
}

TEST_P(KernelKindTest, ScalarEdgeValuesExact) {
  // Where MLIR says poison (shifts by >= the width or negative,
  // fptosi/fptoui of NaN, inf or out of range) kernels compute the
  // interpreter's value; where it defines one (maximumf's -0 < +0, i1 true
  // as -1 signed, int64 -> f32 rounded once) both give it. A subset of
  // test/Runtime/kernel-edge-values.mlir (no math functions, which the GPU
  // computes within an ulp): binary ops over every pair of edge values.
  const char *text = R"(
#x = affine_map<(i) -> (i)>
#i = affine_map<(i, j) -> (i)>
#j = affine_map<(i, j) -> (j)>
#ij = affine_map<(i, j) -> (i, j)>
func.func @main() -> (tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<18xi64>, tensor<18xf32>, tensor<18xf32>, tensor<18xf64>, tensor<18xf64>, tensor<19xf32>, tensor<19xf32>, tensor<19xf64>, tensor<19xf64>, tensor<2xi32>, tensor<2xf32>, tensor<2xf32>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>) {
  %c0 = arith.constant dense<[0, 1, -1, 2, 7, 31, 32, 33, 63, 64, 65, -31, -32, -33, 1000, 2147483647, -2147483648, 1431655765]> : tensor<18xi32>
  %c1 = arith.constant dense<[0, 1, -1, 31, 32, 63, 64, 65, -64, 9223372036854775807, -9223372036854775808, 4294967296, -4294967297, 9007199254740993, 4611686293305294849, -4611686293305294849, 9223371487098961919, -549755813889, 9223371487098961919]> : tensor<19xi64>
  %c2 = arith.constant dense<[0, 1]> : tensor<2xi1>
  %c3 = arith.constant dense<[0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3F000000, 0xBF000000, 0x3FC00000, 0x40200000, 0xC0200000, 0x3EFFFFFF, 0x7FC00000, 0xFFC00000, 0x7F800000, 0xFF800000, 0x4F000000, 0xCF000000, 0x4F000000, 0x4F800000, 0x4F6E6B28, 0xCF6E6B28, 0x501502F9, 0xD01502F9, 0x5F000000, 0xDF000000, 0x5EFFA0FC, 0xDEFFA0FC, 0x5F800000, 0x5F79CCD9, 0x7149F2CA, 0xF149F2CA, 0x000116C2, 0x800116C2, 0x7F7FC99E, 0x7F800000, 0x00000000, 0x59800000, 0x42B16666, 0xC2CE0000, 0x44318000, 0x3F490FDB, 0x322BCC77]> : tensor<41xf32>
  %c4 = arith.constant dense<[0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x3FE0000000000000, 0xBFE0000000000000, 0x3FF8000000000000, 0x4004000000000000, 0xC004000000000000, 0x3FDFFFFFDFC9A9AD, 0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x41E0000000000000, 0xC1E0000000000000, 0x41DFFFFFF0000000, 0x41F0000000000000, 0x41EDCD6500000000, 0xC1EDCD6500000000, 0x4202A05F20000000, 0xC202A05F20000000, 0x43E0000000000000, 0xC3E0000000000000, 0x43DFF41F8D035640, 0xC3DFF41F8D035640, 0x43F0000000000000, 0x43EF399B1438A100, 0x46293E5939A08CEA, 0xC6293E5939A08CEA, 0x37A16C262777579C, 0xB7A16C262777579C, 0x47EFF933C78CDFAD, 0x7E37E43C8800759C, 0x0000000000000001, 0x4330000000000001, 0x40562CCCCCCCCCCD, 0xC059C00000000000, 0x4086300000000000, 0x3FE921FB54442D18, 0x3E45798EE2308C3A]> : tensor<41xf64>
  // 0: maxsi i32
  // 1: minsi i32
  // 2: shli i32
  // 3: shrsi i32
  // 4: shrui i32
  // 5: cmpi slt i32
  // 6: cmpi sle i32
  // 7: cmpi sgt i32
  // 8: cmpi sge i32
  %e0_0 = tensor.empty() : tensor<18x18xi32>
  %e0_1 = tensor.empty() : tensor<18x18xi32>
  %e0_2 = tensor.empty() : tensor<18x18xi32>
  %e0_3 = tensor.empty() : tensor<18x18xi32>
  %e0_4 = tensor.empty() : tensor<18x18xi32>
  %e0_5 = tensor.empty() : tensor<18x18xi1>
  %e0_6 = tensor.empty() : tensor<18x18xi1>
  %e0_7 = tensor.empty() : tensor<18x18xi1>
  %e0_8 = tensor.empty() : tensor<18x18xi1>
  %r0:9 = linalg.generic {indexing_maps = [#i, #j, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij], iterator_types = ["parallel", "parallel"]}
      ins(%c0, %c0 : tensor<18xi32>, tensor<18xi32>)
      outs(%e0_0, %e0_1, %e0_2, %e0_3, %e0_4, %e0_5, %e0_6, %e0_7, %e0_8 : tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>) {
  ^bb0(%x: i32, %y: i32, %o0: i32, %o1: i32, %o2: i32, %o3: i32, %o4: i32, %o5: i1, %o6: i1, %o7: i1, %o8: i1):
    %v0 = arith.maxsi %x, %y : i32
    %v1 = arith.minsi %x, %y : i32
    %v2 = arith.shli %x, %y : i32
    %v3 = arith.shrsi %x, %y : i32
    %v4 = arith.shrui %x, %y : i32
    %v5 = arith.cmpi slt, %x, %y : i32
    %v6 = arith.cmpi sle, %x, %y : i32
    %v7 = arith.cmpi sgt, %x, %y : i32
    %v8 = arith.cmpi sge, %x, %y : i32
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8 : i32, i32, i32, i32, i32, i1, i1, i1, i1
  } -> (tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>)
  // 9: maxsi i64
  // 10: minsi i64
  // 11: shli i64
  // 12: shrsi i64
  // 13: shrui i64
  // 14: cmpi slt i64
  // 15: cmpi sle i64
  // 16: cmpi sgt i64
  // 17: cmpi sge i64
  %e1_0 = tensor.empty() : tensor<19x19xi64>
  %e1_1 = tensor.empty() : tensor<19x19xi64>
  %e1_2 = tensor.empty() : tensor<19x19xi64>
  %e1_3 = tensor.empty() : tensor<19x19xi64>
  %e1_4 = tensor.empty() : tensor<19x19xi64>
  %e1_5 = tensor.empty() : tensor<19x19xi1>
  %e1_6 = tensor.empty() : tensor<19x19xi1>
  %e1_7 = tensor.empty() : tensor<19x19xi1>
  %e1_8 = tensor.empty() : tensor<19x19xi1>
  %r1:9 = linalg.generic {indexing_maps = [#i, #j, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij], iterator_types = ["parallel", "parallel"]}
      ins(%c1, %c1 : tensor<19xi64>, tensor<19xi64>)
      outs(%e1_0, %e1_1, %e1_2, %e1_3, %e1_4, %e1_5, %e1_6, %e1_7, %e1_8 : tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>) {
  ^bb0(%x: i64, %y: i64, %o0: i64, %o1: i64, %o2: i64, %o3: i64, %o4: i64, %o5: i1, %o6: i1, %o7: i1, %o8: i1):
    %v0 = arith.maxsi %x, %y : i64
    %v1 = arith.minsi %x, %y : i64
    %v2 = arith.shli %x, %y : i64
    %v3 = arith.shrsi %x, %y : i64
    %v4 = arith.shrui %x, %y : i64
    %v5 = arith.cmpi slt, %x, %y : i64
    %v6 = arith.cmpi sle, %x, %y : i64
    %v7 = arith.cmpi sgt, %x, %y : i64
    %v8 = arith.cmpi sge, %x, %y : i64
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8 : i64, i64, i64, i64, i64, i1, i1, i1, i1
  } -> (tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>)
  // 18: extsi i32->i64
  // 19: sitofp i32->f32
  // 20: uitofp i32->f32
  // 21: sitofp i32->f64
  // 22: uitofp i32->f64
  %e2_0 = tensor.empty() : tensor<18xi64>
  %e2_1 = tensor.empty() : tensor<18xf32>
  %e2_2 = tensor.empty() : tensor<18xf32>
  %e2_3 = tensor.empty() : tensor<18xf64>
  %e2_4 = tensor.empty() : tensor<18xf64>
  %r2:5 = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x, #x], iterator_types = ["parallel"]}
      ins(%c0 : tensor<18xi32>)
      outs(%e2_0, %e2_1, %e2_2, %e2_3, %e2_4 : tensor<18xi64>, tensor<18xf32>, tensor<18xf32>, tensor<18xf64>, tensor<18xf64>) {
  ^bb0(%x: i32, %o0: i64, %o1: f32, %o2: f32, %o3: f64, %o4: f64):
    %v0 = arith.extsi %x : i32 to i64
    %v1 = arith.sitofp %x : i32 to f32
    %v2 = arith.uitofp %x : i32 to f32
    %v3 = arith.sitofp %x : i32 to f64
    %v4 = arith.uitofp %x : i32 to f64
    linalg.yield %v0, %v1, %v2, %v3, %v4 : i64, f32, f32, f64, f64
  } -> (tensor<18xi64>, tensor<18xf32>, tensor<18xf32>, tensor<18xf64>, tensor<18xf64>)
  // 23: sitofp i64->f32
  // 24: uitofp i64->f32
  // 25: sitofp i64->f64
  // 26: uitofp i64->f64
  %e3_0 = tensor.empty() : tensor<19xf32>
  %e3_1 = tensor.empty() : tensor<19xf32>
  %e3_2 = tensor.empty() : tensor<19xf64>
  %e3_3 = tensor.empty() : tensor<19xf64>
  %r3:4 = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x], iterator_types = ["parallel"]}
      ins(%c1 : tensor<19xi64>)
      outs(%e3_0, %e3_1, %e3_2, %e3_3 : tensor<19xf32>, tensor<19xf32>, tensor<19xf64>, tensor<19xf64>) {
  ^bb0(%x: i64, %o0: f32, %o1: f32, %o2: f64, %o3: f64):
    %v0 = arith.sitofp %x : i64 to f32
    %v1 = arith.uitofp %x : i64 to f32
    %v2 = arith.sitofp %x : i64 to f64
    %v3 = arith.uitofp %x : i64 to f64
    linalg.yield %v0, %v1, %v2, %v3 : f32, f32, f64, f64
  } -> (tensor<19xf32>, tensor<19xf32>, tensor<19xf64>, tensor<19xf64>)
  // 27: extsi i1->i32
  // 28: sitofp i1->f32
  // 29: uitofp i1->f32
  %e4_0 = tensor.empty() : tensor<2xi32>
  %e4_1 = tensor.empty() : tensor<2xf32>
  %e4_2 = tensor.empty() : tensor<2xf32>
  %r4:3 = linalg.generic {indexing_maps = [#x, #x, #x, #x], iterator_types = ["parallel"]}
      ins(%c2 : tensor<2xi1>)
      outs(%e4_0, %e4_1, %e4_2 : tensor<2xi32>, tensor<2xf32>, tensor<2xf32>) {
  ^bb0(%x: i1, %o0: i32, %o1: f32, %o2: f32):
    %v0 = arith.extsi %x : i1 to i32
    %v1 = arith.sitofp %x : i1 to f32
    %v2 = arith.uitofp %x : i1 to f32
    linalg.yield %v0, %v1, %v2 : i32, f32, f32
  } -> (tensor<2xi32>, tensor<2xf32>, tensor<2xf32>)
  // 30: maxsi i1
  // 31: minsi i1
  // 32: shli i1
  // 33: shrsi i1
  // 34: shrui i1
  // 35: cmpi slt i1
  // 36: cmpi sle i1
  // 37: cmpi sgt i1
  // 38: cmpi sge i1
  %e5_0 = tensor.empty() : tensor<2x2xi1>
  %e5_1 = tensor.empty() : tensor<2x2xi1>
  %e5_2 = tensor.empty() : tensor<2x2xi1>
  %e5_3 = tensor.empty() : tensor<2x2xi1>
  %e5_4 = tensor.empty() : tensor<2x2xi1>
  %e5_5 = tensor.empty() : tensor<2x2xi1>
  %e5_6 = tensor.empty() : tensor<2x2xi1>
  %e5_7 = tensor.empty() : tensor<2x2xi1>
  %e5_8 = tensor.empty() : tensor<2x2xi1>
  %r5:9 = linalg.generic {indexing_maps = [#i, #j, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij], iterator_types = ["parallel", "parallel"]}
      ins(%c2, %c2 : tensor<2xi1>, tensor<2xi1>)
      outs(%e5_0, %e5_1, %e5_2, %e5_3, %e5_4, %e5_5, %e5_6, %e5_7, %e5_8 : tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>) {
  ^bb0(%x: i1, %y: i1, %o0: i1, %o1: i1, %o2: i1, %o3: i1, %o4: i1, %o5: i1, %o6: i1, %o7: i1, %o8: i1):
    %v0 = arith.maxsi %x, %y : i1
    %v1 = arith.minsi %x, %y : i1
    %v2 = arith.shli %x, %y : i1
    %v3 = arith.shrsi %x, %y : i1
    %v4 = arith.shrui %x, %y : i1
    %v5 = arith.cmpi slt, %x, %y : i1
    %v6 = arith.cmpi sle, %x, %y : i1
    %v7 = arith.cmpi sgt, %x, %y : i1
    %v8 = arith.cmpi sge, %x, %y : i1
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8 : i1, i1, i1, i1, i1, i1, i1, i1, i1
  } -> (tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>)
  // 39: maximumf f32
  // 40: minimumf f32
  // 41: maxnumf f32
  // 42: minnumf f32
  %e6_0 = tensor.empty() : tensor<41x41xf32>
  %e6_1 = tensor.empty() : tensor<41x41xf32>
  %e6_2 = tensor.empty() : tensor<41x41xf32>
  %e6_3 = tensor.empty() : tensor<41x41xf32>
  %r6:4 = linalg.generic {indexing_maps = [#i, #j, #ij, #ij, #ij, #ij], iterator_types = ["parallel", "parallel"]}
      ins(%c3, %c3 : tensor<41xf32>, tensor<41xf32>)
      outs(%e6_0, %e6_1, %e6_2, %e6_3 : tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>) {
  ^bb0(%x: f32, %y: f32, %o0: f32, %o1: f32, %o2: f32, %o3: f32):
    %v0 = arith.maximumf %x, %y : f32
    %v1 = arith.minimumf %x, %y : f32
    %v2 = arith.maxnumf %x, %y : f32
    %v3 = arith.minnumf %x, %y : f32
    linalg.yield %v0, %v1, %v2, %v3 : f32, f32, f32, f32
  } -> (tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>)
  // 43: fptosi f32->i32
  // 44: fptoui f32->i32
  // 45: fptosi f32->i64
  // 46: fptoui f32->i64
  %e7_0 = tensor.empty() : tensor<41xi32>
  %e7_1 = tensor.empty() : tensor<41xi32>
  %e7_2 = tensor.empty() : tensor<41xi64>
  %e7_3 = tensor.empty() : tensor<41xi64>
  %r7:4 = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x], iterator_types = ["parallel"]}
      ins(%c3 : tensor<41xf32>)
      outs(%e7_0, %e7_1, %e7_2, %e7_3 : tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>) {
  ^bb0(%x: f32, %o0: i32, %o1: i32, %o2: i64, %o3: i64):
    %v0 = arith.fptosi %x : f32 to i32
    %v1 = arith.fptoui %x : f32 to i32
    %v2 = arith.fptosi %x : f32 to i64
    %v3 = arith.fptoui %x : f32 to i64
    linalg.yield %v0, %v1, %v2, %v3 : i32, i32, i64, i64
  } -> (tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>)
  // 47: maximumf f64
  // 48: minimumf f64
  // 49: maxnumf f64
  // 50: minnumf f64
  %e8_0 = tensor.empty() : tensor<41x41xf64>
  %e8_1 = tensor.empty() : tensor<41x41xf64>
  %e8_2 = tensor.empty() : tensor<41x41xf64>
  %e8_3 = tensor.empty() : tensor<41x41xf64>
  %r8:4 = linalg.generic {indexing_maps = [#i, #j, #ij, #ij, #ij, #ij], iterator_types = ["parallel", "parallel"]}
      ins(%c4, %c4 : tensor<41xf64>, tensor<41xf64>)
      outs(%e8_0, %e8_1, %e8_2, %e8_3 : tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>) {
  ^bb0(%x: f64, %y: f64, %o0: f64, %o1: f64, %o2: f64, %o3: f64):
    %v0 = arith.maximumf %x, %y : f64
    %v1 = arith.minimumf %x, %y : f64
    %v2 = arith.maxnumf %x, %y : f64
    %v3 = arith.minnumf %x, %y : f64
    linalg.yield %v0, %v1, %v2, %v3 : f64, f64, f64, f64
  } -> (tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>)
  // 51: fptosi f64->i32
  // 52: fptoui f64->i32
  // 53: fptosi f64->i64
  // 54: fptoui f64->i64
  %e9_0 = tensor.empty() : tensor<41xi32>
  %e9_1 = tensor.empty() : tensor<41xi32>
  %e9_2 = tensor.empty() : tensor<41xi64>
  %e9_3 = tensor.empty() : tensor<41xi64>
  %r9:4 = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x], iterator_types = ["parallel"]}
      ins(%c4 : tensor<41xf64>)
      outs(%e9_0, %e9_1, %e9_2, %e9_3 : tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>) {
  ^bb0(%x: f64, %o0: i32, %o1: i32, %o2: i64, %o3: i64):
    %v0 = arith.fptosi %x : f64 to i32
    %v1 = arith.fptoui %x : f64 to i32
    %v2 = arith.fptosi %x : f64 to i64
    %v3 = arith.fptoui %x : f64 to i64
    linalg.yield %v0, %v1, %v2, %v3 : i32, i32, i64, i64
  } -> (tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>)
  return %r0#0, %r0#1, %r0#2, %r0#3, %r0#4, %r0#5, %r0#6, %r0#7, %r0#8, %r1#0, %r1#1, %r1#2, %r1#3, %r1#4, %r1#5, %r1#6, %r1#7, %r1#8, %r2#0, %r2#1, %r2#2, %r2#3, %r2#4, %r3#0, %r3#1, %r3#2, %r3#3, %r4#0, %r4#1, %r4#2, %r5#0, %r5#1, %r5#2, %r5#3, %r5#4, %r5#5, %r5#6, %r5#7, %r5#8, %r6#0, %r6#1, %r6#2, %r6#3, %r7#0, %r7#1, %r7#2, %r7#3, %r8#0, %r8#1, %r8#2, %r8#3, %r9#0, %r9#1, %r9#2, %r9#3
      : tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<18xi64>, tensor<18xf32>, tensor<18xf32>, tensor<18xf64>, tensor<18xf64>, tensor<19xf32>, tensor<19xf32>, tensor<19xf64>, tensor<19xf64>, tensor<2xi32>, tensor<2xf32>, tensor<2xf32>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>
}
)";
  check(text, 0, false, 10);
}

//===----------------------------------------------------------------------===//
// bf16 and f16 (16-bit storage, f32 compute, rounded as the interpreter)
//===----------------------------------------------------------------------===//

TEST_P(KernelKindTest, HalfCastsAndEdgeValuesExact) {
  // x scaled by 2^(4j - 150) (f32 subnormals up to 2^102), with an inf and
  // a NaN lane, rounded to $T from f32 and from f64 (inexact in f32: the
  // round-to-odd path), widened back, compared and selected.
  const char *text = R"(
func.func @main(%x: tensor<$Mx64xf32>)
    -> (tensor<$Mx64x$T>, tensor<$Mx64x$T>, tensor<$Mx64xf32>, tensor<$Mx64x$T>) {
  %e = tensor.empty() : tensor<$Mx64x$T>
  %ef = tensor.empty() : tensor<$Mx64xf32>
  %r:4 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
      affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<$Mx64xf32>) outs(%e, %e, %ef, %e : tensor<$Mx64x$T>, tensor<$Mx64x$T>, tensor<$Mx64xf32>, tensor<$Mx64x$T>) {
  ^bb0(%a: f32, %o0: $T, %o1: $T, %o2: f32, %o3: $T):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %c4 = arith.constant 4 : i32
    %c150 = arith.constant 150 : i32
    %j4 = arith.muli %ji, %c4 : i32
    %k = arith.subi %j4, %c150 : i32
    %kf = arith.sitofp %k : i32 to f32
    %scale = math.exp2 %kf : f32
    %v0 = arith.mulf %a, %scale : f32
    %zero = arith.constant 0.0 : f32
    %inf = arith.divf %a, %zero : f32
    %nan = arith.divf %zero, %zero : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %is0 = arith.cmpi eq, %j, %c0 : index
    %is1 = arith.cmpi eq, %j, %c1 : index
    %v1 = arith.select %is0, %inf, %v0 : f32
    %v = arith.select %is1, %nan, %v1 : f32
    %h = arith.truncf %v : f32 to $T
    %d = arith.extf %v : f32 to f64
    %eps = arith.constant 1.0000000001 : f64
    %dp = arith.mulf %d, %eps : f64
    %hd = arith.truncf %dp : f64 to $T
    %w = arith.extf %h : $T to f32
    %gt = arith.cmpf ogt, %h, %hd : $T
    %mx = arith.select %gt, %h, %hd : $T
    %ng = arith.negf %mx : $T
    %ab = math.absf %ng : $T
    %one = arith.constant 1.5 : $T
    %cs = arith.mulf %one, %ng : $T
    %mn = arith.minimumf %ab, %cs : $T
    %lim = arith.constant 1000.0 : $T
    %cl = arith.minnumf %ab, %lim : $T
    %fi = arith.fptosi %cl : $T to i32
    %back = arith.sitofp %fi : i32 to $T
    %mm = arith.maxnumf %back, %mn : $T
    linalg.yield %h, %hd, %w, %mm : $T, $T, f32, $T
  } -> (tensor<$Mx64x$T>, tensor<$Mx64x$T>, tensor<$Mx64xf32>, tensor<$Mx64x$T>)
  return %r#0, %r#1, %r#2, %r#3 : tensor<$Mx64x$T>, tensor<$Mx64x$T>, tensor<$Mx64xf32>, tensor<$Mx64x$T>
}
)";
  for (const char *type : {"bf16", "f16"})
    check(substType(subst(text, {{"M", dim(2, 9)}}), type), 0, false, 1);
}

TEST_P(KernelKindTest, HalfMathWithinUlps) {
  // Math functions on $T run in f64 and round from double, as the
  // interpreter; integer conversions too.
  const char *text = R"(
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: tensor<$Mx$Nx$T>, %n: tensor<$Mx$Nxi32>)
    -> (tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>) {
  %e = tensor.empty() : tensor<$Mx$Nx$T>
  %r:4 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id],
      iterator_types = ["parallel", "parallel"]}
      ins(%a, %n : tensor<$Mx$Nx$T>, tensor<$Mx$Nxi32>)
      outs(%e, %e, %e, %e : tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>) {
  ^bb0(%x: $T, %i: i32, %o0: $T, %o1: $T, %o2: $T, %o3: $T):
    %ex = math.exp %x : $T
    %th = math.tanh %ex : $T
    %ab = math.absf %x : $T
    %rs = math.rsqrt %ab : $T
    %sq = math.sqrt %ab : $T
    %er = math.erf %sq : $T
    %fm = math.fma %x, %ex, %th : $T
    %if = arith.sitofp %i : i32 to $T
    %s = arith.addf %if, %fm : $T
    linalg.yield %th, %rs, %er, %s : $T, $T, $T, $T
  } -> (tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>)
  return %r#0, %r#1, %r#2, %r#3 : tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>, tensor<$Mx$Nx$T>
}
)";
  // libdevice's double results may differ from libm's in the last bit.
  gpuMathUlps = 1;
  for (const char *type : {"bf16", "f16"})
    check(substType(subst(text, {{"M", dim()}, {"N", dim()}}), type), 0,
          false, 1);
}

TEST_P(KernelKindTest, HalfReductionsAndTensorOpsExact) {
  // A sum rounded to $T at every step, the precision pass's form (extf,
  // an f32 sum, a truncf), a $T max, and arith on $T tensors.
  const char *text = R"(
func.func @main(%x: tensor<$Mx$Nx$T>, %y: tensor<$Mx$Nx$T>)
    -> (tensor<$Mx$T>, tensor<$Mx$T>, tensor<$Nx$T>, tensor<$Mx$Nx$T>) {
  %zh = arith.constant 0.0 : $T
  %zf = arith.constant 0.0 : f32
  %ninf = arith.constant -65504.0 : $T
  %emh = tensor.empty() : tensor<$Mx$T>
  %emf = tensor.empty() : tensor<$Mxf32>
  %en = tensor.empty() : tensor<$Nx$T>
  %sh0 = linalg.fill ins(%zh : $T) outs(%emh : tensor<$Mx$T>) -> tensor<$Mx$T>
  %sf0 = linalg.fill ins(%zf : f32) outs(%emf : tensor<$Mxf32>) -> tensor<$Mxf32>
  %mx0 = linalg.fill ins(%ninf : $T) outs(%en : tensor<$Nx$T>) -> tensor<$Nx$T>
  %sh = linalg.reduce ins(%x : tensor<$Mx$Nx$T>) outs(%sh0 : tensor<$Mx$T>) dimensions = [1]
    (%a: $T, %acc: $T) {
      %s = arith.addf %a, %acc : $T
      linalg.yield %s : $T
    }
  %sf = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<$Mx$Nx$T>) outs(%sf0 : tensor<$Mxf32>) {
  ^bb0(%a: $T, %acc: f32):
    %w = arith.extf %a : $T to f32
    %sq = arith.mulf %w, %w : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<$Mxf32>
  %em2 = tensor.empty() : tensor<$Mx$T>
  %st = arith.truncf %sf : tensor<$Mxf32> to tensor<$Mx$T>
  %mx = linalg.reduce ins(%x : tensor<$Mx$Nx$T>) outs(%mx0 : tensor<$Nx$T>) dimensions = [0]
    (%a: $T, %acc: $T) {
      %m = arith.maximumf %a, %acc : $T
      linalg.yield %m : $T
    }
  %p = arith.mulf %x, %y : tensor<$Mx$Nx$T>
  %q = arith.divf %p, %y : tensor<$Mx$Nx$T>
  %xf = arith.extf %q : tensor<$Mx$Nx$T> to tensor<$Mx$Nxf32>
  %xe = math.exp %xf : tensor<$Mx$Nxf32>
  %xt = arith.truncf %xe : tensor<$Mx$Nxf32> to tensor<$Mx$Nx$T>
  return %sh, %st, %mx, %xt : tensor<$Mx$T>, tensor<$Mx$T>, tensor<$Nx$T>, tensor<$Mx$Nx$T>
}
)";
  // f32 exp: libdevice and libm may differ in the last double bit.
  gpuMathUlps = 1;
  for (const char *type : {"bf16", "f16"})
    for (int rep = 0; rep < 2; ++rep) {
      rt::Program p = check(
          substType(subst(text, {{"M", dim()}, {"N", dim(1, 300)}}), type), 0,
          false, 9);
      // Every nest, the casts included, is compiled (--print-plan's label).
      EXPECT_EQ(p.str().find(" interpreted"), std::string::npos) << p.str();
      EXPECT_NE(p.str().find(gpu ? " cuda kernel @" : " compiled @"),
                std::string::npos)
          << p.str();
    }
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

TEST_P(KernelKindTest, FusedBiasGeluAndLayerNorm) {
  // x + bias, GELU (erf), a residual add, then LayerNorm: mean, centred
  // square sum, normalise. Unfused: 8 generics; fused: the elementwise
  // producers fold into their single consumers.
  const char *text = R"(
#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @main(%x: tensor<$Mx$Nxf32>, %bias: tensor<$Nxf32>, %res: tensor<$Mx$Nxf32>,
                %gamma: tensor<$Nxf32>) -> tensor<$Mx$Nxf32> {
  %e = tensor.empty() : tensor<$Mx$Nxf32>
  %er = tensor.empty() : tensor<$Mxf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%er : tensor<$Mxf32>) -> tensor<$Mxf32>
  %b = linalg.generic {indexing_maps = [#x, #col, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bias : tensor<$Mx$Nxf32>, tensor<$Nxf32>) outs(%e : tensor<$Mx$Nxf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<$Mx$Nxf32>
  %g = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<$Mx$Nxf32>) outs(%e : tensor<$Mx$Nxf32>) {
  ^bb0(%a: f32, %o: f32):
    %r2 = arith.constant 0.707106769 : f32
    %h = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %t = arith.mulf %a, %r2 : f32
    %er2 = math.erf %t : f32
    %p = arith.addf %er2, %one : f32
    %q = arith.mulf %a, %p : f32
    %y = arith.mulf %q, %h : f32
    linalg.yield %y : f32
  } -> tensor<$Mx$Nxf32>
  %r = linalg.generic {indexing_maps = [#x, #x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%g, %res : tensor<$Mx$Nxf32>, tensor<$Mx$Nxf32>) outs(%e : tensor<$Mx$Nxf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<$Mx$Nxf32>
  %sum = linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%r : tensor<$Mx$Nxf32>) outs(%z : tensor<$Mxf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<$Mxf32>
  %c = linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%r, %sum : tensor<$Mx$Nxf32>, tensor<$Mxf32>) outs(%e : tensor<$Mx$Nxf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %inv = arith.constant $INV : f32
    %m = arith.mulf %s, %inv : f32
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  } -> tensor<$Mx$Nxf32>
  %c2 = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<$Mx$Nxf32>) outs(%e : tensor<$Mx$Nxf32>) {
  ^bb0(%a: f32, %o: f32):
    %sq = arith.mulf %a, %a : f32
    linalg.yield %sq : f32
  } -> tensor<$Mx$Nxf32>
  %var = linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%c2 : tensor<$Mx$Nxf32>) outs(%z : tensor<$Mxf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<$Mxf32>
  %y = linalg.generic {indexing_maps = [#x, #row, #col, #x], iterator_types = ["parallel", "parallel"]}
      ins(%r, %var, %gamma : tensor<$Mx$Nxf32>, tensor<$Mxf32>, tensor<$Nxf32>) outs(%e : tensor<$Mx$Nxf32>) {
  ^bb0(%a: f32, %v: f32, %w: f32, %o: f32):
    %inv = arith.constant $INV : f32
    %eps = arith.constant 1.0e-5 : f32
    %m = arith.mulf %v, %inv : f32
    %p = arith.addf %m, %eps : f32
    %rs = math.rsqrt %p : f32
    %n = arith.mulf %a, %rs : f32
    %s = arith.mulf %n, %w : f32
    linalg.yield %s : f32
  } -> tensor<$Mx$Nxf32>
  return %y : tensor<$Mx$Nxf32>
}
)";
  gpuMathUlps = 1;
  for (int rep = 0; rep < 2; ++rep) {
    int64_t n = dim(2, 64);
    std::string t = subst(text, {{"M", dim()}, {"N", n}});
    std::string inv;
    llvm::raw_string_ostream(inv) << llvm::format("%.9e", 1.0 / n);
    for (size_t pos; (pos = t.find("$INV")) != std::string::npos;)
      t.replace(pos, 4, inv);
    // Unfused: 8 generics (and the fill); fused: bias+GELU+residual is one,
    // the centring folds into the variance reduction.
    check(t, 0, false, 8);
    rt::Program fused = check(t, 0, true);
    EXPECT_LE(countGenerics(fused, true), 5) << fused.str();
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, KernelKindTest,
                         ::testing::Values("cpu", "cuda"),
                         [](const auto &info) { return info.param; });

//===----------------------------------------------------------------------===//
// Cache and failures
//===----------------------------------------------------------------------===//

const char *kSmall = R"(
func.func @main(%x: tensor<16x8xf32>, %y: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %e = tensor.empty() : tensor<16x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
      affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<16x8xf32>, tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}
)";

TEST_F(KernelTest, CorruptCachedLibraryIsRebuilt) {
  std::string dir = CacheDir::path() + "/corrupt";
  OwningOpRef<ModuleOp> module = parse(kSmall);
  Lowered first = lower(*module, KernelMode::Compiled, false, dir);
  ASSERT_TRUE(succeeded(first.program)) << first.diagnostics;
  std::string lib = first.program->kernelLibrary;
  ASSERT_FALSE(lib.empty());
  std::vector<rt::Tensor> good = run(*first.program, 3);
  { std::ofstream(lib, std::ios::trunc) << "not an ELF file"; }
  // The executor reports a library that does not load on one line.
  try {
    run(*first.program, 3);
    ADD_FAILURE() << "a corrupt library ran";
  } catch (const rt::Error &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("cannot load compiled kernels '" + lib + "'"),
              std::string::npos)
        << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  // Lowering again finds the cached file unusable and rebuilds it.
  Lowered second = lower(*module, KernelMode::Compiled, false, dir);
  ASSERT_TRUE(succeeded(second.program)) << second.diagnostics;
  EXPECT_EQ(second.program->kernelLibrary, lib);
  std::vector<rt::Tensor> again = run(*second.program, 3);
  double err = 0;
  EXPECT_EQ(rt::compareTensors(good[0], again[0], 0, 0, err), "");
  // A library that has vanished is a one-line error too.
  llvm::sys::fs::remove(lib);
  try {
    run(*second.program, 3);
    ADD_FAILURE() << "a missing library ran";
  } catch (const rt::Error &e) {
    EXPECT_NE(std::string(e.what()).find("cannot load compiled kernels"),
              std::string::npos);
  }
}

TEST_F(KernelTest, NoCompilerIsAnErrorOrAWarning) {
  std::string dir = CacheDir::path() + "/nocc";
  OwningOpRef<ModuleOp> module = parse(kSmall);
  setenv("AUTOSHARD_KERNEL_CC", "/nonexistent/cc", 1);
  Lowered compiled = lower(*module, KernelMode::Compiled, false, dir);
  EXPECT_TRUE(failed(compiled.program));
  EXPECT_NE(compiled.diagnostics.find("no C compiler driver (/nonexistent/cc)"),
            std::string::npos)
      << compiled.diagnostics;
  EXPECT_EQ(std::count(compiled.diagnostics.begin(), compiled.diagnostics.end(),
                       '\n'),
            1)
      << compiled.diagnostics;
  // Auto: a warning, and every loop nest interpreted.
  Lowered automatic = lower(*module, KernelMode::Auto, false, dir);
  unsetenv("AUTOSHARD_KERNEL_CC");
  ASSERT_TRUE(succeeded(automatic.program)) << automatic.diagnostics;
  EXPECT_NE(automatic.diagnostics.find("interpreting every loop nest"),
            std::string::npos)
      << automatic.diagnostics;
  EXPECT_TRUE(automatic.program->kernelLibrary.empty());
  EXPECT_EQ(countGenerics(*automatic.program, true), 0);
  EXPECT_EQ(run(*automatic.program, 1).size(), 1u);
}

TEST_F(KernelTest, UnwritableCacheIsAnErrorOrAWarning) {
  OwningOpRef<ModuleOp> module = parse(kSmall);
  // A directory below a regular file cannot be created.
  std::string file = CacheDir::path() + "/plain-file";
  std::ofstream(file) << "x";
  Lowered compiled =
      lower(*module, KernelMode::Compiled, false, file + "/cache");
  EXPECT_TRUE(failed(compiled.program));
  EXPECT_NE(compiled.diagnostics.find("cannot create the cache directory"),
            std::string::npos)
      << compiled.diagnostics;
  Lowered automatic = lower(*module, KernelMode::Auto, false, file + "/cache");
  ASSERT_TRUE(succeeded(automatic.program)) << automatic.diagnostics;
  EXPECT_NE(automatic.diagnostics.find("interpreting every loop nest"),
            std::string::npos)
      << automatic.diagnostics;
  EXPECT_EQ(countGenerics(*automatic.program, true), 0);
}

TEST_F(KernelTest, NoLibdeviceIsAnErrorOrAWarning) {
  OwningOpRef<ModuleOp> module = parse(kSmall);
  LowerOptions options;
  options.kernels.mode = KernelMode::Compiled;
  options.kernels.gpu = true;
  options.kernels.cudaPath = "/nonexistent/cuda";
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    llvm::raw_string_ostream(diagnostics) << d << "\n";
    return success();
  });
  EXPECT_TRUE(failed(lowerToProgram(*module, "", options)));
  EXPECT_NE(diagnostics.find(
                "no libdevice at '/nonexistent/cuda/nvvm/libdevice/"
                "libdevice.10.bc'"),
            std::string::npos)
      << diagnostics;
  EXPECT_EQ(std::count(diagnostics.begin(), diagnostics.end(), '\n'), 1)
      << diagnostics;
  diagnostics.clear();
  options.kernels.mode = KernelMode::Auto;
  FailureOr<rt::Program> automatic = lowerToProgram(*module, "", options);
  ASSERT_TRUE(succeeded(automatic)) << diagnostics;
  EXPECT_NE(diagnostics.find("interpreting every loop nest"),
            std::string::npos)
      << diagnostics;
  EXPECT_TRUE(automatic->gpuModule.empty());
  EXPECT_EQ(countGenerics(*automatic, true), 0);
}

TEST_F(KernelTest, AutoCompilesOnlyLargeNests) {
  OwningOpRef<ModuleOp> module = parse(kSmall);
  LowerOptions options;
  options.kernels.mode = KernelMode::Auto;
  options.kernels.cacheDir = CacheDir::path();
  options.kernels.compileThreshold = 129;
  FailureOr<rt::Program> small = lowerToProgram(*module, "", options);
  ASSERT_TRUE(succeeded(small));
  EXPECT_TRUE(small->kernelLibrary.empty());
  options.kernels.compileThreshold = 128;
  FailureOr<rt::Program> large = lowerToProgram(*module, "", options);
  ASSERT_TRUE(succeeded(large));
  EXPECT_EQ(countGenerics(*large, true), 1);
  EXPECT_NE(large->str().find("compiled @autoshard_kernel_0"),
            std::string::npos)
      << large->str();
}

} // namespace
