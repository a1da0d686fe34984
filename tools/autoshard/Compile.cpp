//===- Compile.cpp - The autoshard driver's compile step ------------------===//

#include "Compile.h"

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#ifdef AUTOSHARD_HAVE_ONNX
#include "autoshard/Import/OnnxImporter.h"
#endif
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
  module = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
  if (!module)
    return {};
  if (!options.mesh.empty() && failed(applyMesh(*module, options.mesh)))
    return {};
  return module;
}

std::string driver::compilePipeline(const CompileOptions &options) {
  std::string pipeline;
  llvm::raw_string_ostream os(pipeline);
  os << "autoshard-pipeline{solver=" << options.solver;
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
  return pm.run(module);
}

LogicalResult driver::compile(ModuleOp module, const CompileOptions &options) {
  if (!PassPipelineInfo::lookup("autoshard-pipeline"))
    return fail("the autoshard-pipeline is not registered in this build");
  return runPipeline(module, compilePipeline(options));
}
