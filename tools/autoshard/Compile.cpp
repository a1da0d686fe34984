//===- Compile.cpp - The autoshard driver's compile step ------------------===//

#include "Compile.h"

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "autoshard/Dialect/Dist/IR/ParseGuard.h"
#ifdef AUTOSHARD_HAVE_ONNX
#include "autoshard/Import/OnnxImporter.h"
#endif
#include "autoshard/Lower/ProgramLoader.h"
#include "autoshard/Runtime/PlanFile.h"
#include "autoshard/Support/DeviceMesh.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace autoshard;
using namespace autoshard::driver;

static LogicalResult fail(const Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "autoshard") << msg << "\n";
  return failure();
}

/// Sets (or checks) the module's default mesh from --mesh.
static LogicalResult applyMesh(ModuleOp module, StringRef spec) {
  std::string err;
  std::optional<DeviceMesh> mesh = DeviceMesh::parse(spec.str(), err);
  if (!mesh)
    return fail("--mesh: " + err);
  auto attr = dist::MeshAttr::get(module.getContext(), *mesh);
  if (auto existing = module->getAttrOfType<dist::MeshAttr>(
          dist::DistDialect::kMeshAttrName)) {
    if (!(existing.toDeviceMesh() == *mesh))
      return fail("--mesh " + spec + " differs from the input's mesh " +
                  existing.toDeviceMesh().str());
    return success();
  }
  module->setAttr(dist::DistDialect::kMeshAttrName, attr);
  return success();
}

/// Where an ONNX input's weights go unless --weights-dir says: a directory
/// named for the output (out/prog.mlir -> out/prog.weights), or for the model
/// when the program goes to stdout (./model.weights). Never one shared
/// directory: two models would overwrite each other's files (the program
/// also records each file's checksum, so a run notices).
std::string driver::defaultWeightsDir(const CompileOptions &options) {
  SmallString<256> dir;
  if (options.output.empty() || options.output == "-")
    dir = llvm::sys::path::filename(options.input);
  else
    dir = options.output;
  llvm::sys::path::replace_extension(dir, "weights");
  return std::string(dir);
}

OwningOpRef<ModuleOp> driver::loadInput(MLIRContext &ctx,
                                        const CompileOptions &options) {
  if (!llvm::sys::fs::exists(options.input)) {
    (void)fail("no such file: '" + options.input + "'");
    return {};
  }
  OwningOpRef<ModuleOp> module;
  if (llvm::sys::path::extension(options.input) == ".onnx") {
#ifdef AUTOSHARD_HAVE_ONNX
    OnnxImportOptions importOptions;
    importOptions.strategyFile = options.strategyFile;
    importOptions.weightsDir = options.weightsDir.empty()
                                   ? defaultWeightsDir(options)
                                   : options.weightsDir;
    for (const std::string &f : options.freeze) {
      auto [name, file] = llvm::StringRef(f).split('=');
      if (name.empty() || file.empty()) {
        (void)fail("--freeze '" + f + "': expected NAME=FILE.npy");
        return {};
      }
      importOptions.freeze.emplace_back(name.str(), file.str());
    }
    module = importOnnxFile(options.input, &ctx, importOptions);
    if (module && !options.mesh.empty() &&
        failed(applyMesh(*module, options.mesh)))
      return {};
    return module;
#else
    (void)fail("'" + options.input +
               "': this build has no ONNX importer (libonnx-dev missing)");
    return {};
#endif
  }
  if (!options.strategyFile.empty()) {
    (void)fail("--strategy applies to ONNX input; annotate .mlir files with "
               "dist.annotate / dist.strategy");
    return {};
  }
  llvm::SourceMgr sourceMgr;
  std::string err;
  auto buffer = mlir::openInputFile(options.input, &err);
  if (!buffer) {
    (void)fail(err);
    return {};
  }
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
  if (failed(checkParserHazards(sourceMgr, &ctx)))
    return {};
  module = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
  if (!module)
    return {};
  if (!options.mesh.empty() && failed(applyMesh(*module, options.mesh)))
    return {};
  return module;
}

