//===- GpuGemmBench.cpp - CUDA backend GEMMs vs cuBLASLt called directly --===//
//
// For each precision (fp32, tf32, bf16, fp16) and shape, the achieved
// TFLOP/s of
//   program: a Program (Empty C; C += A B, the zero init folded into the
//            GEMM) run by the Executor on the CUDA backend - what
//            autoshard-run's GEMMs get: Executor::enqueue, its bookkeeping,
//            output allocation from the pool and the output released back;
//   graph:   the same program through an Executor with
//            ExecutorOptions::cudaGraphs (autoshard-run --cuda-graphs): its
//            second run is recorded into a CUDA graph and every later one
//            replays it, so the host's per-run work is one graph launch;
//   backend: Backend::gemm on preallocated tensors;
//   cuBLASLt: cublasLtMatmul on the same buffers with descriptors and the
//            heuristic's algorithm made once, outside the timing;
// and the ratios program/cuBLASLt and backend/cuBLASLt (the targets;
// "prog/cub" takes the better of the two program paths, "graph/cub" is the
// graph's alone). All four are timed the same way: N calls queued, then one
// synchronize, wall clock; N is at least --iters and large enough for
// --min-ms of work. The sides are timed in rounds (program, backend,
// cuBLASLt, ... then again, --rounds times, on the same buffers): the
// TFLOP/s columns and prog/cub, back/cub are the best round of each side, and
// "p/c med", "b/c med" the median over the rounds of the ratio within one
// round, which a clock ramp or a neighbour's burst moves for both sides at
// once. The targets are decided on the medians (a launch-bound 7 us GEMM's
// best-round ratio swings 5% run to run).
// "run+sync" is the program through Executor::run, which waits for the
// device at the end of every run: a one-GEMM program pays one stream
// synchronisation per GEMM there (a whole program pays one per step), so it
// is shown, not a target.
// fp32 computes in full FP32, tf32 with CUBLAS_COMPUTE_32F_FAST_TF32,
// bf16/fp16 take bf16/f16 A and B with FP32 accumulation into an f32 C.
//
//   autoshard-bench-gpu-gemm [--iters N] [--min-ms T] [--rounds R]
//                            [--quick] [--precision P] [--self-test]
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/CudaBackend.h"
#include "autoshard/Runtime/Executor.h"
#include "autoshard/Runtime/HostIO.h"

#include "RoundStats.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

using namespace autoshard;
using namespace autoshard::rt;

namespace {
struct Shape3 {
  int64_t batch, m, n, k;
};

struct Precision {
  const char *name;
  DType in;   // A and B
  bool tf32;
  cudaDataType_t ltIn;
  cublasComputeType_t compute;
};

const Precision kPrecisions[] = {
    {"fp32", DType::F32, false, CUDA_R_32F, CUBLAS_COMPUTE_32F},
    {"tf32", DType::F32, true, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32},
    {"bf16", DType::BF16, false, CUDA_R_16BF, CUBLAS_COMPUTE_32F},
    {"fp16", DType::F16, false, CUDA_R_16F, CUBLAS_COMPUTE_32F},
};

double seconds(const std::function<void()> &step,
               const std::function<void()> &sync, int iters) {
  sync();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i)
    step();
  sync();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
             .count() /
         iters;
}

Shape shapeOf(const Shape3 &s, int64_t rows, int64_t cols) {
  return s.batch > 1 ? Shape{s.batch, rows, cols} : Shape{rows, cols};
}

