//===- autoshard-run.cpp - Run a (partitioned) program on MPI ranks -------===//
//
//   mpirun -np N autoshard-run PROGRAM.asplan [--input NAME=FILE.npy ...]
//       [--seed S] [--output-dir DIR] [--timeout SECONDS]
//       [--steps N] [--losses-out FILE.json] [--params-out DIR]
//       [--memory-out FILE.json]
//   autoshard-run --compare A.npy B.npy [--rtol R] [--atol A]
//
// Every rank reads the plan (PlanFile.h; `autoshard compile -o X.asplan`
// writes it; given PROGRAM.mlir, rank 0 has the `autoshard` driver beside
// this executable lower it to a temporary plan and sends it to the others:
// PlanSource.h), so this tool links no MLIR or LLVM. It takes its mesh position from its
// rank, reads the *global* inputs (files, or the seeded initialiser keyed by
// argument index, so every mesh sees the same global values) and cuts its
// shard from the argument's dist.layout. After the run rank 0 assembles each
// global output from the result's dist.layout and writes
// DIR/output_<i>.npy. Setup errors (bad module, wrong -np, missing or
// mismatching input) are agreed on by all ranks and reported once; errors
// while running abort the whole job; a watchdog aborts a stuck job.
//
// Training (--steps N): a train_step program (--dist-training-step) runs N
// times; after each step every result with dist.tied_arg replaces its
// argument as a local shard (the loader checked that both have the same
// local type and layout, so nothing is gathered or re-cut), and rank 0
// prints the step's loss (result 0). --memory-out writes the bytes of the
// local shards each rank holds of its parameters, optimizer state and inputs.
//
//===----------------------------------------------------------------------===//

#include "CommandLine.h"
#include "PlanSource.h"

#include "autoshard/Runtime/Backend.h"
#include "autoshard/Runtime/Communicator.h"
#include "autoshard/Runtime/CudaBackend.h"
#include "autoshard/Runtime/Executor.h"
#include "autoshard/Runtime/Format.h"
#include "autoshard/Runtime/HostIO.h"
#include "autoshard/Runtime/PlanFile.h"

#ifdef AUTOSHARD_HAVE_MPI
#include <mpi.h>
#endif

#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <mutex>
#include <set>
#include <thread>

using namespace autoshard;
using autoshard::rt::format;
namespace fs = std::filesystem;

static cl::OptionCategory category("autoshard-run options");

static cl::list<std::string> positional(cl::Positional,
                                        cl::desc("PROGRAM.asplan | PROGRAM.mlir | A.npy B.npy"),
                                        cl::cat(category));
static cl::list<std::string>
    inputFiles("input",
               cl::desc("Global input: NAME=FILE.npy (NAME: the "
                        "argument's dist.name, argN or N)"),
               cl::value_desc("NAME=FILE"), cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of generated inputs"),
                              cl::init(0), cl::cat(category));
static cl::opt<std::string> outputDir("output-dir",
                                      cl::desc("Where output_<i>.npy go"),
                                      cl::init("."), cl::cat(category));
static cl::opt<double>
    timeoutSeconds("timeout",
                   cl::desc("Abort the job after this many seconds (0: "
                            "never); with --steps, per step"),
                   cl::init(600), cl::cat(category));
static cl::opt<std::string> entry("entry", cl::desc("Function to run"),
                                  cl::init(""), cl::cat(category));
static cl::opt<std::string>
    backendName("backend",
                cl::desc("Kernel backend: cpu (OpenBLAS, MPI) or cuda (cuBLAS, "
                         "NCCL; one GPU per rank)"),
                cl::init("cpu"), cl::cat(category));
static cl::opt<std::string> kernelMode(
    "kernels",
    cl::desc("Loop nests (elementwise, broadcast, reduction generics): auto "
             "(compile those of at least --compile-threshold points to "
             "native code (CPU) or PTX (--backend cuda), interpret the "
             "rest), compiled, or interpreted (the reference)"),
    cl::value_desc("auto|compiled|interpreted"), cl::init("auto"),
    cl::cat(category));
static cl::opt<int64_t> compileThreshold(
    "compile-threshold",
    cl::desc("--kernels=auto compiles loop nests of at least this many "
             "points (default 1: every one; each program compiles once per "
             "host, then comes from the cache)"),
    cl::init(1), cl::cat(category));
