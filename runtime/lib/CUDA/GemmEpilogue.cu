//===- GemmEpilogue.cu - A GEMM epilogue as a kernel of its own -----------===//

#include "GemmEpilogue.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

using namespace autoshard;
using namespace autoshard::rt;

namespace {

constexpr int kThreads = 256;

__device__ float loadAs(const void *p, DType type, int64_t i) {
  if (type == DType::BF16)
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
  if (type == DType::F16)
    return __half2float(static_cast<const __half *>(p)[i]);
  return static_cast<const float *>(p)[i];
}

__device__ void storeAs(void *p, DType type, int64_t i, float v) {
  if (type == DType::BF16)
    static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
  else if (type == DType::F16)
    static_cast<__half *>(p)[i] = __float2half_rn(v);
  else
    static_cast<float *>(p)[i] = v;
}

/// act: 0 none, 1 ReLU, 2 GELU (tanh form), 3 GELU (erf form).
__global__ void epilogueKernel(const float *acc, void *out, DType outType,
                               const void *bias, bool addOut, int64_t total,
                               int64_t n, int act) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    float x = acc[i];
    if (addOut)
      x += loadAs(out, outType, i);
    if (bias)
      x += loadAs(bias, outType, i % n);
    if (act == 1)
      x = x > 0.0f || isnan(x) ? x : 0.0f;
    else if (act == 2)
      x = 0.5f * x *
          (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    else if (act == 3)
      x = 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    storeAs(out, outType, i, x);
  }
}

} // namespace

cudaError_t autoshard::rt::cuda::launchGemmEpilogue(
    const float *acc, void *out, DType outType, const void *bias, bool addOut,
    int64_t total, int64_t n, GemmEpilogue epilogue, cudaStream_t stream) {
  if (total == 0)
    return cudaSuccess;
  int act = 0;
  if (epilogue == GemmEpilogue::Relu || epilogue == GemmEpilogue::BiasRelu)
    act = 1;
  else if (epilogue == GemmEpilogue::Gelu || epilogue == GemmEpilogue::BiasGelu)
    act = 2;
  else if (epilogue == GemmEpilogue::GeluErf ||
           epilogue == GemmEpilogue::BiasGeluErf)
    act = 3;
  unsigned grid = static_cast<unsigned>(
      std::min<int64_t>((total + kThreads - 1) / kThreads, 65535));
  epilogueKernel<<<grid, kThreads, 0, stream>>>(acc, out, outType, bias, addOut,
                                                total, n, act);
  return cudaGetLastError();
}
