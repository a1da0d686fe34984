//===- Verify.cpp - autoshard verify: partitioned vs single device --------===//

#include "Verify.h"
#include "Launch.h"

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "autoshard/Runtime/HostIO.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace autoshard;
using namespace autoshard::driver;

static int fail(const Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "autoshard") << msg << "\n";
  return 1;
}

/// One `autoshard-run PROGRAM` on `ranks` ranks, writing outputs to outDir;
/// seeded weights scaled like real initialisers; `magnitudes`: on |inputs|.
static int runProgram(const RankTools &tools, StringRef program, int ranks,
                      StringRef outDir, const VerifyOptions &o,
                      bool magnitudes = false) {
  SmallVector<std::string> args = {"--seed", std::to_string(o.seed),
                                   "--output-dir", outDir.str(),
                                   "--fan-in-init"};
  if (magnitudes)
    args.push_back("--abs-inputs");
  if (o.backend != "cpu")
    args.push_back("--backend=" + o.backend);
  return runRanks(tools, program, ranks, args);
}

namespace {
struct Comparison {
  double maxAbs = 0;     // largest |got - ref| of the finite elements
  double worstRatio = 0; // largest |got - ref| / bound
  std::string mismatch;  // the first element out of bounds, if any
};
} // namespace

/// The tolerance rule (see VerifyOptions::rtol): non-finite elements must be
/// identical (the same inf, NaN where NaN); finite ones within
/// atol + rtol * M + |low - ref|, M = min(max(|ref|, |mag|), max |ref| of the
/// output); `low` (a --precision run, else null) is the program at the
/// precision on one rank.
static Comparison compareOutput(const rt::Tensor &got, const rt::Tensor &ref,
                                const rt::Tensor &mag, const rt::Tensor *low,
                                double rtol, double atol) {
  Comparison c;
  if (got.getDType() != ref.getDType() || got.getShape() != ref.getShape()) {
    c.mismatch =
        "type mismatch: " + got.getTypeString() + " vs " + ref.getTypeString();
    return c;
  }
  if (mag.getShape() != ref.getShape())
    throw rt::Error("the run on |inputs| gave " + mag.getTypeString() +
                    " for " + ref.getTypeString());
  if (low && low->getShape() != ref.getShape())
    throw rt::Error("the one-rank run at the precision gave " +
                    low->getTypeString() + " for " + ref.getTypeString());
  // M_i = max(|ref_i|, |mag_i|) bounds what rounding scales with, but it
  // compounds through layers (no cancellation in |W| |x|) and can exceed
  // the output by orders of magnitude; capped at the output's scale so a
  // wrong element of rtol of that scale is always caught.
  double scale = 0;
  for (int64_t k = 0; k < ref.getNumElements(); ++k)
    if (std::isfinite(ref.getAsDouble(k)))
      scale = std::max(scale, std::fabs(ref.getAsDouble(k)));
  for (int64_t k = 0; k < ref.getNumElements(); ++k) {
    double a = got.getAsDouble(k), b = ref.getAsDouble(k);
    std::string bad;
    if (!std::isfinite(a) || !std::isfinite(b)) {
      if (!(a == b || (std::isnan(a) && std::isnan(b))))
        bad = "non-finite values differ";
    } else {
      double m = std::min(std::max(std::fabs(b), std::fabs(mag.getAsDouble(k))),
                          scale);
      double bound = atol + rtol * m;
      // The precision's own error as the program propagates it (a
      // non-finite one adds nothing: the mismatch is then reported).
      double measured = low ? std::fabs(low->getAsDouble(k) - b) : 0;
      if (std::isfinite(measured))
        bound += measured;
      double err = std::fabs(a - b);
      c.maxAbs = std::max(c.maxAbs, err);
      c.worstRatio = std::max(c.worstRatio, bound > 0 ? err / bound : 0.0);
      if (err > bound)
        bad = llvm::formatv("|diff| {0:e3} > bound {1:e3} (M {2:e3})", err,
                            bound, m);
    }
    if (!bad.empty() && c.mismatch.empty())
      c.mismatch = llvm::formatv(
          "element {0}: got {1:e6}, expected {2:e6}: {3}", k, a, b, bad);
  }
  return c;
}