static cl::opt<bool> kernelFusion(
    "kernel-fusion",
    cl::desc("Fuse elementwise producers into their consumers before "
             "compiling kernels (default true)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> gemmContractions(
    "gemm-contractions",
    cl::desc("Run multiply-accumulate contractions (linalg.generic and "
             "named) as BLAS/cuBLAS GEMMs (default true; false leaves them "
             "to the loop-nest evaluator, the reference)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> printPlan("print-plan",
                               cl::desc("Print the lowered plan (rank 0)"),
                               cl::cat(category));
static cl::opt<bool> compareMode("compare",
                                 cl::desc("Compare two .npy files and exit"),
                                 cl::cat(category));
static cl::opt<double> relTol("rtol",
                              cl::desc("Relative tolerance (--compare)"),
                              cl::init(1e-5), cl::cat(category));
static cl::opt<double> absTol("atol",
                              cl::desc("Absolute tolerance (--compare)"),
                              cl::init(1e-6), cl::cat(category));
static cl::opt<int> repeat("repeat",
                           cl::desc("Run the program this many times (after "
                                    "one untimed warm-up run) and report "
                                    "the mean step time"),
                           cl::init(1), cl::cat(category));
static cl::opt<bool> cudaGraphs(
    "cuda-graphs",
    cl::desc("Replay runs as CUDA graphs (--backend cuda): the second run on "
             "the same inputs is recorded and later ones replay it, one "
             "launch per run; a program that cannot be recorded (one with "
             "collectives, or a call that waits for the device) runs as "
             "usual"),
    cl::cat(category));
static cl::opt<bool> memoryStats(
    "memory-stats",
    cl::desc("Print each rank's buffer-pool counters after the run (rank 0): "
             "system allocations and bytes, pool hits, peak bytes in use, "
             "and the allocations after the first run or step"),
    cl::cat(category));
static cl::opt<bool>
    profileTable("profile",
                 cl::desc("Print rank 0's time and calls per kernel kind over "
                          "all runs"),
                 cl::cat(category));
static cl::opt<std::string>
    profileJson("profile-json",
                cl::desc("Write rank 0's time per kernel kind as JSON"),
                cl::value_desc("file.json"), cl::cat(category));
static cl::opt<int>
    steps("steps",
          cl::desc("Run the program N times as training steps: after each "
                   "step every result with dist.tied_arg becomes its "
                   "argument's value (local shards, no communication); rank "
                   "0 prints 'step K/N loss X (T ms)' (loss: result 0 when "
                   "it is a rank-0 float). The --timeout applies per step"),
          cl::value_desc("N"), cl::init(1), cl::cat(category));
static cl::opt<std::string>
    lossesOut("losses-out",
              cl::desc("Write every step's loss (result 0, a rank-0 float) "
                       "as a JSON list"),
              cl::value_desc("file.json"), cl::cat(category));
static cl::opt<std::string> paramsOut(
    "params-out",
    cl::desc("After the last step write the global value of every result "
             "with dist.tied_arg as DIR/<dist.name>.npy (named as the ONNX "
             "importer names weight files: characters outside "
             "[A-Za-z0-9._-] become '_')"),
    cl::value_desc("dir"), cl::cat(category));
static cl::opt<std::string> memoryOut(
    "memory-out",
    cl::desc("Write the bytes of the local input shards each rank holds, by "
             "kind (JSON: parameters = tied arguments, optimizer_state = "
             "dist.init arguments, inputs = the rest; per rank and the max)"),
    cl::value_desc("file.json"), cl::cat(category));
static cl::opt<bool> writeOutputs(
    "write-outputs",
    cl::desc("Write DIR/output_<i>.npy after the (last) run and print one "
             "line per output (default true; --write-outputs=false skips)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> fanInInit(
    "fan-in-init",
    cl::desc("Seeded floats of rank >= 2 are uniform in +-1/sqrt(fan_in) "
             "(fan_in: elements / last dim), as real initialisers, so deep "
             "programs stay in range (autoshard verify)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> absInputs(
    "abs-inputs",
    cl::desc("Run on |x| of every float input: for contractions each output "
             "is then the sum of absolute products its rounding error "
             "scales with (autoshard verify's tolerance)"),
    cl::init(false), cl::cat(category));
static cl::opt<int> debugFailRank("debug-fail-rank", cl::Hidden, cl::init(-1),
                                  cl::desc("Testing: this rank fails"),
                                  cl::cat(category));
static cl::opt<int> debugHangRank("debug-hang-rank", cl::Hidden, cl::init(-1),
                                  cl::desc("Testing: this rank hangs"),
                                  cl::cat(category));
static cl::opt<int>
    debugHangStep("debug-hang-step", cl::Hidden, cl::init(0),
                  cl::desc("Testing: --debug-hang-rank hangs at the start of "
                           "this step (0: before running)"),
                  cl::cat(category));

namespace {
/// Creates `dir` unless it is a directory; false when it cannot.
bool makeDirectory(const std::string &dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) || fs::create_directories(dir, ec);
}

/// Process-wide state for aborting from anywhere.
struct Job {
  int rank = 0;
  int size = 1;
  bool mpi = false;

  /// Ends the whole job. Not through MPI_Abort: Open MPI 4.1's mpirun
  /// intermittently crashes or hangs when a rank aborts while its peers sit
  /// in a collective (and the watchdog thread may not call MPI at all under
  /// MPI_THREAD_FUNNELED). A rank that exits without MPI_Finalize makes
  /// mpirun terminate every other rank and exit non-zero, reliably.
  [[noreturn]] void abort(const std::string &message) {
    std::fprintf(stderr, "autoshard-run: error: %s%s\n",
                 size > 1 ? ("rank " + std::to_string(rank) + ": ").c_str()
                          : "",
                 message.c_str());
    std::fflush(stderr);
    std::fflush(stdout);
    std::_Exit(1);
  }
};
Job job;

std::string formatSeconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", s);
  return buf;
}

/// Aborts the job when the run takes longer than the timeout (a failed or
/// stuck peer leaves the others blocked in a collective). Training re-arms
/// it at every step, so a long run of healthy steps is not cut short while
/// a stuck step still is.
class Watchdog {
  using Clock = std::chrono::steady_clock;

public:
  explicit Watchdog(double seconds) : seconds(seconds) {
    if (seconds <= 0)
      return;
    deadline = fromNow();
    thread = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex);
      // A re-arm moves the deadline while we wait: look again on waking.
      // The communicator names the missing ranks at the deadline; this
      // thread is the backstop for a rank stuck outside collectives.
      while (!done)
        if (cv.wait_until(lock, deadline + kGrace) == std::cv_status::timeout &&
            !done && Clock::now() >= deadline + kGrace)
          job.abort("timed out after " + formatSeconds(this->seconds) +
                    " s (--timeout); a rank failed or a collective is "
                    "stuck");
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    cv.notify_all();
    if (thread.joinable())
      thread.join();
  }

  /// Gives the next phase (a training step) the whole timeout again.
  void rearm() {
    if (seconds <= 0)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    deadline = fromNow();
    if (comm)
      comm->setDeadline(deadline);
  }

  /// From now on `comm`'s collectives share the deadline (called from the
  /// thread that runs them).
  void watch(rt::Communicator &c) {
    comm = &c;
    if (seconds > 0) {
      std::lock_guard<std::mutex> lock(mutex);
      comm->setDeadline(deadline);
    }
  }

private:
  /// Time for the communicator to ask the other ranks (MpiCommunicator).
  static constexpr std::chrono::seconds kGrace{3};

  Clock::time_point fromNow() const {
    // Ranks fire one after another: the first exit ends every rank, so the
    // job reports one timeout instead of N.
    // Saturated: a huge (or infinite) timeout would overflow the clock.
    double wait = std::min(seconds, 1e9) + 0.5 * job.rank;
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(wait));
  }

  double seconds;
  Clock::time_point deadline;
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::thread thread;
  rt::Communicator *comm = nullptr;
};

int runCompare() {
  if (positional.size() != 2) {
    std::cerr << "autoshard-run: error: --compare takes two .npy files\n";
    return 2;
  }
  try {
    rt::Tensor a = rt::readNpy(positional[0]);
    rt::Tensor b = rt::readNpy(positional[1]);
    double maxErr = 0;
    std::string diff = rt::compareTensors(a, b, relTol, absTol, maxErr);
    if (!diff.empty()) {
      std::cout << "MISMATCH " << positional[0] << " vs " << positional[1]
                   << ": " << diff << "\n";
      return 1;
    }
    std::cout << "MATCH " << a.getTypeString() << " max_abs_err=" << maxErr
                 << "\n";
    return 0;
  } catch (const rt::Error &e) {
    std::cerr << "autoshard-run: error: " << e.what() << "\n";
    return 1;
  }
}

std::string summarize(const rt::Tensor &t) {
  double sum = 0, absMax = 0;
  for (int64_t i = 0; i < t.getNumElements(); ++i) {
    double v = t.getAsDouble(i);
    sum += v;
    absMax = std::max(absMax, std::fabs(v));
  }
  char buf[128];
  std::snprintf(buf, sizeof(buf), "sum=%.6g absmax=%.6g", sum, absMax);
  return buf;
}

/// --debug-hang-rank: never reaches the next collective.
[[noreturn]] void hang() {
  for (;;)
    std::this_thread::sleep_for(std::chrono::seconds(1));
}

/// Everything a rank prepares before communicating.
struct Setup {
  rt::Program program;
  std::unique_ptr<rt::Communicator> comm;
  std::vector<rt::Tensor> inputs;
  /// A hash of each input's global value: every rank must have read the same
  /// (the same --seed, --input files and weight files).
  std::vector<uint64_t> inputHashes;
  /// Rank 0 with --losses-out: opened during setup so that a bad path fails
  /// before training, not after it.
  std::unique_ptr<std::ofstream> lossesFile;
  /// The backend's pool counters after the first run (--memory-stats).
  rt::MemoryStats afterFirstRun;
};

/// Whether every rank read the same global inputs; else an error naming the
/// first input and the ranks that differ from rank 0.
std::string checkInputsAgree(const Setup &setup) {
#ifdef AUTOSHARD_HAVE_MPI
  const std::vector<uint64_t> &mine = setup.inputHashes;
  std::vector<uint64_t> all(mine.size() * job.size);
  MPI_Allgather(mine.data(), mine.size(), MPI_UINT64_T, all.data(), mine.size(),
                MPI_UINT64_T, MPI_COMM_WORLD);
  for (size_t i = 0; i < mine.size(); ++i) {
    std::string ranks;
    for (int r = 1; r < job.size; ++r)
      if (all[r * mine.size() + i] != all[i])
        ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    if (!ranks.empty())
      return "ranks disagree on input '" + setup.program.inputs[i].name +
             "': rank(s) " + ranks +
             " read other values than rank 0; start every rank with the "
             "same --seed, --input files and weight files";
  }
#endif
  (void)setup;
  return "";
}

/// Whether result 0 is a loss: a rank-0 float.
bool hasScalarLoss(const rt::Program &p) {
  return !p.outputs.empty() && p.outputs[0].globalShape.empty() &&
         rt::isFloatDType(p.values[p.outputs[0].value].type);
}

bool hasTiedOutputs(const rt::Program &p) {
  for (const rt::ProgramIO &io : p.outputs)
    if (io.tiedInput >= 0)
      return true;
  return false;
}

/// Whether every step reports a line (and a loss): asked for, or a program
/// built to be stepped.
bool isTrainingRun(const rt::Program &p) {
  return steps.getNumOccurrences() > 0 || !lossesOut.empty() ||
         hasTiedOutputs(p);
}

/// The training flags against the program; throws on a misuse.
void checkStepFlags(Setup &setup) {
  const rt::Program &p = setup.program;
  if (steps < 1)
    throw rt::Error("--steps must be at least 1, got " + std::to_string(steps));
  if (steps > 1 && repeat > 1)
    throw rt::Error("--repeat times repeated runs on the same inputs; it "
                    "cannot be combined with --steps > 1");
  if (!lossesOut.empty() && !hasScalarLoss(p)) {
    if (p.outputs.empty())
      throw rt::Error("--losses-out: the program has no results");
    const rt::ProgramIO &io = p.outputs[0];
    throw rt::Error("--losses-out: result 0 ('" + io.name + "') is " +
                    std::string(rt::stringifyDType(p.values[io.value].type)) +
                    "[" + rt::stringifyShape(io.globalShape) +
                    "], not a rank-0 float loss");
  }
  if (!paramsOut.empty() && !hasTiedOutputs(p))
    throw rt::Error("--params-out: no result of the program has "
                    "dist.tied_arg");
  if (job.rank != 0)
    return;
  if (!paramsOut.empty() && !makeDirectory(paramsOut))
    throw rt::Error("cannot create --params-out directory '" + paramsOut + "'");
  if (!lossesOut.empty()) {
    setup.lossesFile = std::make_unique<std::ofstream>(lossesOut);
    if (!*setup.lossesFile)
      throw rt::Error("cannot write --losses-out '" + lossesOut +
                      "': " + std::strerror(errno));
  }
}

/// A dist.weight file must still hold what the compiler wrote (another
/// model compiled to the same place would silently replace it).
void checkWeightChecksum(const rt::ProgramIO &io, const std::string &file) {
  if (io.fileChecksum.empty())
    return;
  std::string bytes;
  try {
    bytes = rt::readFileBytes(file);
  } catch (const rt::Error &) {
    throw rt::Error("cannot read weight file '" + file +
                    "': " + std::strerror(errno));
  }
  std::string sum = rt::formatHash(rt::hashBytes(bytes.data(), bytes.size()));
  if (sum != io.fileChecksum)
    throw rt::Error("weight file '" + file + "' of input '" + io.name +
                    "' changed since the program was compiled (checksum " +
                    sum + ", expected " + io.fileChecksum +
                    "); recompile the model");
}

/// The global value of input `i`: --input NAME=FILE (by dist.name, argN or
/// N; recorded in `used`), else zeros for dist.init = "zeros", else the
/// dist.weight file (relative to the program), else the seeded initialiser.
/// `argN` and `N` do not apply when they are another argument's dist.name
/// (a training step names its inputs after the forward's argN, which are
/// not its own argument numbers).
rt::Tensor loadGlobalInput(const rt::Program &p, size_t i,
                           const std::map<std::string, std::string> &given,
                           const std::set<std::string> &argNames,
                           std::set<std::string> &used,
                           const std::string &programDir) {
  const rt::ProgramIO &io = p.inputs[i];
  const rt::ValueInfo &info = p.values[io.value];
  std::string file;
  for (const std::string &name :
       {io.name, "arg" + std::to_string(i), std::to_string(i)}) {
    if (name != io.name && argNames.count(name))
      continue;
    if (auto it = given.find(name); it != given.end()) {
      file = it->second;
      used.insert(name);
    }
  }
  if (file.empty() && io.zeroInit)
    return rt::Tensor(info.type, io.globalShape); // buffers start zeroed
  if (file.empty() && !io.file.empty()) {
    file = io.file;
    if (!fs::path(file).is_absolute() && !programDir.empty())
      file = programDir + "/" + io.file;
    checkWeightChecksum(io, file);
  }
  rt::Tensor global =
      file.empty() ? rt::makeSeededTensor(info.type, io.globalShape, seed, i)
                   : rt::readNpy(file, info.type);
  if (rt::isFloatDType(global.getDType()) && (absInputs || fanInInit)) {
    const rt::Shape &shape = global.getShape();
    double scale = 1;
    if (fanInInit && file.empty() && shape.size() >= 2 && shape.back() > 0)
      scale = 1 / std::sqrt(static_cast<double>(global.getNumElements() /
                                                shape.back()));
    for (int64_t k = 0; k < global.getNumElements(); ++k) {
      double v = global.getAsDouble(k) * scale;
      global.setFromDouble(k, absInputs ? std::fabs(v) : v);
    }
  }
  if (global.getDType() != info.type || global.getShape() != io.globalShape)
    throw rt::Error("input '" + io.name + "' (argument " + std::to_string(i) +
                    "): expected " +
                    std::string(rt::stringifyDType(info.type)) + "[" +
                    rt::stringifyShape(io.globalShape) + "], got " +
                    global.getTypeString() + " from '" + file + "'");
  return global;
}

/// The lowering flags given, for the compiler of a PROGRAM.mlir.
std::vector<std::string> getLoweringFlags() {
  std::vector<std::string> flags;
  if (entry.getNumOccurrences())
    flags.push_back("--entry=" + entry);
  if (kernelMode.getNumOccurrences())
    flags.push_back("--kernels=" + kernelMode);
  if (compileThreshold.getNumOccurrences())
    flags.push_back("--compile-threshold=" +
                    std::to_string(compileThreshold.getValue()));
  if (kernelFusion.getNumOccurrences())
    flags.push_back(std::string("--kernel-fusion=") +
                    (kernelFusion ? "true" : "false"));
  if (gemmContractions.getNumOccurrences())
    flags.push_back(std::string("--gemm-contractions=") +
                    (gemmContractions ? "true" : "false"));
  return flags;
}

/// The plan's bytes on every rank. Each rank reads a plan file itself; MLIR
/// is lowered by rank 0 alone and broadcast, every rank taking part even
/// when it fails so the failure is one agreed error. $AUTOSHARD_KERNELS and
/// $AUTOSHARD_COMPILE_THRESHOLD reach the compiler through the environment.
std::string loadPlanBytes(const std::string &path) {
  std::vector<std::string> flags = getLoweringFlags();
  if (run::isPlanPath(path)) {
    if (!flags.empty())
      throw rt::Error(flags[0].substr(0, flags[0].find('=')) +
                      " applies when the plan is compiled (autoshard "
                      "compile ... " + flags[0] + " -o " + path +
                      "), not to a compiled plan");
    return rt::readFileBytes(path);
  }
  std::string bytes, error;
  if (job.rank == 0) {
    flags.push_back("--backend=" + backendName);
    try {
      bytes = run::compileToPlanBytes(path, flags);
    } catch (const rt::Error &e) {
      error = e.what();
    }
  }
#ifdef AUTOSHARD_HAVE_MPI
  if (job.size > 1) {
    int64_t size = error.empty() ? static_cast<int64_t>(bytes.size()) : -1;
    // The others sleep while rank 0 compiles: a blocking broadcast would
    // spin and starve the compiler on an oversubscribed host.
    MPI_Request request;
    MPI_Ibcast(&size, 1, MPI_INT64_T, 0, MPI_COMM_WORLD, &request);
    for (int done = 0; MPI_Test(&request, &done, MPI_STATUS_IGNORE), !done;)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (size < 0 && job.rank != 0)
      throw rt::Error("rank 0 could not compile '" + path + "'");
    if (size >= 0) {
      bytes.resize(size);
      MPI_Bcast(bytes.data(), static_cast<int>(size), MPI_BYTE, 0,
                MPI_COMM_WORLD);
    }
  }
#endif
  if (!error.empty())
    throw rt::Error(error);
  return bytes;
}

void prepare(Setup &setup) {
  std::string path = positional[0];
  rt::Plan plan = rt::decodePlan(loadPlanBytes(path), path);
  setup.program = plan.getProgram(job.rank);
  // Hand-made or foreign plans are checked before anything indexes them.
  if (std::string error = setup.program.verify(); !error.empty())
    throw rt::Error(path + ": invalid plan: " + error);
  const rt::Program &p = setup.program;
  if (printPlan && job.rank == 0)
    std::cout << p.str();

  int64_t devices = p.mesh.getNumDevices();
  if (devices != job.size)
    throw rt::Error("the program runs on mesh " + p.mesh.str() + " of " +
                    std::to_string(devices) + " devices; launch it with " +
                    "mpirun -np " + std::to_string(devices) + " (got " +
                    std::to_string(job.size) + " rank" +
                    (job.size == 1 ? "" : "s") + ")");
  checkStepFlags(setup);
  setup.comm = job.mpi ? rt::createMpiCommunicator(p.mesh)
                       : rt::createLocalCommunicator(p.mesh);
  int64_t pos = setup.comm->getPosition();

  // --input NAME=FILE.
  std::map<std::string, std::string> given;
  for (const std::string &spec : inputFiles) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw rt::Error("--input expects NAME=FILE.npy, got '" + spec + "'");
    given[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  std::set<std::string> usedNames;
  std::string programDir = fs::path(path).parent_path().string();
  std::set<std::string> argNames;
  for (const rt::ProgramIO &io : p.inputs)
    argNames.insert(io.name);
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    rt::Tensor global =
        loadGlobalInput(p, i, given, argNames, usedNames, programDir);
    setup.inputHashes.push_back(
        rt::hashBytes(global.getRawData(), global.getBytes()));
    setup.inputs.push_back(rt::cutShard(global, p.mesh, p.inputs[i].layout, pos,
                                        p.values[p.inputs[i].value].shape));
  }
  for (const auto &entry : given)
    if (!usedNames.count(entry.first)) {
      std::string names;
      for (size_t i = 0; i < p.inputs.size(); ++i)
        names += (i ? ", " : "") + p.inputs[i].name;
      throw rt::Error("--input '" + entry.first +
                      "' names no argument (arguments: " + names + ")");
    }
}

/// The global value of result `io` from every rank's local tensor (in
/// backend memory): rank 0 gets it, the others a null tensor. Collective.
rt::Tensor gatherGlobal(Setup &setup, rt::Backend &backend,
                        const rt::ProgramIO &io, const rt::Tensor &onDevice) {
  const rt::Program &p = setup.program;
  rt::Tensor local = backend.download(onDevice);
  std::vector<std::vector<uint8_t>> all =
      setup.comm->gatherToRoot(local.getRawData(), local.getBytes());
  if (job.rank != 0)
    return rt::Tensor();
  std::vector<rt::Tensor> locals(all.size());
  for (size_t r = 0; r < all.size(); ++r) {
    std::optional<int64_t> pos = p.mesh.getPositionOfDevice(r);
    rt::Tensor t(local.getDType(), local.getShape());
    if (static_cast<int64_t>(all[r].size()) != t.getBytes())
      throw rt::Error("rank " + std::to_string(r) +
                      " returned a result of another size");
    std::memcpy(t.getRawData(), all[r].data(), all[r].size());
    locals[*pos] = t;
  }
  return rt::assembleGlobal(locals, p.mesh, io.layout, io.globalShape);
}

/// A loss as a JSON number at full precision. JSON has no NaN or infinity;
/// Python's json module (what reads these lists) accepts these spellings.
std::string jsonNumber(double v, rt::DType type) {
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v > 0 ? "Infinity" : "-Infinity";
  char buf[40];
  std::snprintf(buf, sizeof(buf), type == rt::DType::F64 ? "%.17g" : "%.9g", v);
  return buf;
}

/// The reason `cuda graphs: N of M runs replayed` adds when no run was
/// replayed: why the recording failed, or that none was tried (a recording
/// needs two runs on the same input buffers; training steps feed each
/// step the last one's outputs).
std::string describeGraphFailure(const rt::Executor &executor, int replays) {
  if (!executor.getGraphFailure().empty())
    return " (not recorded: " + executor.getGraphFailure() + ")";
  if (replays == 0)
    return " (not recorded: no two runs had the same input buffers)";
  return "";
}

/// Runs the program --steps times (each --repeat times); after every step
/// each tied result's local shard becomes its argument's input. Rank 0
/// prints a line per step and streams the losses to --losses-out. Returns
/// the last step's outputs.
std::vector<rt::Tensor> runSteps(Setup &setup, rt::Backend &backend,
                                 rt::Executor &executor,
                                 std::vector<rt::Tensor> inputs,
                                 Watchdog &watchdog) {
  const rt::Program &p = setup.program;
  bool report = isTrainingRun(p), withLoss = report && hasScalarLoss(p);
  std::ofstream *losses = setup.lossesFile.get();
  if (losses)
    *losses << "[";
  std::vector<rt::Tensor> outputs;
  double total = 0;
  int runs = std::max(1, repeat.getValue());
  bool profiling = profileTable || !profileJson.empty();
  int replays = 0; // runs replayed as CUDA graphs (--cuda-graphs)
  for (int step = 1; step <= steps; ++step) {
    watchdog.rearm();
    if (job.rank == debugHangRank && step == debugHangStep)
      hang();
    auto start = std::chrono::steady_clock::now();
    // Runs are queued without waiting for the device (the profiler times
    // each run, so it waits): the next run is queued behind the last.
    for (int r = 0; r < runs; ++r) {
      outputs.clear(); // their buffers serve the next run
      outputs = profiling ? executor.run(inputs) : executor.enqueue(inputs);
      replays += executor.lastRunReplayed();
      if (step == 1 && r == 0)
        setup.afterFirstRun = backend.getMemoryStats();
    }
    // Gathering the loss (a few bytes) also waits for the step to finish;
    // without one, a step line's time or the last step still waits here.
    rt::Tensor loss;
    if (withLoss)
      loss = gatherGlobal(setup, backend, p.outputs[0], outputs[0]);
    else if (report || step == steps)
      backend.synchronize();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    total += seconds;
    if (report && job.rank == 0) {
      std::cout << "step " << step << "/" << steps;
      if (withLoss)
        std::cout << format(" loss %.6g", loss.getAsDouble(0));
      std::cout << format(" (%.2f ms)\n", seconds * 1e3);
      std::cout.flush();
      if (losses) {
        *losses << (step > 1 ? ", " : "")
                << jsonNumber(loss.getAsDouble(0), loss.getDType());
        losses->flush();
      }
    }
    for (size_t k = 0; k < outputs.size(); ++k)
      if (p.outputs[k].tiedInput >= 0)
        inputs[p.outputs[k].tiedInput] = outputs[k];
  }
  if (losses) {
    *losses << "]\n";
    losses->close();
    if (losses->fail())
      throw rt::Error("cannot write --losses-out '" + lossesOut + "'");
    std::cout << "losses -> " << lossesOut << "\n";
  }
  if (job.rank == 0 && runs > 1)
    std::cout << "step time: " << format("%.6f", total / runs)
                 << " s (" << runs << " runs)\n";
  if (job.rank == 0 && cudaGraphs)
    std::cout << "cuda graphs: " << replays << " of " << runs * steps
              << " runs replayed"
              << describeGraphFailure(executor, replays) << "\n";
  return outputs;
}

/// Rank 0 writes DIR/output_<i>.npy (global values) and prints a line each.
void writeOutputFiles(Setup &setup, rt::Backend &backend,
                      const std::vector<rt::Tensor> &outputs) {
  const rt::Program &p = setup.program;
  if (job.rank == 0 && !makeDirectory(outputDir))
    throw rt::Error("cannot create output directory '" + outputDir + "'");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const rt::ProgramIO &io = p.outputs[i];
    rt::Tensor global = gatherGlobal(setup, backend, io, outputs[i]);
    if (job.rank != 0)
      continue;
    std::string file = outputDir + "/output_" + std::to_string(i) + ".npy";
    rt::writeNpy(file, global);
    std::cout << "output " << i << " '" << io.name
                 << "': " << global.getTypeString() << " " << summarize(global)
                 << " -> " << file << "\n";
  }
}