Program gemmProgram(const Shape3 &s, const Precision &prec) {
  auto io = [](ValueId v, const Shape &shape) {
    ProgramIO p;
    p.value = v;
    p.name = "v" + std::to_string(v);
    p.globalShape = shape;
    p.layout = TensorLayout::replicated(shape.size());
    return p;
  };
  Shape a = shapeOf(s, s.m, s.k), b = shapeOf(s, s.k, s.n),
        c = shapeOf(s, s.m, s.n);
  Program p;
  p.mesh = DeviceMesh({MeshAxis{"x", 1}});
  ValueId va = p.addValue(prec.in, a), vb = p.addValue(prec.in, b);
  p.inputs = {io(va, a), io(vb, b)};
  ValueId init = p.addValue(DType::F32, c), out = p.addValue(DType::F32, c);
  Instruction empty;
  empty.kind = OpKind::Empty;
  empty.results = {init};
  Instruction mm;
  mm.kind = s.batch > 1 ? OpKind::BatchMatmul : OpKind::Matmul;
  mm.operands = {va, vb, init};
  mm.results = {out};
  mm.tf32 = prec.tf32;
  p.instructions = {empty, mm};
  p.outputs = {io(out, c)};
  return p;
}

void check(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLASLt error in ") + what + ": " +
                cublasGetStatusString(status));
}

/// The same GEMM made directly with cuBLASLt: row-major C = A B as
/// column-major C^T = B^T A^T, descriptors and algorithm made once.
class DirectLt {
public:
  DirectLt(const Shape3 &s, const Precision &prec, void *workspace,
           size_t workspaceBytes)
      : workspace(workspace), workspaceBytes(workspaceBytes) {
    check(cublasLtCreate(&handle), "cublasLtCreate");
    check(cublasLtMatmulDescCreate(&desc, prec.compute, CUDA_R_32F),
          "cublasLtMatmulDescCreate");
    a = layout(prec.ltIn, s.n, s.k, s.batch, s.k * s.n);
    b = layout(prec.ltIn, s.k, s.m, s.batch, s.m * s.k);
    c = layout(CUDA_R_32F, s.n, s.m, s.batch, s.m * s.n);
    cublasLtMatmulPreference_t pref;
    check(cublasLtMatmulPreferenceCreate(&pref), "preference");
    uint64_t bytes = workspaceBytes;
    check(cublasLtMatmulPreferenceSetAttribute(
              pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes,
              sizeof(bytes)),
          "preference");
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    check(cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, c, c, pref, 1,
                                         &result, &found),
          "cublasLtMatmulAlgoGetHeuristic");
    cublasLtMatmulPreferenceDestroy(pref);
    if (!found)
      throw Error("cuBLASLt: no algorithm");
    algo = result.algo;
  }
  ~DirectLt() {
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(c);
    cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(handle);
  }
  void run(const void *pa, const void *pb, void *pc, cudaStream_t stream) {
    const float one = 1.0f, zero = 0.0f;
    check(cublasLtMatmul(handle, desc, &one, pb, a, pa, b, &zero, pc, c, pc, c,
                         &algo, workspace, workspaceBytes, stream),
          "cublasLtMatmul");
  }

private:
  static cublasLtMatrixLayout_t layout(cudaDataType_t type, int64_t rows,
                                       int64_t cols, int64_t batch,
                                       int64_t stride) {
    cublasLtMatrixLayout_t l;
    check(cublasLtMatrixLayoutCreate(&l, type, rows, cols, rows), "layout");
    if (batch > 1) {
      int32_t count = static_cast<int32_t>(batch);
      check(cublasLtMatrixLayoutSetAttribute(
                l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
            "layout");
      check(cublasLtMatrixLayoutSetAttribute(
                l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                sizeof(stride)),
            "layout");
    }
    return l;
  }
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo;
  void *workspace;
  size_t workspaceBytes;
};

struct Row {
  double program, backend, direct, synced, graph; // TFLOP/s (best rounds)
  // Medians over the rounds of the per-round throughput ratios to cuBLASLt.
  double programMedian, backendMedian, graphMedian;
  bool replayed; // the graph column's Executor replayed a recording
};

