//===- GemmEpilogue.h - A GEMM epilogue as a kernel of its own --*- C++ -*-===//
//
// Where cuBLASLt has no algorithm with the epilogue for a problem (its
// heuristic returns none), or for an empty product, the CUDA backend runs
// the plain GEMM into an FP32 buffer and this kernel after it: the same
// bias / ReLU / GELU-tanh in FP32, one rounding to the result's type. GELU's
// erf form always runs here (cuBLASLt's GELU epilogue is the tanh form).
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_LIB_CUDA_GEMMEPILOGUE_H
#define AUTOSHARD_RUNTIME_LIB_CUDA_GEMMEPILOGUE_H

#include "autoshard/Runtime/Program.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace autoshard::rt::cuda {

/// out[i] = act(acc[i] (+ out[i] if addOut) (+ bias[i % n])) over `total`
/// elements, out and bias of `outType` (f32, bf16 or f16), acc f32 (it may
/// be `out` when that is f32 and addOut is false); bias may be null.
cudaError_t launchGemmEpilogue(const float *acc, void *out, DType outType,
                               const void *bias, bool addOut, int64_t total,
                               int64_t n, GemmEpilogue epilogue,
                               cudaStream_t stream);

} // namespace autoshard::rt::cuda

#endif // AUTOSHARD_RUNTIME_LIB_CUDA_GEMMEPILOGUE_H