LogicalResult driver::checkPrecision(StringRef precision) {
  if (!llvm::is_contained({"fp32", "tf32", "bf16", "fp16"}, precision))
    return fail("unknown --precision '" + precision +
                "' (expected fp32, tf32, bf16 or fp16)");
  return success();
}

std::string driver::compilePipeline(const CompileOptions &options) {
  std::string pipeline;
  llvm::raw_string_ostream os(pipeline);
  // After the training step (trainPipeline puts it first), before
  // propagation: the cost model prices the 2-byte GEMM inputs.
  if (options.precision != "fp32")
    os << "dist-mixed-precision{precision=" << options.precision << "},";
  os << "autoshard-pipeline{solver=" << options.solver;
  if (options.exactBudget)
    os << " exact-budget=" << options.exactBudget;
  if (options.enableAllToAll)
    os << " enable-alltoall=true";
  if (!options.report.empty())
    os << " report=" << options.report;
  if (!options.cluster.empty())
    os << " cluster=" << options.cluster;
  // Gradient fusion (training steps only; a forward has no gradients).
  os << " fusion-threshold-mb="
     << llvm::format("%.17g", options.fusionThresholdMb);
  if (!options.fusionReport.empty())
    os << " fusion-report=" << options.fusionReport;
  os << "}";
  return pipeline;
}

LogicalResult driver::runPipeline(ModuleOp module, StringRef pipeline) {
  // Parsed into a module-anchored PassManager: no builtin.module() wrapper,
  // which would nest the pipeline on (non-existent) inner modules.
  PassManager pm(module.getContext());
  std::string parseErr;
  llvm::raw_string_ostream errOs(parseErr);
  if (failed(parsePassPipeline(pipeline, pm, errOs)))
    return fail("bad pipeline '" + pipeline + "': " + parseErr);
  // Without a handler MLIR prints errors and drops warnings (e.g. the exact
  // solver stopping at its budget): print those as autoshard-opt does;
  // everything else goes on to the default handling.
  ScopedDiagnosticHandler warnings(module.getContext(), [](Diagnostic &d) {
    if (d.getSeverity() != DiagnosticSeverity::Warning)
      return failure();
    if (auto at = d.getLocation()->findInstanceOf<FileLineColLoc>())
      llvm::errs() << at.getFilename().getValue() << ":" << at.getLine()
                   << ":" << at.getColumn();
    else
      llvm::errs() << d.getLocation();
    llvm::errs() << ": warning: " << d << "\n";
    return success();
  });
  return pm.run(module);
}

LogicalResult driver::compile(ModuleOp module, const CompileOptions &options) {
  if (!PassPipelineInfo::lookup("autoshard-pipeline"))
    return fail("the autoshard-pipeline is not registered in this build");
  if (failed(checkPrecision(options.precision)))
    return failure();
  return runPipeline(module, compilePipeline(options));
}

//===----------------------------------------------------------------------===//
// Plan files
//===----------------------------------------------------------------------===//

bool driver::isPlanFile(StringRef output) {
  return llvm::sys::path::extension(output) == ".asplan";
}

/// The lowering `options` ask for; $AUTOSHARD_KERNELS and
/// $AUTOSHARD_COMPILE_THRESHOLD stand in for flags not given (e.g. the whole
/// lit suite with every loop nest compiled).
static FailureOr<LowerOptions> getLowerOptions(const CompileOptions &options) {
  if (options.backend != "cpu" && options.backend != "cuda")
    return fail("unknown --backend '" + options.backend +
                "' (expected cpu or cuda)");
  std::string modeText = options.kernels;
  if (const char *env = std::getenv("AUTOSHARD_KERNELS");
      env && *env && modeText.empty())
    modeText = env;
  std::optional<KernelMode> mode =
      parseKernelMode(modeText.empty() ? "auto" : modeText);
  if (!mode)
    return fail("unknown --kernels '" + modeText +
                "' (expected auto, compiled or interpreted)");
  int64_t threshold = options.compileThreshold.value_or(1);
  if (const char *env = std::getenv("AUTOSHARD_COMPILE_THRESHOLD");
      env && *env && !options.compileThreshold)
    threshold = std::atoll(env);
  LowerOptions lower;
  // For the CUDA backend the loop nests become PTX (GpuKernelCompiler.h).
  lower.kernels.mode = *mode;
  lower.kernels.gpu = options.backend == "cuda";
  lower.kernels.compileThreshold = threshold;
  lower.kernels.fuse = options.kernelFusion;
  lower.gemmContractions = options.gemmContractions;
  return lower;
}

