//===- Train.cpp - autoshard train: training steps on MPI ranks -----------===//
//
// Model -> --dist-training-step -> autoshard-pipeline -> train_step.mlir in
// the work dir -> `mpirun -np N autoshard-run train_step.mlir --steps N`.
// Everything that can be wrong with the command line (options, batch sizes
// against the data axis, rank count) is one error line before anything
// runs.
//
//===----------------------------------------------------------------------===//

#include "Train.h"
#include "Launch.h"

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "autoshard/Runtime/HostIO.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>

using namespace mlir;
using namespace autoshard;
using namespace autoshard::driver;

static int fail(const Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "autoshard") << msg << "\n";
  return 1;
}

/// The shortest text that reads back as `v`: pass options are parsed from
/// text, and "%g" would round 1e-8-sized values or learning rates.
static std::string formatDouble(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

/// What can be checked before reading the model. Returns the exit code.
static int checkOptions(const TrainOptions &o) {
  if (o.labels.empty())
    return fail("--labels FILE.npy is required (the loss's targets, split "
                "like the inputs)");
  if (!llvm::is_contained({"cross_entropy", "mse"}, o.loss))
    return fail("--loss must be cross_entropy or mse, got '" + o.loss + "'");
  if (!llvm::is_contained({"sgd", "momentum", "adam", "adamw"}, o.optimizer))
    return fail("--optimizer must be sgd, momentum, adam or adamw, got '" +
                o.optimizer + "'");
  if (o.steps < 1)
    return fail("--steps must be at least 1, got " + Twine(o.steps));
  if (o.backend != "cpu" && o.backend != "cuda")
    return fail("--backend must be cpu or cuda, got '" + o.backend + "'");
  for (const std::string &spec : o.inputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return fail("--input expects NAME=FILE.npy, got '" + spec + "'");
    if (spec.substr(0, eq) == "labels")
      return fail("--input labels=...: give the labels with --labels");
  }
  return 0;
}

/// The mesh axis the batch is split over: --data-axis, else `dp` when the
/// mesh has it, else its first axis; "" for --data-axis none.
static FailureOr<std::string> resolveDataAxis(const DeviceMesh &mesh,
                                              StringRef requested) {
  if (requested == "none")
    return std::string();
  if (requested.empty())
    return mesh.getAxisIndex("dp") ? std::string("dp") : mesh.getAxis(0).name;
  if (!mesh.getAxisIndex(requested.str())) {
    (void)fail("--data-axis '" + requested + "' is not an axis of mesh " +
               mesh.str() + " (or 'none')");
    return failure();
  }
  return requested.str();
}

/// The names --input may give a parameter of the forward function by (its
/// dist.name, argN, N): parameters start from files that way, and are not
/// batches.
static llvm::StringSet<> parameterNames(ModuleOp module, StringRef entry) {
  llvm::StringSet<> names;
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func)
    return names;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (!func.getArgAttr(i, "dist.param") && !func.getArgAttr(i, "dist.weight"))
      continue;
    if (auto name = func.getArgAttrOfType<StringAttr>(i, "dist.name"))
      names.insert(name.getValue());
    names.insert(("arg" + Twine(i)).str());
    names.insert(std::to_string(i));
  }
  return names;
}

/// Every input batch and the labels must split evenly on dim 0 over the
/// data axis: each rank of a data-parallel group takes the same share.
static int checkBatches(const TrainOptions &o, ModuleOp module,
                        const DeviceMesh &mesh, StringRef axis) {
  if (axis.empty())
    return 0;
  int64_t size = mesh.getAxisSize(*mesh.getAxisIndex(axis.str()));
  llvm::StringSet<> params = parameterNames(module, o.entry);
  SmallVector<std::pair<std::string, std::string>> files;
  for (const std::string &spec : o.inputs)
    if (!params.contains(spec.substr(0, spec.find('='))))
      files.push_back({"--input " + spec, spec.substr(spec.find('=') + 1)});
  files.push_back({"--labels " + o.labels, o.labels});
  for (const auto &[what, file] : files) {
    rt::NpyHeader header;
    try {
      header = rt::readNpyHeader(file);
    } catch (const rt::Error &e) {
      return fail(what + ": " + e.what());
    }
    std::string type = std::string(rt::stringifyDType(header.type)) + "[" +
                       rt::stringifyShape(header.shape) + "]";
    if (header.shape.empty())
      return fail(what + ": " + type +
                  " has no batch dim 0 to split over "
                  "data axis '" +
                  axis + "'");
    if (header.shape[0] % size != 0)
      return fail(what + ": batch dim 0 of " + type + " (" +
                  Twine(header.shape[0]) + ") does not divide by data axis '" +
                  axis + "' of size " + Twine(size));
  }
  return 0;
}

/// Relative dist.weight paths are relative to the model file, but the
/// program runs from the work dir: make them absolute.
static void absolutizeWeights(ModuleOp module, StringRef modelPath) {
  SmallString<256> dir(modelPath);
  llvm::sys::path::remove_filename(dir);
  (void)llvm::sys::fs::make_absolute(dir);
  for (auto func : module.getOps<func::FuncOp>())
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto file = func.getArgAttrOfType<StringAttr>(i, "dist.weight");
      if (!file || llvm::sys::path::is_absolute(file.getValue()))
        continue;
      SmallString<256> path(dir);
      llvm::sys::path::append(path, file.getValue());
      llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
      func.setArgAttr(i, "dist.weight",
                      StringAttr::get(module.getContext(), path));
    }
}

