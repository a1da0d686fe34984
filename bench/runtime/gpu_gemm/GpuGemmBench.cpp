//===- GpuGemmBench.cpp - CUDA backend GEMMs vs cuBLAS called directly ----===//
//
// For each shape, the achieved TFLOP/s of
//   program: a Program (Empty C; C += A B) run by the Executor on the CUDA
//            backend - what autoshard-run's GEMMs get, including the zeroed
//            init and the executor's bookkeeping;
//   backend: Backend::matmul / batchMatmul on preallocated tensors;
//   cuBLAS:  cublasSgemm / cublasSgemmStridedBatched on the same buffers;
// and the ratios program/cuBLAS and backend/cuBLAS. All three run full FP32
// (cuBLAS's default math mode, no TF32) and are timed the same way: N calls
// queued, then one synchronize, wall clock.
//
//   autoshard-bench-gpu-gemm [--iters N] [--quick]
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/CudaBackend.h"
#include "autoshard/Runtime/Executor.h"
#include "autoshard/Runtime/HostIO.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

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

double seconds(const std::function<void()> &step, const std::function<void()> &sync,
               int iters) {
  for (int i = 0; i < 3; ++i) // warm up (cuBLAS heuristics, memory pool)
    step();
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

Program gemmProgram(const Shape3 &s) {
  bool batched = s.batch > 1;
  Shape a = batched ? Shape{s.batch, s.m, s.k} : Shape{s.m, s.k};
  Shape b = batched ? Shape{s.batch, s.k, s.n} : Shape{s.k, s.n};
  Shape c = batched ? Shape{s.batch, s.m, s.n} : Shape{s.m, s.n};
  auto io = [](ValueId v, const Shape &shape) {
    ProgramIO p;
    p.value = v;
    p.name = "v" + std::to_string(v);
    p.globalShape = shape;
    p.layout = TensorLayout::replicated(shape.size());
    return p;
  };
  Program p;
  p.mesh = DeviceMesh({MeshAxis{"x", 1}});
  ValueId va = p.addValue(DType::F32, a), vb = p.addValue(DType::F32, b);
  p.inputs = {io(va, a), io(vb, b)};
  ValueId init = p.addValue(DType::F32, c), out = p.addValue(DType::F32, c);
  Instruction empty;
  empty.kind = OpKind::Empty;
  empty.results = {init};
  Instruction mm;
  mm.kind = batched ? OpKind::BatchMatmul : OpKind::Matmul;
  mm.operands = {va, vb, init};
  mm.results = {out};
  p.instructions = {empty, mm};
  p.outputs = {io(out, c)};
  return p;
}

void check(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS error in ") + what + ": " +
                cublasGetStatusString(status));
}
} // namespace

int main(int argc, char **argv) {
  int iters = 20;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else {
      std::fprintf(stderr, "usage: %s [--iters N] [--quick]\n", argv[0]);
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
                                {32, 512, 512, 64},   // attention scores
                                {32, 512, 64, 512},   // attention @ V
                                {8, 2048, 2048, 256}};
  if (quick)
    shapes = {{1, 512, 512, 512}, {4, 256, 256, 64}};
  try {
    std::unique_ptr<Backend> gpu = createCudaBackend(0);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    std::printf("device: %s, FP32 (no TF32), %d iterations per shape\n",
                prop.name, iters);
    std::printf("%-26s %12s %12s %12s %9s %9s\n", "batch x m x n x k",
                "program", "backend", "cuBLAS", "prog/cub", "back/cub");
    cublasHandle_t blas;
    check(cublasCreate(&blas), "cublasCreate");
    for (const Shape3 &s : shapes) {
      bool batched = s.batch > 1;
      Tensor a = gpu->upload(makeSeededTensor(
          DType::F32,
          batched ? Shape{s.batch, s.m, s.k} : Shape{s.m, s.k}, 1, 1));
      Tensor b = gpu->upload(makeSeededTensor(
          DType::F32,
          batched ? Shape{s.batch, s.k, s.n} : Shape{s.k, s.n}, 1, 2));
      Tensor c = gpu->allocate(
          DType::F32, batched ? Shape{s.batch, s.m, s.n} : Shape{s.m, s.n});
      double flops = 2.0 * s.batch * s.m * s.n * s.k;

      Program program = gemmProgram(s);
      std::unique_ptr<Communicator> local = createLocalCommunicator(program.mesh);
      Executor executor(program, *gpu, *local);
      std::vector<Tensor> inputs = {a, b};
      auto sync = [&] { gpu->synchronize(); };
      double tProgram = seconds([&] { executor.run(inputs); }, sync, iters);
      double tBackend = seconds(
          [&] {
            if (batched)
              gpu->batchMatmul(a, b, c, false, false, true);
            else
              gpu->matmul(a, b, c, false, false, true);
          },
          sync, iters);

      // cuBLAS on the same device buffers, its own stream, row-major via
      // C^T = B^T A^T as the backend does.
      cudaStream_t stream;
      cudaStreamCreate(&stream);
      check(cublasSetStream(blas, stream), "cublasSetStream");
      const float one = 1.0f;
      auto *pa = a.getData<float>(), *pb = b.getData<float>();
      auto *pc = c.getData<float>();
      int m = int(s.m), n = int(s.n), k = int(s.k);
      double tCublas = seconds(
          [&] {
            if (batched)
              check(cublasSgemmStridedBatched(
                        blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, pb, n,
                        s.k * s.n, pa, k, s.m * s.k, &one, pc, n, s.m * s.n,
                        int(s.batch)),
                    "cublasSgemmStridedBatched");
            else
              check(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one,
                                pb, n, pa, k, &one, pc, n),
                    "cublasSgemm");
          },
          [&] { cudaStreamSynchronize(stream); }, iters);
      cudaStreamDestroy(stream);

      char label[64];
      std::snprintf(label, sizeof(label), "%lld x %lld x %lld x %lld",
                    (long long)s.batch, (long long)s.m, (long long)s.n,
                    (long long)s.k);
      double pT = flops / tProgram / 1e12, bT = flops / tBackend / 1e12,
             cT = flops / tCublas / 1e12;
      std::printf("%-26s %9.2f TF %9.2f TF %9.2f TF %9.3f %9.3f\n", label, pT,
                  bT, cT, pT / cT, bT / cT);
    }
    cublasDestroy(blas);
  } catch (const Error &e) {
    std::fprintf(stderr, "gpu_gemm: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