/// The file name of a saved parameter: exactly how the ONNX importer names
/// weight files (ModelImporter::weightFileName in lib/Import), so a trained
/// parameter lands under the name its initial value had (onnx::MatMul_246
/// -> onnx__MatMul_246.npy). `used` resolves clashes the same way (_1, _2).
std::string weightFileName(std::string_view name, std::set<std::string> &used) {
  std::string base;
  for (char c : name)
    base += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
             c == '_' || c == '-')
                ? c
                : '_';
  if (base.empty() || base[0] == '.')
    base = "w" + base;
  std::string file = base + ".npy";
  for (int k = 1; !used.insert(file).second; ++k)
    file = base + "_" + std::to_string(k) + ".npy";
  return file;
}

/// --memory-out: the bytes of the local input shards each rank holds, by
/// kind: parameters (arguments a result is tied to, not zero-initialised),
/// optimizer state (dist.init = "zeros") and the other inputs. Gathered to
/// rank 0, which writes every rank's and the max over ranks.
void writeMemory(const Setup &setup) {
  const rt::Program &p = setup.program;
  std::vector<bool> tied(p.inputs.size());
  for (const rt::ProgramIO &out : p.outputs)
    if (out.tiedInput >= 0)
      tied[out.tiedInput] = true;
  enum { kParams, kState, kInputs, kKinds };
  std::vector<int64_t> mine(kKinds, 0);
  for (size_t i = 0; i < setup.inputs.size(); ++i)
    mine[p.inputs[i].zeroInit ? kState
         : tied[i]            ? kParams
                              : kInputs] += setup.inputs[i].getBytes();
  std::vector<int64_t> all(mine);
#ifdef AUTOSHARD_HAVE_MPI
  all.resize(kKinds * job.size);
  MPI_Gather(mine.data(), kKinds, MPI_INT64_T, all.data(), kKinds, MPI_INT64_T,
             0, MPI_COMM_WORLD);
#endif
  if (job.rank != 0)
    return;
  const char *names[kKinds] = {"parameters", "optimizer_state", "inputs"};
  // {"ranks": [{"rank": r, kind: bytes...}...], "max": {kind: bytes...}}
  std::ostringstream json;
  json << "{\n  \"ranks\": [";
  std::vector<int64_t> max(kKinds, 0);
  for (int r = 0; r < job.size; ++r) {
    json << (r ? "," : "") << "\n    {\"rank\": " << r;
    for (int k = 0; k < kKinds; ++k) {
      json << ", \"" << names[k] << "\": " << all[r * kKinds + k];
      max[k] = std::max(max[k], all[r * kKinds + k]);
    }
    json << "}";
  }
  json << "\n  ],\n  \"max\": {";
  for (int k = 0; k < kKinds; ++k)
    json << (k ? ", " : "") << "\"" << names[k] << "\": " << max[k];
  json << "}\n}\n";
  std::ofstream file(memoryOut);
  file << json.str();
  file.close();
  if (!file)
    throw rt::Error("cannot write --memory-out '" + memoryOut +
                    "': " + std::strerror(errno));
}