/// The input of --lower-only, parsed with its diagnostics collected into
/// `diagText` (autoshard-run reports them as one agreed error).
static OwningOpRef<ModuleOp> parseForLowering(MLIRContext &ctx,
                                              const std::string &path,
                                              llvm::SourceMgr &sourceMgr,
                                              std::string &diagText) {
  std::string errorMessage;
  auto file = mlir::openInputFile(path, &errorMessage);
  if (!file) {
    (void)fail(errorMessage);
    return {};
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module;
  if (succeeded(checkParserHazards(sourceMgr, &ctx)))
    module = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
  if (!module)
    (void)fail("cannot parse '" + path + "':\n" + diagText);
  return module;
}

/// Weight files are named relative to the program: for an .mlir input its
/// own directory, for an ONNX model the output's (where the importer put
/// them). The plan names those under its own directory relative to itself,
/// so the directory can move, and the others by absolute path.
static void resolveWeightFiles(rt::Program &program,
                               const CompileOptions &options) {
  auto absolute = [](const Twine &file) {
    SmallString<256> path;
    file.toVector(path);
    (void)llvm::sys::fs::make_absolute(path);
    llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
    return path;
  };
  bool onnx = llvm::sys::path::extension(options.input) == ".onnx";
  SmallString<256> base = absolute(onnx ? options.output : options.input);
  llvm::sys::path::remove_filename(base);
  SmallString<256> planDir = absolute(options.output);
  llvm::sys::path::remove_filename(planDir);
  for (rt::ProgramIO &io : program.inputs) {
    if (io.file.empty())
      continue;
    SmallString<256> path = llvm::sys::path::is_absolute(io.file)
                                ? absolute(io.file)
                                : absolute(base + "/" + io.file);
    StringRef rest = path;
    if (rest.consume_front(planDir) && rest.consume_front("/"))
      io.file = rest.str();
    else
      io.file = std::string(path);
  }
}

int driver::compileToPlan(MLIRContext &ctx, const CompileOptions &options) {
  FailureOr<LowerOptions> lower = getLowerOptions(options);
  if (failed(lower))
    return 1;
  // Diagnostics are collected: --lower-only errors come as one message (what
  // autoshard-run prints), and lowering notes stay with their error.
  std::string diagText;
  llvm::raw_string_ostream diagStream(diagText);
  llvm::SourceMgr sourceMgr;
  OwningOpRef<ModuleOp> module;
  {
    SourceMgrDiagnosticHandler handler(sourceMgr, &ctx, diagStream);
    if (options.lowerOnly) {
      if (!options.strategyFile.empty() || !options.mesh.empty() ||
          options.precision != "fp32") {
        (void)fail("--lower-only takes a partitioned program: --mesh, "
                   "--strategy and --precision do not apply");
        return 1;
      }
      module = parseForLowering(ctx, options.input, sourceMgr, diagText);
      if (!module)
        return 1;
    }
  }
  if (!options.lowerOnly) {
    module = loadInput(ctx, options);
    if (!module || failed(compile(*module, options)))
      return 1;
  }
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx, diagStream);
  FailureOr<rt::Program> program =
      lowerToProgram(*module, options.entry, *lower);
  if (failed(program)) {
    (void)fail(Twine(options.lowerOnly ? "cannot run '" : "cannot lower '") +
               options.input + "':\n" + diagText);
    return 1;
  }
  // Warnings of a successful lowering (e.g. kernels left interpreted).
  llvm::errs() << diagText;
  resolveWeightFiles(*program, options);
  rt::Plan plan;
  plan.programs.push_back(std::move(*program));
  try {
    rt::writePlanFile(options.output, plan);
  } catch (const rt::Error &e) {
    (void)fail(e.what());
    return 1;
  }
  return 0;
}
