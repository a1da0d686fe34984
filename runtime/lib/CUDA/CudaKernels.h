//===- CudaKernels.h - Launchers of the CUDA backend's kernels --*- C++ -*-===//
//
// The boundary between CudaBackend.cpp (host C++: argument checks, shape
// arithmetic, cuBLAS) and CudaKernels.cu (device code). Every descriptor is
// plain data passed to the kernel by value, so a launch needs no host-device
// copy and never synchronizes; the launchers return the launch status.
// Fixed capacities bound the by-value size (well under the 4 KiB parameter
// limit); the host side rejects anything larger with an rt::Error.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_LIB_CUDA_CUDAKERNELS_H
#define AUTOSHARD_RUNTIME_LIB_CUDA_CUDAKERNELS_H

#include "autoshard/Runtime/Program.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace autoshard::rt::cuda {

constexpr int kMaxRank = 8;
constexpr int kMaxLoops = 12;
constexpr int kMaxOperands = 16;
constexpr int kMaxCaptures = 8;
/// Generic bodies keep their registers in per-thread local memory; kernels
/// are instantiated for a few capacities and the smallest that fits is used.
constexpr int kMaxRegs = 512;

/// What a kernel that can fail on data (not on shapes) reports through the
/// backend's device-side fault word. Nothing waits for it at the launch:
/// the host reads the word at its next synchronising call (the end of a run,
/// after a graph replay) and raises the first fault then; a faulting thread
/// stops before the access, so nothing is read or written out of bounds.
enum FaultCode : int32_t {
  kNoFault = 0,
  kCapturedIndexOutOfBounds = 1,
  kIntegerDivisionByZero = 2,
  kGatherIndexOutOfBounds = 3,
};
struct DeviceFault {
  int32_t code;
  int32_t dim;   // the dim whose index was out of bounds
  int64_t value; // the offending index
  int64_t bound; // the size of that dim
  int32_t site;  // the launch's fault site (the backend's table of them)
};

/// dst[sum i_d * dstStrides[d]] = src[sum i_d * srcStrides[d]] over shape
/// (strides in elements; pointers already offset to the box origin).
struct CopyBox {
  int32_t rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t dstStrides[kMaxRank] = {};
  int64_t srcStrides[kMaxRank] = {};
};

/// out[o] = reduction over the `red` box of in[kept offset(o) + ...].
struct ReduceBox {
  int32_t keptRank = 0;
  int64_t keptShape[kMaxRank] = {};
  int64_t keptStrides[kMaxRank] = {}; // strides of `in`
  int32_t redRank = 0;
  int64_t redShape[kMaxRank] = {};
  int64_t redStrides[kMaxRank] = {}; // strides of `in`
};

/// tensor.gather: out[b, s] = source[base(indices[b, :]) + slice(s)].
struct GatherBox {
  int32_t numIndexDims = 0;
  int64_t indexDimSizes[kMaxRank] = {};
  int64_t indexDimStrides[kMaxRank] = {};
  int32_t indexDims[kMaxRank] = {}; // source dims, for fault reports
  int32_t sliceRank = 0;
  int64_t sliceShape[kMaxRank] = {};
  int64_t sliceStrides[kMaxRank] = {}; // strides of `source`
  int64_t batch = 0;
  int64_t sliceElems = 0;
  int32_t site = 0; // DeviceFault::site of this launch
};

/// One bytecode instruction of a GenericSpec body, flattened.
struct GenericInst {
  ScalarOp op;
  DType type;
  DType srcType;
  int32_t dst, a, b, c;
  int32_t numArgs;
  int32_t args[kMaxRank];
  int64_t imm;
  double fimm;
};

struct GenericOperand {
  void *data;
  DType type;
  int64_t base;
  int64_t loopStrides[kMaxLoops];
};

struct GenericCapture {
  const void *data;
  DType type;
  int32_t rank;
  int64_t dims[kMaxRank];
};

/// A GenericSpec folded for the device: one thread per point of the
/// `parallel` loops walks the `sequential` loops (row-major, in original loop
/// order), so the per-element accumulation order matches the CPU backend's.
struct GenericLaunch {
  int32_t numLoops, numInputs, numOutputs, numInsts, numRegs;
  int32_t numParallel, numSequential;
  int32_t parallelLoops[kMaxLoops];
  int32_t sequentialLoops[kMaxLoops];
  int64_t ranges[kMaxLoops];
  int64_t parallelTotal, sequentialTotal;
  int32_t yields[kMaxOperands];
  GenericOperand operands[kMaxOperands];
  GenericCapture captures[kMaxCaptures];
  int32_t site; // DeviceFault::site of this launch
};

cudaError_t launchStridedCopy(void *dst, const void *src, const CopyBox &box,
                              int64_t elemSize, cudaStream_t stream);
/// dst[0..n) = value[0] converted from valueType to dstType as
/// Tensor::setFromDouble/setFromInt would.
cudaError_t launchFill(void *dst, DType dstType, int64_t n, const void *value,
                       DType valueType, cudaStream_t stream);
cudaError_t launchAccumulate(void *acc, const void *x, int64_t n, DType type,
                             ReductionKind kind, cudaStream_t stream);
cudaError_t launchReduce(const void *in, void *out, int64_t numOut,
                         DType type, ReductionKind kind, const ReduceBox &box,
                         cudaStream_t stream);
cudaError_t launchSoftmax(const void *in, void *out, DType type,
                          int64_t outer, int64_t len, int64_t inner,
                          cudaStream_t stream);
cudaError_t launchGather(const void *source, const void *indices,
                         DType indexType, void *out, int64_t elemSize,
                         const GatherBox &box, DeviceFault *fault,
                         cudaStream_t stream);
/// `insts` is a device array of launch.numInsts instructions.
cudaError_t launchGeneric(const GenericLaunch &launch,
                          const GenericInst *insts, DeviceFault *fault,
                          cudaStream_t stream);

} // namespace autoshard::rt::cuda

#endif // AUTOSHARD_RUNTIME_LIB_CUDA_CUDAKERNELS_H
