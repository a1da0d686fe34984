//===- CudaGemm.h - GEMMs through cuBLASLt ----------------------*- C++ -*-===//
//
// The CUDA backend's GEMMs: f32 (full FP32, or TF32 inputs when asked),
// bf16/f16 inputs with FP32 accumulation into an f32 or bf16/f16 result,
// optionally with a bias / ReLU / GELU epilogue.
// cuBLASLt wants a descriptor, three layouts and a heuristic's algorithm per
// problem; they are made once per distinct problem and kept, so a repeated
// GEMM costs one lookup and the cublasLtMatmul call.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_LIB_CUDA_CUDAGEMM_H
#define AUTOSHARD_RUNTIME_LIB_CUDA_CUDAGEMM_H

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace autoshard::rt::cuda {

/// One GEMM in cuBLAS's column-major terms: D = alpha op(A) op(B) + beta C
/// with D = C, A m x k (after op), B k x n, C m x n; `batch` problems at
/// element strides strideA/B/C.
struct LtProblem {
  cudaDataType_t inType = CUDA_R_32F, outType = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  int64_t batch = 1, strideA = 0, strideB = 0, strideC = 0;
  /// Largest power of two (<= 256) dividing each matrix's address and, when
  /// batched, its stride in bytes: cuBLASLt's kernels may assume alignment.
  uint32_t alignA = 256, alignB = 256, alignC = 256;
  /// Applied to D in FP32 before it is stored; with a bias (length m, of
  /// D's type, the same for every batch entry) its alignment as above.
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  uint32_t alignBias = 256;

  bool operator==(const LtProblem &o) const;
};

/// The alignment field of LtProblem for a device address and batch stride.
uint32_t getLtAlignment(const void *p, int64_t strideBytes);

class LtGemm {
public:
  explicit LtGemm(cudaStream_t stream);
  ~LtGemm();
  LtGemm(const LtGemm &) = delete;
  LtGemm &operator=(const LtGemm &) = delete;

  /// Queues D = epilogue(alpha op(A) op(B) + beta C [+ bias]) on the
  /// stream; alpha and beta are floats (the scale type of every compute
  /// type used here); `bias` is read by the epilogues that have one.
  /// Returns false, queueing nothing, when cuBLASLt has no algorithm for
  /// the problem with its epilogue (without one that is an error).
  bool run(const LtProblem &p, float alpha, const void *a, const void *b,
           float beta, void *c, const void *bias = nullptr);

private:
  struct Plan;
  const Plan &getPlan(const LtProblem &p, const void *bias);

  cudaStream_t stream;
  cublasLtHandle_t handle = nullptr;
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  std::vector<std::unique_ptr<Plan>> plans;
  const Plan *last = nullptr; // the most recent: repeated GEMMs hit it
};

} // namespace autoshard::rt::cuda

#endif // AUTOSHARD_RUNTIME_LIB_CUDA_CUDAGEMM_H