/// The longest chain of low-precision GEMMs (bf16/f16 inputs into f32, or
/// dist.tf32) through the functions of `module`: how many times an error of
/// the GEMM-input rounding can enter a path to an output.
static int64_t lowPrecisionDepth(ModuleOp module) {
  llvm::DenseMap<Value, int64_t> depth;
  int64_t deepest = 0;
  module.walk([&](func::FuncOp func) {
    for (Block &block : func.getBody())
      for (Operation &op : block) {
        int64_t d = 0;
        for (Value v : op.getOperands())
          d = std::max(d, depth.lookup(v));
        bool low = op.hasAttr("dist.tf32");
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
          for (Value in : linalgOp.getDpsInputs()) {
            Type t = getElementTypeOrSelf(in.getType());
            low |= (t.isBF16() || t.isF16()) && op.getNumResults() == 1 &&
                   getElementTypeOrSelf(op.getResult(0).getType()).isF32();
          }
        d += low;
        for (Value r : op.getResults())
          depth[r] = d;
        deepest = std::max(deepest, d);
      }
  });
  return deepest;
}

/// The unit roundoff of the GEMM inputs --precision gives; 0 where the
/// float32 rule stands (fp32, an explicit --rtol, tf32 off the CUDA backend,
/// which computes it in FP32).
static double unitRoundoff(const VerifyOptions &o) {
  StringRef p = o.compile.precision;
  double u = p == "bf16" ? 0x1p-8 : p == "fp16" || p == "tf32" ? 0x1p-11 : 0;
  if (o.rtolGiven || (p == "tf32" && o.backend != "cuda"))
    return 0;
  return u;
}

/// verify's rtol for `precision` (docs/design.md "Precision"): the float32
/// rule plus, per GEMM on the deepest path, 2u of the sum of absolute
/// products (each factor rounded to the input precision, unit roundoff u,
/// gives |a~ b~ - a b| <= (2u + u^2) |a b|). TF32 counts on the CUDA backend
/// only (the CPU computes it in FP32). Returns rtol and writes how it was
/// made to `why`.
static double precisionTolerance(const VerifyOptions &o, ModuleOp compiled,
                                 std::string &why) {
  StringRef p = o.compile.precision;
  double u = unitRoundoff(o);
  if (u == 0)
    return o.rtol;
  int64_t depth = lowPrecisionDepth(compiled);
  double rtol = o.rtol + 2 * u * static_cast<double>(depth);
  why = llvm::formatv("precision {0}: rtol = {1:e2} + 2u * D = {2:e3} (u = "
                      "2^-{3} the {0} unit roundoff of the GEMM inputs, D = "
                      "{4} low-precision GEMMs on the deepest path), plus "
                      "per element |the program in {0} on one rank - the "
                      "FP32 reference|: the rounding's effect as the program "
                      "propagates it (a normalisation divides it by the "
                      "row's spread)",
                      p, o.rtol, rtol, p == "bf16" ? 8 : 11, depth);
  return rtol;
}

/// --debug-perturb: plants a wrong element 0 (`relative` of max |ref|).
static void perturb(rt::Tensor &got, const rt::Tensor &ref, double relative) {
  if (got.getNumElements() == 0 || !rt::isFloatDType(got.getDType()))
    return;
  double scale = 0;
  for (int64_t k = 0; k < ref.getNumElements(); ++k)
    scale = std::max(scale, std::fabs(ref.getAsDouble(k)));
  got.setFromDouble(0, got.getAsDouble(0) + relative * scale);
}

