//===- WindowKernels.h - Direct conv and pool kernels on the GPU -*- C++ -*-===//
//
// The CUDA backend's loop-nest kernels for OpKind::Conv2D (where cuDNN
// declines a convolution or is not built in) and Pool2D: one thread per
// output element, NCHW f32, the input already padded. Plain data passed by
// value; the launchers return the launch status.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_LIB_CUDA_WINDOWKERNELS_H
#define AUTOSHARD_RUNTIME_LIB_CUDA_WINDOWKERNELS_H

#include "autoshard/Runtime/Tensor.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace autoshard::rt::cuda {

/// in [n, c, h, w], weight [f, c / groups, kh, kw] (the pool's window for
/// Pool2D, where f = c), out [n, f, oh, ow].
struct WindowDims {
  int64_t n, c, h, w;
  int64_t f, groups, kh, kw;
  int64_t oh, ow;
  int64_t strideH, strideW, dilationH, dilationW;
};

/// The dims of `op` (conv2d or pool2d) on device tensors `in` and `out`
/// with a weight of shape `weight` ([c, 1, kh, kw] for a pool); throws
/// rt::Error naming `op` when the shapes do not make a window op.
WindowDims getWindowDims(const Tensor &in, const Shape &weight,
                         const Tensor &out, const std::vector<int64_t> &strides,
                         const std::vector<int64_t> &dilations,
                         const char *op);

/// out += conv(in, weight).
cudaError_t launchConv2dDirect(const float *in, const float *weight,
                               float *out, WindowDims d, cudaStream_t stream);
/// out = max(out, window max), or out += window sum.
cudaError_t launchPool2d(const float *in, float *out, WindowDims d, bool isMax,
                         cudaStream_t stream);

} // namespace autoshard::rt::cuda

#endif // AUTOSHARD_RUNTIME_LIB_CUDA_WINDOWKERNELS_H