/// --memory-stats: every rank's pool counters, gathered to rank 0, which
/// prints a line each ("memory:" alone on one rank).
void printMemoryStats(Setup &setup, rt::Backend &backend) {
  rt::MemoryStats now = backend.getMemoryStats();
  int64_t mine[] = {now.systemAllocations,
                    now.systemBytes,
                    now.poolHits,
                    now.peakBytesInUse,
                    now.systemAllocations -
                        setup.afterFirstRun.systemAllocations,
                    now.systemBytes - setup.afterFirstRun.systemBytes};
  std::vector<std::vector<uint8_t>> all =
      setup.comm->gatherToRoot(mine, sizeof(mine));
  if (job.rank != 0)
    return;
  const char *first = isTrainingRun(setup.program) ? "step" : "run";
  for (size_t r = 0; r < all.size(); ++r) {
    int64_t v[6];
    std::memcpy(v, all[r].data(), sizeof(v));
    std::cout << "memory"
                 << (all.size() > 1 ? " rank " + std::to_string(r)
                                    : std::string())
                 << ": " << v[0] << " system allocations (" << v[1]
                 << " bytes), " << v[2] << " pool hits, peak " << v[3]
                 << " bytes in use; allocations after the first " << first
                 << ": " << v[4] << " (" << v[5] << " bytes)\n";
  }
}