/// The per-call seconds of each of `steps` (all ending in `sync`) in each of
/// `rounds` rounds (result[step][round]), the steps taken in turn within a
/// round: N calls each, N the larger of `iters` and what makes `minSeconds`
/// of the first step's work (at most 20000).
std::vector<std::vector<double>>
roundSeconds(const std::vector<std::function<void()>> &steps,
             const std::function<void()> &sync, int iters, double minSeconds,
             int rounds) {
  for (const auto &step : steps) // warm up (heuristics, memory pool)
    for (int i = 0; i < 3; ++i)
      step();
  double probe = seconds(steps.front(), sync, 3);
  int n = std::max<int>(
      iters, static_cast<int>(std::min(20000.0, minSeconds / probe)));
  std::vector<std::vector<double>> t(steps.size());
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < steps.size(); ++i)
      t[i].push_back(seconds(steps[i], sync, n));
  return t;
}

Row measure(Backend &gpu, const Shape3 &s, const Precision &prec, int iters,
            double minSeconds, int rounds, void *workspace,
            size_t workspaceBytes) {
  Tensor a = gpu.upload(makeSeededTensor(prec.in, shapeOf(s, s.m, s.k), 1, 1));
  Tensor b = gpu.upload(makeSeededTensor(prec.in, shapeOf(s, s.k, s.n), 1, 2));
  Tensor c = gpu.allocate(DType::F32, shapeOf(s, s.m, s.n));
  double flops = 2.0 * s.batch * s.m * s.n * s.k;

  Program program = gemmProgram(s, prec);
  std::unique_ptr<Communicator> local = createLocalCommunicator(program.mesh);
  Executor executor(program, gpu, *local);
  ExecutorOptions graphOptions;
  graphOptions.cudaGraphs = true;
  Executor graphed(program, gpu, *local, graphOptions);
  std::vector<Tensor> inputs = {a, b};

  GemmOptions options;
  options.batched = s.batch > 1;
  options.accumulate = false;
  options.tf32 = prec.tf32;

  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  DirectLt direct(s, prec, workspace, workspaceBytes);
  // Both streams: each step's own is what it waits for; the other is idle.
  auto sync = [&] {
    gpu.synchronize();
    cudaStreamSynchronize(stream);
  };
  std::vector<std::vector<double>> t = roundSeconds(
      {[&] { executor.enqueue(inputs); },
       [&] { gpu.gemm(a, b, c, options); },
       [&] {
         direct.run(a.getRawData(), b.getRawData(), c.getRawData(), stream);
       },
       [&] { executor.run(inputs); },
       [&] { graphed.enqueue(inputs); }},
      sync, iters, minSeconds, rounds);
  cudaStreamDestroy(stream);
  auto tflops = [&](size_t i) { return flops / bench::best(t[i]) / 1e12; };
  return {tflops(0),
          tflops(1),
          tflops(2),
          tflops(3),
          tflops(4),
          bench::medianSpeedRatio(t[0], t[2]),
          bench::medianSpeedRatio(t[1], t[2]),
          bench::medianSpeedRatio(t[4], t[2]),
          graphed.lastRunReplayed()};
}
} // namespace