int driver::runVerify(MLIRContext &ctx, const VerifyOptions &o) {
  if (o.backend != "cpu" && o.backend != "cuda")
    return fail("--backend must be cpu or cuda, got '" + o.backend + "'");
  if (!(o.rtol >= 0) || !(o.atol >= 0))
    return fail("--rtol and --atol must be non-negative");
  // Where programs, weights and outputs go.
  FailureOr<std::string> work = makeWorkDir(o.workDir, "autoshard-verify");
  if (failed(work))
    return 1;
  auto path = [&](StringRef name) {
    SmallString<128> p(*work);
    llvm::sys::path::append(p, name);
    return std::string(p);
  };
  CompileOptions compileOptions = o.compile;
  if (compileOptions.weightsDir.empty())
    compileOptions.weightsDir = path("weights");
  OwningOpRef<ModuleOp> original = loadInput(ctx, compileOptions);
  if (!original)
    return 1;
  auto meshAttr = (*original)->getAttrOfType<dist::MeshAttr>(
      dist::DistDialect::kMeshAttrName);
  OwningOpRef<ModuleOp> partitioned = original->clone();
  if (failed(compile(*partitioned, o.compile)))
    return 1;
  if (!meshAttr)
    meshAttr =
        (*partitioned)
            ->getAttrOfType<dist::MeshAttr>(dist::DistDialect::kMeshAttrName);
  if (!meshAttr)
    return fail("no mesh: give --mesh or a dist.mesh module attribute");
  std::string toleranceWhy;
  double rtol = precisionTolerance(o, *partitioned, toleranceWhy);
  int ranks = o.ranks ? o.ranks : meshAttr.getNumDevices();
  if (ranks != meshAttr.getNumDevices())
    return fail("--ranks " + Twine(ranks) + " does not match the mesh's " +
                Twine(meshAttr.getNumDevices()) + " devices");

  std::string originalPath = path("original.mlir");
  std::string partitionedPath = path("partitioned.mlir");
  if (failed(writeModule(*original, originalPath)) ||
      failed(writeModule(*partitioned, partitionedPath)))
    return fail("cannot write programs into '" + *work + "'");
  FailureOr<RankTools> tools = findRankTools(o.argv0);
  if (failed(tools))
    return 1;

  std::string refDir = path("reference"), distDir = path("partitioned");
  llvm::outs() << "autoshard verify: " << o.compile.input << " on "
               << meshAttr.toDeviceMesh().str() << ", " << ranks
               << " ranks, backend " << o.backend << "\n";
  if (!toleranceWhy.empty())
    llvm::outs() << "  " << toleranceWhy << "\n";
  llvm::outs().flush();
  if (runProgram(*tools, originalPath, 1, refDir, o) ||
      runProgram(*tools, partitionedPath, ranks, distDir, o))
    return 1;

  std::string magDir = path("magnitude");
  if (runProgram(*tools, originalPath, 1, magDir, o, /*magnitudes=*/true))
    return 1;
  // The precision's rounding, measured: the original program with the same
  // casts on one rank. Its distance from the FP32 reference carries the
  // rounding through the program's real Jacobian -- a layer norm after a
  // GEMM divides the GEMM's error by the row's spread, which no bound
  // against |inputs| sees (test/Precision/verify-norm.test).
  std::string lowDir;
  if (unitRoundoff(o) != 0) {
    OwningOpRef<ModuleOp> low = original->clone();
    std::string lowPath = path("reference-" + o.compile.precision + ".mlir");
    lowDir = path("reference-" + o.compile.precision);
    if (failed(runPipeline(*low, "dist-mixed-precision{precision=" +
                                     o.compile.precision + "}")) ||
        failed(writeModule(*low, lowPath)))
      return fail("cannot make the " + o.compile.precision +
                  " program for one rank in '" + *work + "'");
    if (runProgram(*tools, lowPath, 1, lowDir, o))
      return 1;
  }

  // Compare every output the reference run wrote.
  int numOutputs = 0;
  bool ok = true;
  for (int i = 0;; ++i) {
    std::string name = "output_" + std::to_string(i) + ".npy";
    std::string ref = refDir + "/" + name;
    if (!llvm::sys::fs::exists(ref))
      break;
    ++numOutputs;
    try {
      rt::Tensor got = rt::readNpy(distDir + "/" + name),
                 want = rt::readNpy(ref),
                 mag = rt::readNpy(magDir + "/" + name);
      std::optional<rt::Tensor> low;
      if (!lowDir.empty())
        low = rt::readNpy(lowDir + "/" + name);
      if (i == 0 && o.debugPerturb != 0)
        perturb(got, want, o.debugPerturb);
      Comparison c =
          compareOutput(got, want, mag, low ? &*low : nullptr, rtol, o.atol);
      llvm::outs() << llvm::formatv(
          "  output {0} {1}: max abs err {2:e3}, max err/bound {3:f3}  {4}\n",
          i, want.getTypeString(), c.maxAbs, c.worstRatio,
          c.mismatch.empty() ? "ok" : "MISMATCH");
      if (!c.mismatch.empty()) {
        llvm::outs() << "    " << c.mismatch << "\n";
        ok = false;
      }
    } catch (const rt::Error &e) {
      llvm::outs() << "  output " << i << ": " << e.what() << "\n";
      ok = false;
    }
  }
  if (numOutputs == 0)
    return fail("the reference run wrote no outputs into '" + refDir + "'");
  llvm::outs() << "autoshard verify: " << (ok ? "PASS" : "FAIL") << " ("
               << numOutputs << " output" << (numOutputs == 1 ? "" : "s")
               << "; per element |got - ref| <= atol + rtol * M, M = "
                  "min(max(|ref|, the program on |inputs|), the output's "
                  "max |ref|)"
               << (lowDir.empty()
                       ? ""
                       : " + |the program in " + o.compile.precision +
                             " on one rank - ref|")
               << "; rtol "
               << llvm::format("%.3g (%g float32 eps), atol %g", rtol,
                               rtol / 0x1p-23, o.atol);
  if (o.compile.precision != "fp32")
    llvm::outs() << ", precision " << o.compile.precision;
  llvm::outs() << ")\n";
  return ok ? 0 : 1;
}