/// --profile / --profile-json: rank 0's time per kernel kind.
void writeProfile(const rt::Profiler &profiler) {
  if (job.rank != 0)
    return;
  if (profileTable)
    std::cout << profiler.formatTable();
  if (profileJson.empty())
    return;
  std::ofstream file(profileJson);
  file << profiler.formatJson();
  file.close();
  if (!file)
    throw rt::Error("cannot write --profile-json '" + profileJson + "'");
  std::cout << "profile -> " << profileJson << "\n";
}

/// Rank 0 writes every tied result's global value into --params-out.
void writeParams(Setup &setup, rt::Backend &backend,
                 const std::vector<rt::Tensor> &outputs) {
  const rt::Program &p = setup.program;
  std::set<std::string> used;
  int written = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const rt::ProgramIO &io = p.outputs[i];
    if (io.tiedInput < 0)
      continue;
    rt::Tensor global = gatherGlobal(setup, backend, io, outputs[i]);
    if (job.rank != 0)
      continue;
    fs::path file = fs::path(paramsOut.getValue()) / weightFileName(io.name, used);
    rt::writeNpy(file.string(), global);
    ++written;
  }
  if (job.rank == 0)
    std::cout << "params: " << written << " tensor"
                 << (written == 1 ? "" : "s") << " -> " << paramsOut << "\n";
}
} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "autoshard-run: run a partitioned program\n\n"
      "  mpirun -np N autoshard-run PROGRAM.asplan [--input NAME=FILE.npy ...]\n"
      "  (PROGRAM.mlir: lowered first by the autoshard driver beside it)\n"
      "      [--output-dir DIR] [--steps N --losses-out FILE.json "
      "--params-out DIR]\n"
      "  autoshard-run --compare A.npy B.npy [--rtol R] [--atol A]\n\n"
      "Arguments read --input files, else start at zero (dist.init = "
      "\"zeros\"),\nelse read their dist.weight file, else are seeded. "
      "With --steps N the\nprogram is a training step: results with "
      "dist.tied_arg feed the next step.\n");
  if (std::isnan(timeoutSeconds)) {
    std::cerr << "autoshard-run: error: --timeout must be a number of "
                    "seconds (0: never), got nan\n";
    return 2;
  }
  if (!(relTol >= 0) || !(absTol >= 0)) {
    std::cerr << "autoshard-run: error: --rtol and --atol must be "
                    "non-negative\n";
    return 2;
  }
  if (compareMode)
    return runCompare();
  if (positional.size() != 1) {
    std::cerr << "autoshard-run: error: expected one PROGRAM.asplan or "
                 "PROGRAM.mlir\n";
    return 2;
  }

