//===- CudaContext.h - State shared by the CUDA backend and NCCL -*- C++ -*-===//
#ifndef AUTOSHARD_RUNTIME_LIB_CUDA_CUDACONTEXT_H
#define AUTOSHARD_RUNTIME_LIB_CUDA_CUDACONTEXT_H

#include "autoshard/Runtime/Backend.h"

#include <cuda_runtime.h>

#include <string>

namespace autoshard::rt::cuda {

/// Throws rt::Error("CUDA error in <call>: <message>") unless `status` is
/// cudaSuccess.
void check(cudaError_t status, const char *call);
#define AUTOSHARD_CUDA_CHECK(call) ::autoshard::rt::cuda::check((call), #call)

/// The device and stream of a CUDA backend, or nullptr when `backend` is not
/// one (the NCCL communicator queues its collectives on this stream).
struct StreamInfo {
  int device;
  cudaStream_t stream;
};
const StreamInfo *getStreamInfo(Backend &backend);

} // namespace autoshard::rt::cuda

#endif // AUTOSHARD_RUNTIME_LIB_CUDA_CUDACONTEXT_H
