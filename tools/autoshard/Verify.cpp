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

static LogicalResult failWith(const Twine &msg) {
  fail(msg);
  return failure();
}

/// One `autoshard-run PROGRAM` on `ranks` ranks, writing outputs to outDir;
/// seeded weights scaled like real initialisers; `magnitudes`: on |inputs|;
/// `cpu`: on the CPU backend whatever --backend says.
static int runProgram(const RankTools &tools, StringRef program, int ranks,
                      StringRef outDir, const VerifyOptions &o,
                      bool magnitudes = false, bool cpu = false) {
  SmallVector<std::string> args = {"--seed", std::to_string(o.seed),
                                   "--output-dir", outDir.str(),
                                   "--fan-in-init"};
  if (magnitudes)
    args.push_back("--abs-inputs");
  if (o.backend != "cpu" && !cpu)
    args.push_back("--backend=" + o.backend);
  return runRanks(tools, program, ranks, args);
}

namespace {
struct Comparison {
  double maxAbs = 0;     // largest |got - ref| of the finite elements
  double worstRatio = 0; // largest |got - ref| / bound
  double fp32 = 0;       // the FP32 rounding term added to every bound
  std::string mismatch;  // the first element out of bounds, if any
};

/// The one-rank runs that measure rounding (null where not run): the
/// program at the --precision, and the program in f64.
struct Measured {
  const rt::Tensor *low = nullptr, *wide = nullptr;
};
} // namespace

/// The largest finite |a - b|.
static double maxDistance(const rt::Tensor &a, const rt::Tensor &b) {
  double m = 0;
  for (int64_t k = 0; k < a.getNumElements(); ++k) {
    double d = std::fabs(a.getAsDouble(k) - b.getAsDouble(k));
    if (std::isfinite(d))
      m = std::max(m, d);
  }
  return m;
}

/// The FP32 rounding term: twice the output's largest distance of the FP32
/// reference from the program in f64. The partitioned run rounds as the
/// reference does but in another summation order, so its error is another
/// sample of the same kind, not the same per element: one element's
/// measured distance can be ~0 by chance, and so can one row's, since after
/// a normalisation most of a row's error is one number (the error of its
/// mean, divided by its spread; Inputs/verify-norm.mlir: a row measured
/// 2.7e-06 whose partitioned error was 5.1e-06). The largest over the
/// output takes the worst of many such samples; twice it covers a second
/// sample of it. A wrong element stands out as long as the program's FP32
/// rounding is well below it (verify-norm: 1.7e-05 against a planted 1e-3
/// of the output's scale, 2.8e-03).
static double fp32Rounding(const rt::Tensor &ref, const rt::Tensor *wide) {
  if (!wide)
    return 0;
  if (wide->getShape() != ref.getShape())
    throw rt::Error("the one-rank run in f64 gave " + wide->getTypeString() +
                    " for " + ref.getTypeString());
  return 2 * maxDistance(ref, *wide);
}

