//===- autoshard-run.cpp - Run a (partitioned) program on MPI ranks -------===//
//
//   mpirun -np N autoshard-run PROGRAM.mlir [--input NAME=FILE.npy ...]
//       [--seed S] [--output-dir DIR] [--timeout SECONDS]
//   autoshard-run --compare A.npy B.npy [--rtol R] [--atol A]
//
// Every rank parses and lowers the module, takes its mesh position from its
// rank, reads the *global* inputs (files, or the seeded initialiser keyed by
// argument index, so every mesh sees the same global values) and cuts its
// shard from the argument's dist.layout. After the run rank 0 assembles each
// global output from the result's dist.layout and writes
// DIR/output_<i>.npy. Setup errors (bad module, wrong -np, missing or
// mismatching input) are agreed on by all ranks and reported once; errors
// while running abort the whole job; a watchdog aborts a stuck job.
//
//===----------------------------------------------------------------------===//

#include "autoshard/InitAll.h"
#include "autoshard/Lower/ProgramLoader.h"
#include "autoshard/Runtime/Backend.h"
#include "autoshard/Runtime/Communicator.h"
#include "autoshard/Runtime/CudaBackend.h"
#include "autoshard/Runtime/Executor.h"
#include "autoshard/Runtime/HostIO.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#ifdef AUTOSHARD_HAVE_MPI
#include <mpi.h>
#endif

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

using namespace autoshard;
namespace cl = llvm::cl;

static cl::list<std::string> positional(cl::Positional,
                                        cl::desc("PROGRAM.mlir | A.npy B.npy"));
static cl::list<std::string>
    inputFiles("input",
               cl::desc("Global input: NAME=FILE.npy (NAME: the "
                        "argument's dist.name, argN or N)"),
               cl::value_desc("NAME=FILE"));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of generated inputs"),
                              cl::init(0));
static cl::opt<std::string>
    outputDir("output-dir", cl::desc("Where output_<i>.npy go"), cl::init("."));
static cl::opt<double>
    timeoutSeconds("timeout",
                   cl::desc("Abort the job after this many seconds (0: never)"),
                   cl::init(600));
static cl::opt<std::string> entry("entry", cl::desc("Function to run"),
                                  cl::init(""));
static cl::opt<std::string>
    backendName("backend",
                cl::desc("Kernel backend: cpu (OpenBLAS, MPI) or cuda (cuBLAS, "
                         "NCCL; one GPU per rank)"),
                cl::init("cpu"));
static cl::opt<bool> printPlan("print-plan",
                               cl::desc("Print the lowered plan (rank 0)"));
static cl::opt<bool> compareMode("compare",
                                 cl::desc("Compare two .npy files and exit"));
static cl::opt<double>
    relTol("rtol", cl::desc("Relative tolerance (--compare)"), cl::init(1e-5));
static cl::opt<double>
    absTol("atol", cl::desc("Absolute tolerance (--compare)"), cl::init(1e-6));
static cl::opt<int> repeat("repeat",
                           cl::desc("Run the program this many times and "
                                    "report the mean step time"),
                           cl::init(1));
static cl::opt<int> debugFailRank("debug-fail-rank", cl::Hidden, cl::init(-1),
                                  cl::desc("Testing: this rank fails"));
static cl::opt<int> debugHangRank("debug-hang-rank", cl::Hidden, cl::init(-1),
                                  cl::desc("Testing: this rank hangs"));