#ifdef AUTOSHARD_HAVE_MPI
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &job.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &job.size);
  job.mpi = true;
#endif
  int status = 0;
  {
    Watchdog watchdog(timeoutSeconds);

    // Setup: every rank reports success or failure before anyone
    // communicates, so a bad input is one message and exit code 1.
    Setup setup;
    std::string error;
    // Created during setup so that a missing GPU is one clean error line.
    std::unique_ptr<rt::Backend> backend;
    try {
      if (backendName != "cpu" && backendName != "cuda")
        throw rt::Error("unknown --backend '" + backendName +
                        "' (expected cpu or cuda)");
      prepare(setup);
      std::string mismatch =
          setup.program.getKernelBackendWarning(backendName.getValue());
      if (job.rank == 0 && !mismatch.empty())
        std::fprintf(stderr, "autoshard-run: warning: %s\n", mismatch.c_str());
      backend = backendName == "cuda"
                    ? rt::createCudaBackend(rt::pickCudaDevice(job.rank))
                    : rt::createCpuBackend();
    } catch (const rt::Error &e) {
      error = e.what();
    }
    int failedRank = error.empty() ? job.size : job.rank;
#ifdef AUTOSHARD_HAVE_MPI
    MPI_Allreduce(MPI_IN_PLACE, &failedRank, 1, MPI_INT, MPI_MIN,
                  MPI_COMM_WORLD);
#endif
    // Every rank computes the same verdict from the gathered hashes; rank 0
    // reports it.
    if (failedRank == job.size && !(error = checkInputsAgree(setup)).empty())
      failedRank = 0;
    if (failedRank < job.size) {
      if (failedRank == job.rank) {
        while (!error.empty() && error.back() == '\n')
          error.pop_back();
        std::fprintf(stderr, "autoshard-run: error: %s\n", error.c_str());
      }
      status = 1;
    } else {
      watchdog.watch(*setup.comm);
      try {
        // NCCL communicators are created collectively on every rank; the MPI
        // communicator still gathers outputs to rank 0.
        std::unique_ptr<rt::Communicator> nccl;
        if (backendName == "cuda")
          nccl = rt::createNcclCommunicator(setup.program.mesh, *backend);
        rt::ExecutorOptions executorOptions;
        executorOptions.cudaGraphs = cudaGraphs;
        rt::Executor executor(setup.program, *backend,
                              nccl ? *nccl : *setup.comm, executorOptions);
        if (job.rank == debugFailRank)
          throw rt::Error("injected failure (--debug-fail-rank)");
        if (job.rank == debugHangRank && debugHangStep == 0)
          hang();
        if (!memoryOut.empty())
          writeMemory(setup);
        std::vector<rt::Tensor> inputs;
        for (const rt::Tensor &t : setup.inputs) {
          // In the backend's pool, so that the buffers of the arguments a
          // step replaces serve the next step.
          rt::Tensor in = backend->upload(t);
          if (in.getBuffer() == t.getBuffer()) {
            in = backend->allocateUninitialized(t.getDType(), t.getShape());
            backend->copy(t, in);
          }
          inputs.push_back(in);
        }
        setup.inputs.clear(); // the host copies are no longer needed
        // --repeat times the steady state, as PyTorch's benchmarks do: one
        // untimed, unprofiled run first pays for what happens once (cuBLAS
        // and CUDA modules loading lazily, the buffer pool filling).
        // With --cuda-graphs the second run is the recording: untimed too.
        if (repeat > 1)
          for (int r = 0; r < (cudaGraphs ? 2 : 1); ++r)
            executor.run(inputs);
        rt::Profiler profiler;
        if (profileTable || !profileJson.empty())
          executor.setProfiler(&profiler);
        std::vector<rt::Tensor> outputs =
            runSteps(setup, *backend, executor, std::move(inputs), watchdog);
        if (memoryStats)
          printMemoryStats(setup, *backend);
        writeProfile(profiler);
        // Gathering the results is one more phase of the same job.
        watchdog.rearm();
        if (writeOutputs)
          writeOutputFiles(setup, *backend, outputs);
        if (!paramsOut.empty())
          writeParams(setup, *backend, outputs);
        std::cout.flush();
      } catch (const rt::Error &e) {
        job.abort(e.what());
      }
    }
  }
#ifdef AUTOSHARD_HAVE_MPI
  MPI_Finalize();
#endif
  return status;
}
