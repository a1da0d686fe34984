//===- autoshard.cpp - The autoshard driver -------------------------------===//
//
//   autoshard compile INPUT --mesh dp=2,mp=4 [-o OUT] [--report FILE]
//                     (-o OUT.asplan: the lowered plan autoshard-run runs)
//   autoshard verify  INPUT --mesh dp=2,mp=4 [--ranks N] [--backend cpu|cuda]
//   autoshard train   INPUT --mesh dp=2,mp=2 --input NAME=FILE.npy ...
//                     --labels FILE.npy --loss L --optimizer O --steps N
//
// INPUT is an annotated .mlir file, or an .onnx model with --strategy FILE.
//===----------------------------------------------------------------------===//

#include "Compile.h"
#include "Launch.h"
#include "Train.h"
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
static cl::SubCommand
    trainCmd("train",
             "Build the training step of the model's forward function "
             "(loss, gradients, optimizer update), partition it and run N "
             "steps on N ranks");

// Options of every subcommand / of the two that launch ranks.
#define BOTH                                                                   \
  cl::sub(compileCmd), cl::sub(verifyCmd), cl::sub(trainCmd), cl::cat(category)
#define RUNS cl::sub(verifyCmd), cl::sub(trainCmd), cl::cat(category)
#define TRAIN cl::sub(trainCmd), cl::cat(category)

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
                        "(default: OUT.weights for -o OUT.mlir, else "
                        "./MODEL.weights; verify and train: their work "
                        "dir)"),
               cl::value_desc("dir"), BOTH);
static cl::list<std::string>
    freeze("freeze",
           cl::desc("ONNX input: give graph input NAME the value in "
                    "FILE.npy at import time, folded like a constant (e.g. "
                    "a Reshape's shape made a graph input)"),
           cl::value_desc("NAME=FILE.npy"), BOTH);
static cl::opt<std::string>
    report("report", cl::desc("Write the propagation report (JSON) here"),
           cl::value_desc("file"), BOTH);
static cl::opt<std::string> solver("solver",
                                   cl::desc("Propagation solver: dp | exact"),
                                   cl::init("dp"), BOTH);
static cl::opt<uint64_t> exactBudget(
    "exact-budget",
    cl::desc("--solver exact: node visits before the search stops and keeps "
             "its best plan, unproven (default: 10^9, under a minute)"),
    cl::init(0), BOTH);
static cl::opt<std::string>
    cluster("cluster", cl::desc("Cluster description (JSON) for the cost model"),
            cl::value_desc("file"), BOTH);
static cl::opt<bool> enableAllToAll(
    "enable-alltoall",
    cl::desc("Allow AllToAll to move a split between dims (default off)"),
    BOTH);
static cl::opt<std::string> precision(
    "precision",
    cl::desc("Precision of the GEMMs (PyTorch AMP: FP32 master weights, "
             "softmax, LayerNorm, reductions, losses and optimizer stay "
             "FP32): fp32 (default); tf32 (TF32 inputs, FP32 accumulation, "
             "on GPUs that have it; the CPU computes FP32); bf16 | fp16 "
             "(every matmul-like contraction, forward and backward, takes "
             "its inputs cast to bf16/f16 and accumulates in FP32; "
             "collectives after a cast move 2-byte elements). verify then "
             "picks a tolerance for it and prints it"),
    cl::init("fp32"), BOTH);
static cl::opt<std::string> output("o", cl::desc("Output file (default -)"),
                                   cl::init("-"), cl::sub(compileCmd),
                                   cl::cat(category));

// compile -o FILE.asplan: how the plan is lowered (autoshard-run's flags).
#define PLAN cl::sub(compileCmd), cl::cat(category)
static cl::opt<bool> lowerOnly(
    "lower-only",
    cl::desc("-o FILE.asplan: INPUT is already partitioned (or runs on one "
             "device): lower it as it is, without the pipeline"),
    PLAN);
static cl::opt<std::string>
    planEntry("entry",
              cl::desc("-o FILE.asplan: the function to lower (default main, "
                       "else the only one)"),
              cl::init(""), PLAN);
static cl::opt<int64_t> compileThreshold(
    "compile-threshold",
    cl::desc("-o FILE.asplan: --kernels=auto compiles loop nests of at least "
             "this many points (default $AUTOSHARD_COMPILE_THRESHOLD, else 1)"),
    cl::init(1), PLAN);
static cl::opt<bool> kernelFusion(
    "kernel-fusion",
    cl::desc("-o FILE.asplan: fuse elementwise producers into their consumers "
             "before compiling kernels (default true)"),
    cl::init(true), PLAN);
static cl::opt<bool> gemmContractions(
    "gemm-contractions",
    cl::desc("-o FILE.asplan: run contractions as BLAS/cuBLAS GEMMs (default "
             "true; false: the loop-nest evaluator, the reference)"),
    cl::init(true), PLAN);

