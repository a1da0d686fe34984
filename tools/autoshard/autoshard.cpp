//===- autoshard.cpp - The autoshard driver -------------------------------===//
//
//   autoshard compile INPUT --mesh dp=2,mp=4 [-o OUT] [--report FILE]
//   autoshard verify  INPUT --mesh dp=2,mp=4 [--ranks N] [--backend cpu|cuda]
//
// INPUT is an annotated .mlir file, or an .onnx model with --strategy FILE.
//===----------------------------------------------------------------------===//

#include "Compile.h"
#include "Verify.h"

#include "autoshard/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;
using namespace autoshard::driver;

static cl::OptionCategory category("autoshard options");
static cl::SubCommand compileCmd(
    "compile", "Compile an annotated model into the per-device SPMD program");
static cl::SubCommand verifyCmd(
    "verify", "Run the original program on one rank and the partitioned one "
              "on N ranks with identical inputs, and compare the outputs");

#define BOTH cl::sub(compileCmd), cl::sub(verifyCmd), cl::cat(category)

static cl::opt<std::string> input(cl::Positional, cl::Required,
                                  cl::desc("<model.mlir | model.onnx>"), BOTH);
static cl::opt<std::string>
    meshSpec("mesh", cl::desc("Device mesh, axes major to minor (e.g. "
                              "dp=2,mp=4); default: the input's dist.mesh"),
             cl::value_desc("axis=size,..."), BOTH);
static cl::opt<std::string>
    strategy("strategy", cl::desc("Strategy file (YAML/JSON) for ONNX input"),
             cl::value_desc("file"), BOTH);
static cl::opt<std::string>
    weightsDir("weights-dir",
               cl::desc("Where ONNX initializers are written as .npy "
                        "(default: next to the output)"),
               cl::value_desc("dir"), BOTH);
static cl::opt<std::string>
    report("report", cl::desc("Write the propagation report (JSON) here"),
           cl::value_desc("file"), BOTH);
static cl::opt<std::string> solver("solver",
                                   cl::desc("Propagation solver: dp | exact"),
                                   cl::init("dp"), BOTH);
static cl::opt<std::string>
    cluster("cluster", cl::desc("Cluster description (JSON) for the cost model"),
            cl::value_desc("file"), BOTH);
static cl::opt<bool> enableAllToAll(
    "enable-alltoall",
    cl::desc("Allow AllToAll to move a split between dims (default off)"),
    BOTH);
static cl::opt<std::string> output("o", cl::desc("Output file (default -)"),
                                   cl::init("-"), cl::sub(compileCmd),
                                   cl::cat(category));

static cl::opt<int> ranks("ranks",
                          cl::desc("Ranks for the partitioned run (default: "
                                   "the mesh size)"),
                          cl::init(0), cl::sub(verifyCmd), cl::cat(category));
static cl::opt<std::string> backend("backend", cl::desc("cpu | cuda"),
                                    cl::init("cpu"), cl::sub(verifyCmd),
                                    cl::cat(category));
static cl::opt<double> rtolOpt("rtol", cl::desc("Relative tolerance"),
                            cl::init(1e-4), cl::sub(verifyCmd),
                            cl::cat(category));
static cl::opt<double> atolOpt("atol", cl::desc("Absolute tolerance"),
                            cl::init(1e-5), cl::sub(verifyCmd),
                            cl::cat(category));
static cl::opt<unsigned> seed("seed",
                              cl::desc("Seed of the input initialiser"),
                              cl::init(1), cl::sub(verifyCmd),
                              cl::cat(category));
static cl::opt<std::string>
    workDir("work-dir",
            cl::desc("Keep programs and outputs here (default: a temp dir)"),
            cl::value_desc("dir"), cl::sub(verifyCmd), cl::cat(category));

static CompileOptions getCompileOptions() {
  CompileOptions o;
  o.input = input;
  o.mesh = meshSpec;
  o.strategyFile = strategy;
  o.weightsDir = weightsDir;
  o.report = report;
  o.solver = solver;
  o.cluster = cluster;
  o.enableAllToAll = enableAllToAll;
  return o;
}

static int runCompile(mlir::MLIRContext &ctx) {
  CompileOptions options = getCompileOptions();
  auto module = loadInput(ctx, options);
  if (!module || mlir::failed(compile(*module, options)))
    return 1;
  std::string err;
  auto out = mlir::openOutputFile(output, &err);
  if (!out) {
    WithColor::error(errs(), "autoshard") << err << "\n";
    return 1;
  }
  module->print(out->os());
  out->os() << "\n";
  out->keep();
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "autoshard: auto-parallel sharding compiler driver\n\n"
      "  autoshard compile INPUT --mesh dp=2,mp=4 [-o OUT] [--report FILE]\n"
      "  autoshard verify  INPUT --mesh dp=2,mp=4 [--ranks N] "
      "[--backend cpu|cuda]\n");
  mlir::DialectRegistry registry;
  autoshard::registerAllDialects(registry);
  autoshard::registerAllPasses();
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();

  if (compileCmd)
    return runCompile(ctx);
  if (verifyCmd) {
    VerifyOptions v;
    v.compile = getCompileOptions();
    v.ranks = ranks;
    v.backend = backend;
    v.rtol = rtolOpt;
    v.atol = atolOpt;
    v.seed = seed;
    v.workDir = workDir;
    v.argv0 = argv[0];
    return runVerify(ctx, v);
  }
  WithColor::error(errs(), "autoshard")
      << "expected a subcommand: compile or verify (see --help)\n";
  return 1;
}