/// dist-training-step{...} followed by what `compile` runs.
static std::string trainPipeline(const TrainOptions &o, StringRef axis) {
  std::string pipeline;
  llvm::raw_string_ostream os(pipeline);
  os << "dist-training-step{loss=" << o.loss << " optimizer=" << o.optimizer
     << " lr=" << formatDouble(o.lr) << " momentum=" << formatDouble(o.momentum)
     << " beta1=" << formatDouble(o.beta1) << " beta2=" << formatDouble(o.beta2)
     << " eps=" << formatDouble(o.eps)
     << " weight-decay=" << formatDouble(o.weightDecay) << " entry=" << o.entry;
  if (!axis.empty())
    os << " data-axis=" << axis;
  os << " micro-batches=" << o.microBatches
     << " optimizer-shard=" << (o.optimizerShard ? "true" : "false")
     << " optimizer-shard-threshold=" << o.optimizerShardThreshold
     << " recompute=\"" << o.recompute << "\"";
  os << "}," << compilePipeline(o.compile);
  return pipeline;
}

/// The autoshard-run command line after PROGRAM.
static SmallVector<std::string> runArgs(const TrainOptions &o,
                                        StringRef outputDir) {
  SmallVector<std::string> args = {"--entry",
                                   "train_step",
                                   "--steps",
                                   std::to_string(o.steps),
                                   "--seed",
                                   std::to_string(o.seed),
                                   "--output-dir",
                                   outputDir.str(),
                                   "--write-outputs=false"};
  for (const std::string &spec : o.inputs)
    args.append({"--input", spec});
  args.append({"--input", "labels=" + o.labels});
  if (!o.lossesOut.empty())
    args.append({"--losses-out", o.lossesOut});
  if (!o.paramsOut.empty())
    args.append({"--params-out", o.paramsOut});
  if (!o.memoryOut.empty())
    args.append({"--memory-out", o.memoryOut});
  if (o.backend != "cpu")
    args.push_back("--backend=" + o.backend);
  return args;
}

int driver::runTrain(MLIRContext &ctx, const TrainOptions &o) {
  if (int rc = checkOptions(o))
    return rc;
  if (!PassInfo::lookup("dist-training-step") ||
      !PassPipelineInfo::lookup("autoshard-pipeline"))
    return fail("the dist-training-step pass or the autoshard-pipeline is "
                "not registered in this build");
  // Programs, outputs and (unless --weights-dir) an ONNX model's weights go
  // to the work dir, never into the current directory.
  FailureOr<std::string> work = makeWorkDir(o.workDir, "autoshard-train");
  if (failed(work))
    return 1;
  CompileOptions compileOptions = o.compile;
  if (compileOptions.weightsDir.empty()) {
    SmallString<128> weights(*work);
    llvm::sys::path::append(weights, "weights");
    compileOptions.weightsDir = std::string(weights);
  }
  OwningOpRef<ModuleOp> module = loadInput(ctx, compileOptions);
  if (!module)
    return 1;
  auto meshAttr = (*module)->getAttrOfType<dist::MeshAttr>(
      dist::DistDialect::kMeshAttrName);
  if (!meshAttr)
    return fail("no mesh: give --mesh or a dist.mesh module attribute");
  DeviceMesh mesh = meshAttr.toDeviceMesh();
  int ranks = o.ranks ? o.ranks : mesh.getNumDevices();
  if (ranks != mesh.getNumDevices())
    return fail("--ranks " + Twine(ranks) + " does not match the mesh's " +
                Twine(mesh.getNumDevices()) + " devices");
  FailureOr<std::string> axis = resolveDataAxis(mesh, o.dataAxis);
  if (failed(axis))
    return 1;
  if (int rc = checkBatches(o, *module, mesh, *axis))
    return rc;

  absolutizeWeights(*module, o.compile.input);
  if (failed(runPipeline(*module, trainPipeline(o, *axis))))
    return 1;
  SmallString<128> program(*work), outputs(*work);
  llvm::sys::path::append(program, "train_step.mlir");
  llvm::sys::path::append(outputs, "outputs");
  if (failed(writeModule(*module, program)))
    return fail("cannot write '" + program + "'");
  FailureOr<RankTools> tools = findRankTools(o.argv0);
  if (failed(tools))
    return 1;

  llvm::outs() << "autoshard train: " << o.compile.input << " on " << mesh.str()
               << ", " << ranks << " rank" << (ranks == 1 ? "" : "s")
               << ", backend " << o.backend << ", optimizer " << o.optimizer
               << " (lr " << formatDouble(o.lr) << "), loss " << o.loss << ", "
               << o.steps << " step" << (o.steps == 1 ? "" : "s")
               << ", data axis " << (axis->empty() ? "none" : *axis) << "\n";
  llvm::outs().flush();
  return runRanks(*tools, program, ranks, runArgs(o, outputs));
}