static cl::opt<int> ranks("ranks",
                          cl::desc("Ranks for the partitioned run (default: "
                                   "the mesh size)"),
                          cl::init(0), RUNS);
static cl::opt<std::string> backend("backend", cl::desc("cpu | cuda"),
                                    cl::init("cpu"), cl::sub(compileCmd),
                                    RUNS);
static cl::opt<double> rtolOpt(
    "rtol",
    cl::desc("Relative tolerance: per element |got - ref| <= atol + rtol * M, "
             "M = max(|ref|, the program run on |inputs|: the sums of "
             "absolute products rounding scales with) capped at the "
             "output's max |ref| (default: 64 float32 eps = 7.63e-06, and "
             "where that refuses an element verify adds twice the output's "
             "largest distance of the reference from the program in f64 on "
             "one rank, the FP32 rounding as the program propagates it; "
             "given, the rule is this alone)"),
    cl::init(64 * 0x1p-23), cl::sub(verifyCmd), cl::cat(category));
static cl::opt<double> atolOpt("atol", cl::desc("Absolute tolerance"),
                            cl::init(0), cl::sub(verifyCmd),
                            cl::cat(category));
static cl::opt<double> debugPerturb(
    "debug-perturb", cl::Hidden, cl::init(0),
    cl::desc("Testing: plant a wrong element 0 in output 0 (this fraction "
             "of max |ref|)"),
    cl::sub(verifyCmd), cl::cat(category));
static cl::opt<unsigned> seed("seed", cl::desc("Seed of the input initialiser"),
                              cl::init(1), RUNS);
static cl::opt<std::string>
    workDir("work-dir",
            cl::desc("Keep programs and outputs here (default: a temp dir)"),
            cl::value_desc("dir"), RUNS);

// train.
static cl::list<std::string>
    trainInputs("input",
                cl::desc("Global input batch: NAME=FILE.npy (NAME: the "
                         "argument's dist.name, argN or N); split on dim 0 "
                         "over the data axis"),
                cl::value_desc("NAME=FILE"), TRAIN);
static cl::opt<std::string>
    labels("labels",
           cl::desc("The loss's targets (.npy), split like the "
                    "inputs"),
           cl::value_desc("file"), TRAIN);
static cl::opt<std::string>
    loss("loss",
         cl::desc("cross_entropy (logits over the last dim, integer "
                  "labels) | mse"),
         cl::init("cross_entropy"), TRAIN);
static cl::opt<std::string> optimizer("optimizer",
                                      cl::desc("sgd | momentum | adam | adamw"),
                                      cl::init("sgd"), TRAIN);
static cl::opt<double> lr("lr", cl::desc("Learning rate"), cl::init(0.01),
                          TRAIN);
static cl::opt<double> momentum("momentum",
                                cl::desc("Momentum factor (momentum)"),
                                cl::init(0.9), TRAIN);
static cl::opt<double> beta1("beta1", cl::desc("Adam's first-moment decay"),
                             cl::init(0.9), TRAIN);
static cl::opt<double> beta2("beta2", cl::desc("Adam's second-moment decay"),
                             cl::init(0.999), TRAIN);
static cl::opt<double> eps("eps", cl::desc("Adam's denominator epsilon"),
                           cl::init(1e-8), TRAIN);
static cl::opt<double>
    weightDecay("weight-decay",
                cl::desc("L2 penalty (sgd, momentum, adam) or decoupled "
                         "decay (adamw)"),
                cl::init(0.0), TRAIN);
static cl::opt<int> steps("steps", cl::desc("Training steps"), cl::init(1),
                          TRAIN);
static cl::opt<std::string>
    dataAxis("data-axis",
             cl::desc("Mesh axis the batch (dim 0 of inputs and labels) is "
                      "split over; default: dp if the mesh has it, else its "
                      "first axis; 'none' keeps the inputs as annotated"),
             cl::value_desc("axis"), TRAIN);
static cl::opt<std::string>
    lossesOut("losses-out", cl::desc("Write the per-step losses (JSON list)"),
              cl::value_desc("file.json"), TRAIN);
static cl::opt<std::string> paramsOut(
    "params-out",
    cl::desc("Write the trained parameters and optimizer state as "
             "DIR/<name>.npy (named like the ONNX importer's weight files)"),
    cl::value_desc("dir"), TRAIN);
static cl::opt<std::string> memoryOut(
    "memory-out",
    cl::desc("Write the bytes of the parameters, optimizer state and inputs "
             "each rank holds (JSON, autoshard-run --memory-out)"),
    cl::value_desc("file.json"), TRAIN);
static cl::opt<std::string> entry("entry",
                                  cl::desc("The forward function (default "
                                           "main)"),
                                  cl::init("main"), TRAIN);

static cl::opt<int64_t> microBatches(
    "micro-batches",
    cl::desc("Gradient accumulation: the model's forward takes one "
             "micro-batch, each step this many (inputs and labels hold "
             "K x the model's batch); one update per step"),
    cl::init(1), TRAIN);
