//===- CudnnConv.h - 2-D convolution through cuDNN ---------------*- C++ -*-===//
//
// The CUDA backend's kernel for OpKind::Conv2D: cuDNN 9's convolution
// (the legacy descriptor API, still in cuDNN 9's cudnn_cnn library) on NCHW
// f32 tensors whose input the program already padded, accumulating into
// the op's init (beta = 1). One descriptor set and algorithm per shape,
// kept; the algorithm's workspace comes from the backend's buffer pool.
// Without cuDNN (AUTOSHARD_HAVE_CUDNN unset) conv2d answers false and the
// executor runs the op's loop nest.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_LIB_CUDA_CUDNNCONV_H
#define AUTOSHARD_RUNTIME_LIB_CUDA_CUDNNCONV_H

#include "autoshard/Runtime/Tensor.h"

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <vector>

namespace autoshard::rt::cuda {

class CudnnConv {
public:
  /// Workspace buffers: device memory that may be reused once the work
  /// queued on the stream before its release is done (a stream-ordered
  /// pool's buffer).
  using Workspace = std::function<std::shared_ptr<Buffer>(int64_t bytes)>;

  /// Null when this runtime was built without cuDNN.
  static std::unique_ptr<CudnnConv> create(cudaStream_t stream,
                                           Workspace workspace);
  virtual ~CudnnConv() = default;

  /// out += conv(in, w) on the stream: in [N, C, H, W] (padded), w
  /// [F, C / groups, KH, KW] (groups = C / w's C), out [N, F, OH, OW].
  /// Returns false, having queued nothing, when cuDNN cannot run this
  /// convolution (no algorithm, a cuDNN error on setup): the caller then
  /// runs the loop nest. Errors of the queued call itself throw.
  virtual bool conv2d(const Tensor &in, const Tensor &w, Tensor &out,
                      const std::vector<int64_t> &strides,
                      const std::vector<int64_t> &dilations) = 0;

  /// Convolutions run through cuDNN and ones declined, since creation.
  int64_t getNumRun() const { return numRun; }
  int64_t getNumDeclined() const { return numDeclined; }

protected:
  int64_t numRun = 0, numDeclined = 0;
};

} // namespace autoshard::rt::cuda

#endif // AUTOSHARD_RUNTIME_LIB_CUDA_CUDNNCONV_H