namespace {
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
/// stuck peer leaves the others blocked in a collective).
class Watchdog {
public:
  explicit Watchdog(double seconds) {
    if (seconds <= 0)
      return;
    // Ranks fire one after another: the first exit ends every rank, so the
    // job reports one timeout instead of N.
    double deadline = seconds + 0.5 * job.rank;
    thread = std::thread([this, seconds, deadline] {
      std::unique_lock<std::mutex> lock(mutex);
      if (!cv.wait_for(lock, std::chrono::duration<double>(deadline),
                       [this] { return done; }))
        job.abort("timed out after " + formatSeconds(seconds) +
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

private:
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::thread thread;
};

int runCompare() {
  if (positional.size() != 2) {
    llvm::errs() << "autoshard-run: error: --compare takes two .npy files\n";
    return 2;
  }
  try {
    rt::Tensor a = rt::readNpy(positional[0]);
    rt::Tensor b = rt::readNpy(positional[1]);
    double maxErr = 0;
    std::string diff = rt::compareTensors(a, b, relTol, absTol, maxErr);
    if (!diff.empty()) {
      llvm::outs() << "MISMATCH " << positional[0] << " vs " << positional[1]
                   << ": " << diff << "\n";
      return 1;
    }
    llvm::outs() << "MATCH " << a.getTypeString() << " max_abs_err=" << maxErr
                 << "\n";
    return 0;
  } catch (const rt::Error &e) {
    llvm::errs() << "autoshard-run: error: " << e.what() << "\n";
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

/// Everything a rank prepares before communicating.
struct Setup {
  rt::Program program;
  std::unique_ptr<rt::Communicator> comm;
  std::vector<rt::Tensor> inputs;
};

void prepare(Setup &setup, mlir::MLIRContext &context) {
  // Diagnostics are collected so the agreed error is printed once.
  std::string diagText;
  llvm::raw_string_ostream diagStream(diagText);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagStream);
  std::string path = positional[0];
  std::string errorMessage;
  auto file = mlir::openInputFile(path, &errorMessage);
  if (!file)
    throw rt::Error(errorMessage);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    throw rt::Error("cannot parse '" + path + "':\n" + diagText);
  mlir::FailureOr<rt::Program> program = lowerToProgram(*module, entry);
  if (failed(program))
    throw rt::Error("cannot run '" + path + "':\n" + diagText);
  setup.program = std::move(*program);
  const rt::Program &p = setup.program;
  if (printPlan && job.rank == 0)
    llvm::outs() << p.str();

  int64_t devices = p.mesh.getNumDevices();
  if (devices != job.size)
    throw rt::Error("the program runs on mesh " + p.mesh.str() + " of " +
                    std::to_string(devices) + " devices; launch it with " +
                    "mpirun -np " + std::to_string(devices) + " (got " +
                    std::to_string(job.size) + " rank" +
                    (job.size == 1 ? "" : "s") + ")");
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
  llvm::SmallString<256> programDir(path);
  llvm::sys::path::remove_filename(programDir);
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const rt::ProgramIO &io = p.inputs[i];
    const rt::ValueInfo &info = p.values[io.value];
    std::string file;
    for (const std::string &name :
         {io.name, "arg" + std::to_string(i), std::to_string(i)})
      if (auto it = given.find(name); it != given.end()) {
        file = it->second;
        usedNames.insert(name);
      }
    if (file.empty() && !io.file.empty()) {
      llvm::SmallString<256> resolved(io.file);
      if (!llvm::sys::path::is_absolute(resolved) && !programDir.empty())
        resolved = (programDir + "/" + io.file).str();
      file = std::string(resolved);
    }
    rt::Tensor global =
        file.empty() ? rt::makeSeededTensor(info.type, io.globalShape, seed, i)
                     : rt::readNpy(file);
    if (global.getDType() != info.type || global.getShape() != io.globalShape)
      throw rt::Error("input '" + io.name + "' (argument " + std::to_string(i) +
                      "): expected " +
                      std::string(rt::stringifyDType(info.type)) + "[" +
                      rt::stringifyShape(io.globalShape) + "], got " +
                      global.getTypeString() + " from '" + file + "'");
    setup.inputs.push_back(
        rt::cutShard(global, p.mesh, io.layout, pos, info.shape));
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
} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv,
                              "autoshard-run: run a partitioned program\n");
  if (compareMode)
    return runCompare();
  if (positional.size() != 1) {
    llvm::errs() << "autoshard-run: error: expected one PROGRAM.mlir\n";
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
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    mlir::MLIRContext context(registry);
    context.loadAllAvailableDialects();
    // One located line per error, not a dump of the enclosing op.
    context.printOpOnDiagnostic(false);
    Setup setup;
    std::string error;
    // Created during setup so that a missing GPU is one clean error line.
    std::unique_ptr<rt::Backend> backend;
    try {
      if (backendName != "cpu" && backendName != "cuda")
        throw rt::Error("unknown --backend '" + backendName +
                        "' (expected cpu or cuda)");
      prepare(setup, context);
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
    if (failedRank < job.size) {
      if (failedRank == job.rank) {
        while (!error.empty() && error.back() == '\n')
          error.pop_back();
        std::fprintf(stderr, "autoshard-run: error: %s\n", error.c_str());
      }
      status = 1;
    } else {
      try {
        // NCCL communicators are created collectively on every rank; the MPI
        // communicator still gathers outputs to rank 0.
        std::unique_ptr<rt::Communicator> nccl;
        if (backendName == "cuda")
          nccl = rt::createNcclCommunicator(setup.program.mesh, *backend);
        rt::Executor executor(setup.program, *backend,
                              nccl ? *nccl : *setup.comm);
        if (job.rank == debugFailRank)
          throw rt::Error("injected failure (--debug-fail-rank)");
        if (job.rank == debugHangRank)
          for (;;)
            std::this_thread::sleep_for(std::chrono::seconds(1));
        std::vector<rt::Tensor> inputs;
        for (const rt::Tensor &t : setup.inputs)
          inputs.push_back(backend->upload(t));
        std::vector<rt::Tensor> outputs;
        auto start = std::chrono::steady_clock::now();
        for (int r = 0; r < std::max(1, repeat.getValue()); ++r)
          outputs = executor.run(inputs);
        double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();

        const rt::Program &p = setup.program;
        if (job.rank == 0 && !llvm::sys::fs::is_directory(outputDir) &&
            llvm::sys::fs::create_directories(outputDir))
          throw rt::Error("cannot create output directory '" + outputDir + "'");
        for (size_t i = 0; i < outputs.size(); ++i) {
          rt::Tensor local = backend->download(outputs[i]);
          std::vector<std::vector<uint8_t>> all =
              setup.comm->gatherToRoot(local.getRawData(), local.getBytes());
          if (job.rank != 0)
            continue;
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
          const rt::ProgramIO &io = p.outputs[i];
          rt::Tensor global =
              rt::assembleGlobal(locals, p.mesh, io.layout, io.globalShape);
          std::string file =
              outputDir + "/output_" + std::to_string(i) + ".npy";
          rt::writeNpy(file, global);
          llvm::outs() << "output " << i << " '" << io.name
                       << "': " << global.getTypeString() << " "
                       << summarize(global) << " -> " << file << "\n";
        }
        if (job.rank == 0 && repeat > 1)
          llvm::outs() << "step time: "
                       << llvm::format("%.6f", seconds / repeat) << " s ("
                       << repeat << " runs)\n";
        llvm::outs().flush();
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