static cl::opt<bool> optimizerShard(
    "optimizer-shard",
    cl::desc("Split the optimizer state and update of large parameters over "
             "the data axis (ZeRO; MindSpore optimizer parallel)"),
    TRAIN);
static cl::opt<int64_t> optimizerShardThreshold(
    "optimizer-shard-threshold",
    cl::desc("Bytes from which a parameter's optimizer state is split "
             "(default 65536)"),
    cl::init(65536), TRAIN);
static cl::opt<std::string>
    recompute("recompute",
              cl::desc("Forward ops the backward recomputes: none | all | "
                       "ops=GLOB,..."),
              cl::init("none"), TRAIN);
static cl::opt<double> fusionThresholdMb(
    "fusion-threshold-mb",
    cl::desc("Bucket gradient collectives up to this many MB (0: no "
             "fusion; default 64)"),
    cl::init(64.0), TRAIN);
static cl::opt<std::string> fusionReport(
    "fusion-report",
    cl::desc("Write the gradient fusion report (JSON: gradient collectives "
             "before and after, buckets) here; '-' prints one line"),
    cl::value_desc("file|-"), TRAIN);

static CompileOptions getCompileOptions() {
  CompileOptions o;
  o.input = input;
  o.mesh = meshSpec;
  o.strategyFile = strategy;
  o.weightsDir = weightsDir;
  o.freeze.assign(freeze.begin(), freeze.end());
  o.output = output;
  o.report = report;
  o.solver = solver;
  o.exactBudget = exactBudget;
  o.cluster = cluster;
  o.enableAllToAll = enableAllToAll;
  o.precision = precision;
  o.lowerOnly = lowerOnly;
  o.entry = planEntry;
  o.kernels = getKernelsFlag();
  if (compileThreshold.getNumOccurrences())
    o.compileThreshold = compileThreshold;
  o.kernelFusion = kernelFusion;
  o.gemmContractions = gemmContractions;
  o.backend = backend;
  return o;
}

static TrainOptions getTrainOptions(const char *argv0) {
  TrainOptions t;
  t.compile = getCompileOptions();
  t.inputs.assign(trainInputs.begin(), trainInputs.end());
  t.labels = labels;
  t.loss = loss;
  t.optimizer = optimizer;
  t.lr = lr;
  t.momentum = momentum;
  t.beta1 = beta1;
  t.beta2 = beta2;
  t.eps = eps;
  t.weightDecay = weightDecay;
  t.dataAxis = dataAxis;
  t.entry = entry;
  t.steps = steps;
  t.ranks = ranks;
  t.backend = backend;
  t.seed = seed;
  t.lossesOut = lossesOut;
  t.paramsOut = paramsOut;
  t.memoryOut = memoryOut;
  t.workDir = workDir;
  t.microBatches = microBatches;
  t.optimizerShard = optimizerShard;
  t.optimizerShardThreshold = optimizerShardThreshold;
  t.recompute = recompute;
  t.compile.fusionThresholdMb = fusionThresholdMb;
  t.compile.fusionReport = fusionReport;
  t.argv0 = argv0;
  return t;
}

static int runCompile(mlir::MLIRContext &ctx) {
  CompileOptions options = getCompileOptions();
  if (isPlanFile(output))
    return compileToPlan(ctx, options);
  if (lowerOnly) {
    WithColor::error(errs(), "autoshard")
        << "--lower-only writes a plan: -o FILE.asplan\n";
    return 1;
  }
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
  // A full disk shows up when the buffer is flushed.
  out->os().close();
  if (out->os().has_error()) {
    WithColor::error(errs(), "autoshard")
        << "cannot write '" << output
        << "': " << out->os().error().message() << "\n";
    out->os().clear_error();
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "autoshard: auto-parallel sharding compiler driver\n\n"
      "  autoshard compile INPUT --mesh dp=2,mp=4 [-o OUT.mlir|OUT.asplan] "
      "[--report FILE]\n"
      "  autoshard verify  INPUT --mesh dp=2,mp=4 [--ranks N] "
      "[--backend cpu|cuda]\n"
      "  autoshard train   INPUT --mesh dp=2,mp=2 --input NAME=FILE.npy ... "
      "--labels FILE.npy\n"
      "                    --loss cross_entropy|mse --optimizer "
      "sgd|momentum|adam|adamw --lr X\n"
      "                    --steps N [--losses-out FILE.json] "
      "[--params-out DIR]\n");
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
    v.rtolGiven = rtolOpt.getNumOccurrences() > 0;
    v.atol = atolOpt;
    v.debugPerturb = debugPerturb;
    v.seed = seed;
    v.workDir = workDir;
    v.argv0 = argv[0];
    return runVerify(ctx, v);
  }
  if (trainCmd)
    return runTrain(ctx, getTrainOptions(argv[0]));
  WithColor::error(errs(), "autoshard")
      << "expected a subcommand: compile or verify or train (see --help)\n";
  return 1;
}
