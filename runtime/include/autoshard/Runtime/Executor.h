//===- Executor.h - Runs a Program on one rank ------------------*- C++ -*-===//
#ifndef AUTOSHARD_RUNTIME_EXECUTOR_H
#define AUTOSHARD_RUNTIME_EXECUTOR_H

#include "autoshard/Runtime/Backend.h"
#include "autoshard/Runtime/Communicator.h"
#include "autoshard/Runtime/KernelLibrary.h"
#include "autoshard/Runtime/Profiler.h"
#include "autoshard/Runtime/Program.h"

#include <functional>
#include <map>

namespace autoshard::rt {

struct ExecutorOptions {
  /// Replay runs as CUDA graphs where the backend records work
  /// (Backend::beginCapture): the second enqueue on the same input buffers
  /// records the whole program into a graph and every later enqueue on
  /// those buffers replays it as one launch, so a launch-bound program
  /// (small GEMMs) pays the host's per-instruction work once. A replay
  /// writes the same output buffers: it overwrites the outputs of the
  /// previous run, which callers that keep them must copy first. Runs on
  /// other input buffers, with a profiler, of programs with collectives,
  /// and every run after a recording failed (a call that waits for the
  /// device, a buffer the pool has to obtain) take the plain path. Gathers
  /// and loop nests that can fault on data are recorded too: their faults
  /// are raised when the run (run()) or the caller synchronises.
  bool cudaGraphs = false;
};

/// Interprets a verified Program on one rank: kernels go to the backend,
/// collectives are packed along their dim and sent through the communicator.
/// Values are freed after their last use; an init that dies at its consumer
/// is updated in place.
class Executor {
public:
  /// Verifies the program (throws rt::Error), prepares the communicator
  /// groups of every collective and, on the CPU backend, loads the program's
  /// compiled kernels (a one-line rt::Error if the library is missing or
  /// lacks one).
  Executor(const Program &program, Backend &backend, Communicator &comm,
           ExecutorOptions options = {});
  ~Executor();

  /// Runs on local (shard) inputs in backend memory, one per program input
  /// with the input value's type; returns the local outputs once the
  /// backend has finished them (Backend::synchronize).
  std::vector<Tensor> run(const std::vector<Tensor> &inputs);

  /// run() without its closing synchronize: returns once the work is queued
  /// on the backend (the same as run() on the CPU). The outputs are valid to
  /// every later use through the backend: download() waits for them and the
  /// next kernel or run is queued behind them, so a caller that chains runs
  /// (steps, a benchmark) waits once, not per run. A device fault shows at
  /// the next synchronising call instead of here.
  std::vector<Tensor> enqueue(const std::vector<Tensor> &inputs);

  /// Whether the last enqueue or run replayed a recorded graph
  /// (ExecutorOptions::cudaGraphs).
  bool lastRunReplayed() const { return replayed; }
  /// Why --cuda-graphs recorded no graph (one line; later runs stay plain):
  /// the program has collectives, the backend cannot record, or the call
  /// that failed while recording with its instruction's location. Empty
  /// while a graph is recorded or none was tried yet.
  const std::string &getGraphFailure() const { return graphFailure; }

  /// Times every instruction into `profiler` from the next run on (null:
  /// stop). On a device backend each instruction is then synchronised.
  void setProfiler(Profiler *profiler);

  /// One collective instruction in three phases (ExecutorCollective.cpp):
  /// the pack phase has queued its kernels and made `buffers`; `exchange`
  /// (empty for steps without one) is the communicator call on them and
  /// `unpack` makes the result from them once the exchange is complete.
  struct CollectivePlan {
    std::vector<Tensor> buffers;
    std::function<void()> exchange;
    std::function<Tensor()> unpack;
  };

