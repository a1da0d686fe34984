//===- ExecutorOverhead.cpp - Host cost of one executed instruction -------===//
//
// The executor's bookkeeping per instruction, on the CPU backend, with as
// little backend work as possible so that the bookkeeping is what shows:
//   matmul:  N chained [1x1] @ [1x1] matmuls, each into an Empty init that
//            folds into the GEMM (2N instructions, N executed): what a GPU
//            program pays per GEMM on the host besides the cuBLASLt call;
//   reshape: N chained reshapes (no backend call at all);
//   gemm1:   the one-GEMM program of autoshard-bench-gpu-gemm ([1x1] inputs),
//            enqueued N times: the host cost of a whole program run (input
//            binding, the output's allocation, one GEMM, the outputs).
// Prints, per program, the best of REPS runs divided by the executed
// instructions (gemm1: by the N runs, "ns/run"), for run() (which
// synchronises at the end; a no-op on the CPU) and enqueue().
//
//   autoshard-bench-executor-overhead [N REPS]
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/Executor.h"
#include "autoshard/Runtime/HostIO.h"
#include "../../unittests/Runtime/TestPrograms.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace autoshard;
using namespace autoshard::rt;

/// x_{l+1} = x_l @ w, N times, each product into a fresh Empty.
static Program makeMatmulChain(int64_t n) {
  test::ProgramBuilder b;
  ValueId x = b.input(DType::F32, {1, 1}), w = b.input(DType::F32, {1, 1});
  for (int64_t l = 0; l < n; ++l) {
    ValueId empty = b.add(OpKind::Empty, {}, DType::F32, {1, 1}).results[0];
    x = b.add(OpKind::Matmul, {x, w, empty}, DType::F32, {1, 1}).results[0];
  }
  b.output(x);
  return b.take();
}

/// N reshapes between [1x1] and [1].
static Program makeReshapeChain(int64_t n) {
  test::ProgramBuilder b;
  ValueId x = b.input(DType::F32, {1, 1});
  for (int64_t l = 0; l < n; ++l)
    x = b.add(OpKind::Reshape, {x}, DType::F32,
              l % 2 ? Shape{1, 1} : Shape{1})
            .results[0];
  b.output(x);
  return b.take();
}

static double bestSeconds(int reps, const std::function<void()> &fn) {
  fn(); // warm up: the pool fills
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - t0)
                              .count());
  }
  return best;
}

/// The one-GEMM program (Empty C; C += A B, folded to one beta = 0 GEMM)
/// run `n` times per timing: host ns per program run.
static void printOneGemmRuns(Backend &cpu, int64_t n, int reps) {
  Program p = makeMatmulChain(1);
  std::unique_ptr<Communicator> comm = createLocalCommunicator(p.mesh);
  Executor exec(p, cpu, *comm);
  std::vector<Tensor> inputs = {makeSeededTensor(DType::F32, {1, 1}, 1, 0),
                                makeSeededTensor(DType::F32, {1, 1}, 1, 1)};
  double tRun = bestSeconds(reps, [&] {
    for (int64_t i = 0; i < n; ++i)
      exec.run(inputs);
  });
  double tEnqueue = bestSeconds(reps, [&] {
    for (int64_t i = 0; i < n; ++i)
      exec.enqueue(inputs);
  });
  std::printf("%-8s %12lld %14.1f %14.1f   (ns/run)\n", "gemm1", (long long)n,
              tRun / n * 1e9, tEnqueue / n * 1e9);
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? std::max(1LL, std::atoll(argv[1])) : 10000;
  int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
  std::unique_ptr<Backend> cpu = createCpuBackend();
  std::printf("executor overhead on the cpu backend: %lld-instruction "
              "chains, best of %d runs\n",
              (long long)n, reps);
  std::printf("%-8s %12s %14s %14s\n", "program", "executed", "run ns/inst",
              "enqueue ns/inst");
  struct Case {
    const char *name;
    Program program;
    int64_t executed;
  } cases[] = {{"matmul", makeMatmulChain(n), n},
               {"reshape", makeReshapeChain(n), n}};
  for (Case &c : cases) {
    std::unique_ptr<Communicator> comm = createLocalCommunicator(c.program.mesh);
    Executor exec(c.program, *cpu, *comm);
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < c.program.inputs.size(); ++i)
      inputs.push_back(makeSeededTensor(
          DType::F32, c.program.values[c.program.inputs[i].value].shape, 1, i));
    double tRun = bestSeconds(reps, [&] { exec.run(inputs); });
    double tEnqueue = bestSeconds(reps, [&] { exec.enqueue(inputs); });
    std::printf("%-8s %12lld %14.1f %14.1f\n", c.name, (long long)c.executed,
                tRun / c.executed * 1e9, tEnqueue / c.executed * 1e9);
  }
  printOneGemmRuns(*cpu, n, reps);
  return 0;
}