int main(int argc, char **argv) {
  int iters = 20, rounds = 5;
  double minMs = 20;
  bool quick = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--min-ms") && i + 1 < argc)
      minMs = std::max(0.0, std::atof(argv[++i]));
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--self-test"))
      return bench::selfTest() ? 0 : 1;
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--precision") && i + 1 < argc)
      only = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: %s [--iters N] [--min-ms T] [--rounds R] "
                   "[--quick] [--precision fp32|tf32|bf16|fp16] "
                   "[--self-test]\n",
                   argv[0]);
      return 2;
    }
  }
  if (!isCudaAvailable()) {
    std::printf("gpu_gemm: skipped: %s\n", getCudaUnavailableReason().c_str());
    return 0;
  }
  std::vector<Shape3> shapes = {{1, 1024, 1024, 1024}, {1, 2048, 2048, 2048},
                                {1, 4096, 4096, 4096}, {1, 8192, 8192, 8192},
                                {1, 4096, 1024, 8192}, // MLP-like, K-heavy
                                {1, 8192, 4096, 1024}, // MLP up-projection
                                {32, 512, 512, 64},    // attention scores
                                {32, 512, 64, 512},    // attention @ V
                                {8, 2048, 2048, 256}};
  if (quick)
    shapes = {{1, 512, 512, 512}, {4, 256, 256, 64}};
  try {
    std::unique_ptr<Backend> gpu = createCudaBackend(0);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    size_t workspaceBytes = size_t(32) << 20; // as the backend's
    void *workspace = nullptr;
    if (cudaMalloc(&workspace, workspaceBytes) != cudaSuccess)
      throw Error("cannot allocate the cuBLASLt workspace");
    std::printf("device: %s, >= %d calls and >= %g ms per timing, %d rounds "
                "(best round; med: median of per-round ratios); targets on "
                "the medians: backend/cuBLASLt >= 0.97, program/cuBLASLt >= "
                "0.95\n",
                prop.name, iters, minMs, rounds);
    std::printf("%-5s %-22s %11s %11s %11s %9s %9s %9s %15s %9s %9s %9s\n",
                "prec", "batch x m x n x k", "program", "backend", "cuBLASLt",
                "prog/cub", "back/cub", "run+sync", "program (graph)",
                "graph/cub", "p/c med", "b/c med");
    // prog/cub and the lowest program/cuBLASLt take the better program
    // path per row (enqueue or graph); the last lines name both.
    double minProgram = 1e9, minBackend = 1e9, minEnqueue = 1e9,
           minGraph = 1e9;
    double minProgramMed = 1e9, minBackendMed = 1e9, minEnqueueMed = 1e9,
           minGraphMed = 1e9;
    bool allReplayed = true;
    for (const Precision &prec : kPrecisions) {
      if (!only.empty() && only != prec.name)
        continue;
      for (const Shape3 &s : shapes) {
        Row r = measure(*gpu, s, prec, iters, minMs * 1e-3, rounds, workspace,
                        workspaceBytes);
        char label[64];
        std::snprintf(label, sizeof(label), "%lld x %lld x %lld x %lld",
                      (long long)s.batch, (long long)s.m, (long long)s.n,
                      (long long)s.k);
        double er = r.program / r.direct, gr = r.graph / r.direct;
        double pr = std::max(er, gr), br = r.backend / r.direct;
        double pm = std::max(r.programMedian, r.graphMedian);
        minProgram = std::min(minProgram, pr);
        minBackend = std::min(minBackend, br);
        minEnqueue = std::min(minEnqueue, er);
        minGraph = std::min(minGraph, gr);
        minProgramMed = std::min(minProgramMed, pm);
        minBackendMed = std::min(minBackendMed, r.backendMedian);
        minEnqueueMed = std::min(minEnqueueMed, r.programMedian);
        minGraphMed = std::min(minGraphMed, r.graphMedian);
        allReplayed = allReplayed && r.replayed;
        std::printf("%-5s %-22s %8.1f TF %8.1f TF %8.1f TF %9.3f %9.3f %9.3f "
                    "%12.1f TF %9.3f %9.3f %9.3f%s%s\n",
                    prec.name, label, r.program, r.backend, r.direct, pr, br,
                    r.synced / r.direct, r.graph, gr, pm, r.backendMedian,
                    r.replayed ? "" : "  (graph not replayed)",
                    pm < 0.95 || r.backendMedian < 0.97 ? "  (below target)"
                                                        : "");
      }
    }
    std::printf("gpu_gemm: lowest backend/cuBLASLt %.3f, lowest "
                "program/cuBLASLt %.3f\n",
                minBackend, minProgram);
    std::printf("gpu_gemm: lowest program (enqueue)/cuBLASLt %.3f, lowest "
                "program (graph)/cuBLASLt %.3f%s\n",
                minEnqueue, minGraph,
                allReplayed ? "" : " (some graphs were not replayed)");
    std::printf("gpu_gemm: median of %d per-round ratios: lowest "
                "backend/cuBLASLt %.3f, lowest program/cuBLASLt %.3f "
                "(enqueue %.3f, graph %.3f)\n",
                rounds, minBackendMed, minProgramMed, minEnqueueMed,
                minGraphMed);
    cudaFree(workspace);
  } catch (const Error &e) {
    std::fprintf(stderr, "gpu_gemm: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