  /// An input's address and type, as a recorded graph reads it.
  struct InputKey {
    const void *data = nullptr;
    DType type = DType::F32;
    Shape shape;
  };

private:
  /// enqueue() without graphs: the instructions one by one.
  std::vector<Tensor> enqueuePlain(const std::vector<Tensor> &inputs);
  /// enqueue() with ExecutorOptions::cudaGraphs: replays, records or runs
  /// plainly (see there); records on the second run on the same buffers.
  std::vector<Tensor> enqueueGraph(const std::vector<Tensor> &inputs);
  /// Records one run into `graph` and replays it; false (nothing queued)
  /// when the backend could not record it.
  bool capture(const std::vector<Tensor> &inputs);
  void execute(const Instruction &inst, std::vector<Tensor> &env);
  void executeWindow(const Instruction &inst, std::vector<Tensor> &env);
  void executeGeneric(const Instruction &inst, std::vector<Tensor> &env);
  /// Makes every constant and process index (the invariant values) before
  /// the first run's first instruction. Made where they stand, a late one
  /// could take a block an earlier value freed in that run, and the second
  /// run, with every invariant held from its start, would need a block the
  /// first never obtained: a CUDA graph recorded then could not get it.
  void makeInvariants();
  void makeProcessIndex(const Instruction &inst, std::vector<Tensor> &env);
  void executeCollective(const Instruction &inst, std::vector<Tensor> &env);
  CollectivePlan packCollective(const Instruction &inst, const Tensor &input);
  /// Checks an unpacked collective result against the declared value and
  /// stores it (reshaped to the declared shape).
  void finishCollective(const Instruction &inst, const Tensor &result,
                        std::vector<Tensor> &env);
  /// lastUse, frees and leftovers (constructor).
  void planFrees();
  /// Frees the values instruction `i` was the last to read, and its
  /// results nothing reads.
  void freeDead(size_t i) {
    for (size_t k = freeBegin[i], e = freeBegin[i + 1]; k < e; ++k)
      env[frees[k]] = Tensor();
  }
  /// The program inputs checked against their values, into `env`.
  void bindInputs(const std::vector<Tensor> &inputs);
  /// Throws unless every result of `inst` has its declared type and shape.
  void checkResults(const Instruction &inst,
                    const std::vector<Tensor> &env) const;
  /// Compute-communication overlap: on an asynchronous communicator a
  /// collective's exchange is left in flight ("pending") and its result is
  /// awaited and unpacked when an instruction (or the outputs) first reads
  /// it, so the compute queued in between overlaps the exchange.
  void resolveOperands(const Instruction &inst, std::vector<Tensor> &env);
  void resolvePending(ValueId id, std::vector<Tensor> &env);
  /// Waits (device-side) for every exchange in flight and forgets them.
  void dropPending();
  Tensor takeInit(std::vector<Tensor> &env, ValueId id, size_t instIndex);
  /// A value's buffer from the backend: zero-filled, or uninitialised for
  /// one a kernel overwrites whole; timed as "allocation" when profiling.
  Tensor allocate(DType type, const Shape &shape, bool zeroed);
  /// The profile kind of instruction `i`.
  std::string getProfileKind(size_t i) const;
  /// Marks zero inits read only by one GEMM: the init is never made and the
  /// GEMM overwrites a fresh buffer (beta = 0) instead of adding to zeros.
  void foldZeroInits();
  /// Sets checksResults (constructor).
  void markCheckedResults();

  const Program &program;
  Backend &backend;
  Communicator &comm;
  ExecutorOptions executorOptions;
  /// The env of the running enqueue, kept between runs for its storage.
  std::vector<Tensor> env;
  /// Constant and process-index results by value: made (uploaded) on the
  /// first run and shared by the later ones, which then neither copy
  /// host data nor wait for it (a recorded graph could not).
  std::vector<Tensor> invariant;
  bool invariantsMade = false;
  // ExecutorOptions::cudaGraphs state: the recorded run, the inputs and
  // outputs it was recorded with, the previous run's inputs (a recording
  // needs two runs on the same buffers) and why recording failed (empty:
  // it did not).
  std::unique_ptr<CapturedWork> graph;
  std::vector<InputKey> graphInputs, previousInputs;
  std::vector<Tensor> graphOutputs;
  std::string graphFailure;
  bool replayed = false;
  std::vector<size_t> lastUse; // instruction index of each value's last use
  // What instruction i frees after it runs: frees[freeBegin[i] ..
  // freeBegin[i + 1]). Made once: a run only walks these lists.
  std::vector<ValueId> frees;
  std::vector<size_t> freeBegin;
  /// Values still in `env` after a complete run (outputs, unread inputs).
  std::vector<ValueId> leftovers;
  std::vector<bool> movesOutput; // per output: its last occurrence
  bool hasCollectives = false; // never recorded into a graph (capture)
  struct GenericArgs { // executeGeneric's operand lists, kept for storage
    std::vector<const Tensor *> ins, caps;
    std::vector<Tensor> outs;
    std::vector<Tensor *> outPtrs;
  } genericArgs;
  std::shared_ptr<KernelLibrary> kernelLibrary;
  std::vector<KernelFn> kernels; // per instruction; null: interpret
  std::vector<bool> skipped;      // per instruction: a folded zero init
  std::vector<bool> overwrites;   // per instruction: a GEMM with beta = 0
  /// Per instruction: whether its results need checkResults (those
  /// execute() allocates with their declared type cannot differ).
  std::vector<bool> checksResults;
  size_t current = 0;
  Profiler *profiler = nullptr;
  std::vector<size_t> profileSlots; // per instruction
  size_t allocationSlot = 0, initCopySlot = 0;
  double nestedSeconds = 0; // charged to other kinds within an instruction
  struct PendingCollective {
    std::shared_ptr<Communicator::Completion> done;
    CollectivePlan plan; // its buffers stay alive until `done`
    const Instruction *inst;
  };
  std::map<ValueId, PendingCollective> pending; // by result value
};

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_EXECUTOR_H