/// The tolerance rule (see VerifyOptions::rtol): non-finite elements must be
/// identical (the same inf, NaN where NaN); finite ones within
/// atol + rtol * M + |low - ref| + fp32Rounding, M = min(max(|ref|, |mag|),
/// max |ref| of the output); `low` (a --precision run) is the program at the
/// precision on one rank.
static Comparison compareOutput(const rt::Tensor &got, const rt::Tensor &ref,
                                const rt::Tensor &mag, Measured measured,
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
  const rt::Tensor *low = measured.low;
  if (low && low->getShape() != ref.getShape())
    throw rt::Error("the one-rank run at the precision gave " +
                    low->getTypeString() + " for " + ref.getTypeString());
  c.fp32 = fp32Rounding(ref, measured.wide);
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
      double bound = atol + rtol * m + c.fp32;
      // The precision's own error as the program propagates it (a
      // non-finite one adds nothing: the mismatch is then reported).
      double lowDistance = low ? std::fabs(low->getAsDouble(k) - b) : 0;
      if (std::isfinite(lowDistance))
        bound += lowDistance;
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

namespace {
/// What verify runs: the programs it writes into the work directory and
/// the directories their outputs go to. An empty program is not run.
struct VerifyPlan {
  std::string work;
  dist::MeshAttr mesh;
  int ranks = 0;
  double rtol = 0;
  std::string toleranceWhy; // how a --precision made rtol
  std::string original, partitioned, wide, low;
  std::string refDir, distDir, magDir, wideDir, lowDir;

  std::string path(StringRef name) const {
    SmallString<128> p(work);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
};
} // namespace

/// Writes `module` after `pipeline` as NAME.mlir in the work directory;
/// returns its path.
static FailureOr<std::string> writeVariant(const VerifyPlan &plan,
                                           ModuleOp original,
                                           StringRef pipeline, StringRef name,
                                           StringRef what) {
  OwningOpRef<ModuleOp> variant = original.clone();
  std::string file = plan.path((name + ".mlir").str());
  if (failed(runPipeline(*variant, pipeline)) ||
      failed(writeModule(*variant, file))) {
    return failWith("cannot make the " + what + " program for one rank in '" +
                    plan.work + "'");
  }
  return file;
}

/// Phase 1: compiles the input and writes the programs verify runs -- the
/// original, the partitioned, the original in f64 (unless --rtol fixes the
/// rule; run only if needed) and the original at a --precision below FP32.
static FailureOr<VerifyPlan> buildPrograms(MLIRContext &ctx,
                                           const VerifyOptions &o) {
  VerifyPlan plan;
  FailureOr<std::string> work = makeWorkDir(o.workDir, "autoshard-verify");
  if (failed(work))
    return failure();
  plan.work = *work;
  CompileOptions compileOptions = o.compile;
  if (compileOptions.weightsDir.empty())
    compileOptions.weightsDir = plan.path("weights");
  OwningOpRef<ModuleOp> original = loadInput(ctx, compileOptions);
  if (!original)
    return failure();
  OwningOpRef<ModuleOp> partitioned = original->clone();
  if (failed(compile(*partitioned, o.compile)))
    return failure();
  for (ModuleOp m : {*original, *partitioned})
    if (!plan.mesh)
      plan.mesh =
          m->getAttrOfType<dist::MeshAttr>(dist::DistDialect::kMeshAttrName);
  if (!plan.mesh)
    return failWith("no mesh: give --mesh or a dist.mesh module attribute");
  plan.rtol = precisionTolerance(o, *partitioned, plan.toleranceWhy);
  plan.ranks = o.ranks ? o.ranks : plan.mesh.getNumDevices();
  if (plan.ranks != plan.mesh.getNumDevices())
    return failWith("--ranks " + Twine(plan.ranks) +
                    " does not match the mesh's " +
                    Twine(plan.mesh.getNumDevices()) + " devices");
  plan.original = plan.path("original.mlir");
  plan.partitioned = plan.path("partitioned.mlir");
  if (failed(writeModule(*original, plan.original)) ||
      failed(writeModule(*partitioned, plan.partitioned)))
    return failWith("cannot write programs into '" + plan.work + "'");
  plan.refDir = plan.path("reference");
  plan.distDir = plan.path("partitioned");
  plan.magDir = plan.path("magnitude");
  if (!o.rtolGiven) {
    FailureOr<std::string> wide =
        writeVariant(plan, *original, "dist-widen-f64", "reference-f64", "f64");
    if (failed(wide))
      return failure();
    plan.wide = *wide;
    plan.wideDir = plan.path("reference-f64");
  }
  if (unitRoundoff(o) != 0) {
    StringRef p = o.compile.precision;
    FailureOr<std::string> low = writeVariant(
        plan, *original, ("dist-mixed-precision{precision=" + p + "}").str(),
        ("reference-" + p).str(), p);
    if (failed(low))
      return failure();
    plan.low = *low;
    plan.lowDir = plan.path(("reference-" + p).str());
  }
  return plan;
}

/// Phase 2: the reference on one rank, the partitioned program on N, and
/// the reference on |inputs| (what rtol scales). Nonzero on failure.
static int runPrograms(const RankTools &tools, const VerifyPlan &plan,
                       const VerifyOptions &o) {
  return runProgram(tools, plan.original, 1, plan.refDir, o) ||
         runProgram(tools, plan.partitioned, plan.ranks, plan.distDir, o) ||
         runProgram(tools, plan.original, 1, plan.magDir, o,
                    /*magnitudes=*/true);
}

/// Phase 3: the rounding, measured: for --precision, the program with the
/// same casts; with `wide`, the program in f64 (on the CPU: its distance
/// from the reference is then the reference's own FP32 rounding on
/// whichever backend). Their distances from the FP32 reference carry the
/// rounding through the program's real Jacobian -- a layer norm after a
/// GEMM divides the GEMM's error by the row's spread, which no bound
/// against |inputs| sees (test/Precision/verify-norm.test, verify-fp32.test).
static int measurePrecision(const RankTools &tools, const VerifyPlan &plan,
                            const VerifyOptions &o, bool wide) {
  if (wide)
    return runProgram(tools, plan.wide, 1, plan.wideDir, o, false,
                      /*cpu=*/true);
  if (!plan.low.empty() && runProgram(tools, plan.low, 1, plan.lowDir, o))
    return 1;
  return 0;
}

/// Phase 4: compares every output the reference run wrote, with the FP32
/// term if `wide`; writes a line per output to `report`. Returns how many
/// outputs there were (0: none) and sets `ok`.
static int compareOutputs(const VerifyPlan &plan, const VerifyOptions &o,
                          bool wide, std::string &report, bool &ok) {
  llvm::raw_string_ostream os(report);
  int numOutputs = 0;
  ok = true;
  for (int i = 0;; ++i) {
    std::string name = "output_" + std::to_string(i) + ".npy";
    std::string ref = plan.refDir + "/" + name;
    if (!llvm::sys::fs::exists(ref))
      return numOutputs;
    ++numOutputs;
    try {
      rt::Tensor got = rt::readNpy(plan.distDir + "/" + name),
                 want = rt::readNpy(ref),
                 mag = rt::readNpy(plan.magDir + "/" + name);
      std::optional<rt::Tensor> low, f64;
      if (!plan.lowDir.empty())
        low = rt::readNpy(plan.lowDir + "/" + name);
      if (wide)
        f64 = rt::readNpy(plan.wideDir + "/" + name);
      if (i == 0 && o.debugPerturb != 0)
        perturb(got, want, o.debugPerturb);
      Measured measured{low ? &*low : nullptr, f64 ? &*f64 : nullptr};
      Comparison c = compareOutput(got, want, mag, measured, plan.rtol, o.atol);
      os << llvm::formatv("  output {0} {1}: max abs err {2:e3}, max "
                          "err/bound {3:f3}",
                          i, want.getTypeString(), c.maxAbs, c.worstRatio);
      if (wide)
        os << llvm::formatv(", FP32 rounding term {0:e3}", c.fp32);
      os << (c.mismatch.empty() ? "  ok\n" : "  MISMATCH\n");
      if (!c.mismatch.empty()) {
        os << "    " << c.mismatch << "\n";
        ok = false;
      }
    } catch (const rt::Error &e) {
      os << "  output " << i << ": " << e.what() << "\n";
      ok = false;
    }
  }
}

/// The closing line: the verdict and the rule it was reached by.
static void printVerdict(const VerifyPlan &plan, const VerifyOptions &o,
                         int numOutputs, bool ok, bool wide) {
  StringRef p = o.compile.precision;
  llvm::outs() << "autoshard verify: " << (ok ? "PASS" : "FAIL") << " ("
               << numOutputs << " output" << (numOutputs == 1 ? "" : "s")
               << "; per element |got - ref| <= atol + rtol * M, M = "
                  "min(max(|ref|, the program on |inputs|), the output's "
                  "max |ref|)"
               << (plan.low.empty()
                       ? ""
                       : " + |the program in " + p + " on one rank - ref|")
               << (wide ? " + 2 max over the output |the program in f64 on "
                          "one rank - ref|"
                        : "")
               << "; rtol "
               << llvm::format("%.3g (%g float32 eps), atol %g", plan.rtol,
                               plan.rtol / 0x1p-23, o.atol);
  if (p != "fp32")
    llvm::outs() << ", precision " << p;
  llvm::outs() << ")\n";
}

int driver::runVerify(MLIRContext &ctx, const VerifyOptions &o) {
  if (o.backend != "cpu" && o.backend != "cuda")
    return fail("--backend must be cpu or cuda, got '" + o.backend + "'");
  if (!(o.rtol >= 0) || !(o.atol >= 0))
    return fail("--rtol and --atol must be non-negative");
  FailureOr<VerifyPlan> plan = buildPrograms(ctx, o);
  if (failed(plan))
    return 1;
  FailureOr<RankTools> tools = findRankTools(o.argv0);
  if (failed(tools))
    return 1;
  llvm::outs() << "autoshard verify: " << o.compile.input << " on "
               << plan->mesh.toDeviceMesh().str() << ", " << plan->ranks
               << " ranks, backend " << o.backend << "\n";
  if (!plan->toleranceWhy.empty())
    llvm::outs() << "  " << plan->toleranceWhy << "\n";
  llvm::outs().flush();
  if (runPrograms(*tools, *plan, o) ||
      measurePrecision(*tools, *plan, o, /*wide=*/false))
    return 1;
  std::string report;
  bool ok = true;
  int numOutputs = compareOutputs(*plan, o, /*wide=*/false, report, ok);
  if (numOutputs == 0)
    return fail("the reference run wrote no outputs into '" + plan->refDir +
                "'");
  // The FP32 term only widens bounds, so a verdict of PASS without it
  // stands: the program in f64 runs only when the rule without it refuses
  // an element (no cost for the programs that pass).
  bool wide = !ok && !plan->wide.empty();
  if (wide) {
    llvm::outs() << "  FP32 rounding: the rule refused an element; adding 2 "
                    "max over each output |the program in f64 on one rank - "
                    "the FP32 reference|: the reference's rounding as the "
                    "program propagates it (the partitioned run's is of the "
                    "same kind in another summation order)\n";
    llvm::outs().flush();
    if (measurePrecision(*tools, *plan, o, /*wide=*/true))
      return 1;
    report.clear();
    compareOutputs(*plan, o, /*wide=*/true, report, ok);
  }
  llvm::outs() << report;
  printVerdict(*plan, o, numOutputs, ok, wide);
  return ok ? 0 : 1;
}
