//===- Backend.h - Kernel interface of a runtime device ---------*- C++ -*-===//
//
// Everything the executor computes goes through a Backend, so a device
// backend (CUDA/cuBLAS) plugs in by implementing this interface; the CPU
// backend (OpenBLAS GEMMs, a bytecode loop-nest evaluator for the rest) is
// the reference. Tensors passed to a backend live in its memory space
// (upload/download convert). Output tensors are allocated by the caller with
// their final shape; kernels write every element of them unless documented
// as accumulating. Kernels throw rt::Error on invalid arguments.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_BACKEND_H
#define AUTOSHARD_RUNTIME_BACKEND_H

#include "autoshard/Runtime/Program.h"
#include "autoshard/Runtime/Tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace autoshard::rt {

/// The allocation counters of a backend's buffer pool (BufferPool): every
/// tensor buffer it hands out (allocate, upload, kernel temporaries) comes
/// from the system the first time its size class is needed and from the
/// pool (buffers freed earlier) after that. Bytes are pool capacities.
struct MemoryStats {
  int64_t systemAllocations = 0; // blocks obtained from malloc / cudaMalloc
  int64_t systemBytes = 0;       // their bytes: all the pool ever holds
  int64_t poolHits = 0;          // allocations served by a freed block
  int64_t bytesInUse = 0;        // lent to live tensors now
  int64_t peakBytesInUse = 0;    // the most lent at once
  int64_t pooledBytes = 0;       // freed, kept for reuse now
};

/// One GEMM instruction's options (Backend::gemm).
struct GemmOptions {
  bool batched = false; // batchMatmul (a leading batch dim), else matmul
  bool transA = false, transB = false;
  bool accumulate = true; // false: beta = 0 (see matmul)
  /// f32 GEMMs may round their inputs to TF32 (Instruction::tf32) where the
  /// backend has it (cuBLASLt's CUBLAS_COMPUTE_32F_FAST_TF32); the CPU
  /// computes in full FP32, which is at least as accurate.
  bool tf32 = false;
  /// Applied to c after the product (Instruction::epilogue); `bias` is a
  /// rank-1 tensor of c's type and length c's last dim when it has one.
  GemmEpilogue epilogue = GemmEpilogue::None;
  const Tensor *bias = nullptr;
};

/// Work a backend recorded between beginCapture and endCapture that it can
/// queue again as one launch (a CUDA graph). The buffers the recorded work
/// touched stay reserved to it while it lives, so replays find them as the
/// recording left them to the program.
class CapturedWork {
public:
  virtual ~CapturedWork() = default;
  /// Queues the recorded work (the same kernels on the same buffers).
  virtual void replay() = 0;
};

/// A data fault a device kernel recorded without waiting (an out-of-bounds
/// gather or tensor.extract index, an integer division by zero), raised at
/// the backend's next synchronising call: its message names the instruction
/// that faulted (Backend::setLocation), not the one running when it surfaced.
class DeviceFaultError : public Error {
public:
  using Error::Error;
};

class Backend {
public:
  virtual ~Backend();
  virtual std::string getName() const = 0;

  /// Where the kernels queued next come from (an Instruction::location;
  /// null or empty: nowhere known). The CPU backend throws at the faulting
  /// call; a device backend checks data faults after the fact and names
  /// this location in the DeviceFaultError. Only read during the calls.
  void setLocation(const std::string *where) { location = where; }

  /// A zero-filled tensor in this backend's memory.
  virtual Tensor allocate(DType type, const Shape &shape) = 0;
  /// The same without zero-filling, for results a kernel overwrites whole.
  virtual Tensor allocateUninitialized(DType type, const Shape &shape) {
    return allocate(type, shape);
  }
  /// The counters of this backend's buffer pool (zeros without one).
  virtual MemoryStats getMemoryStats() const { return {}; }
  /// Host <-> backend memory (identity for the CPU backend).
  virtual Tensor upload(const Tensor &host) = 0;
  virtual Tensor download(const Tensor &tensor) = 0;
  /// Waits for queued work (streams); the CPU backend is synchronous. A
  /// device backend raises here (and in download) the first data fault a
  /// kernel recorded since the last check, as a DeviceFaultError.
  virtual void synchronize() {}

  /// dst = src (same element count; shapes may differ).
  virtual void copy(const Tensor &src, Tensor &dst) = 0;
  /// Every element of dst = the rank-0 `value` converted to dst's type.
  virtual void fill(Tensor &dst, const Tensor &value) = 0;

  /// c += op(a) * op(b) for 2-D a, b, c: all f32 or all f64, or bf16/f16
  /// a and b (the same type) with an f32 c or one of their type, computed
  /// with FP32 accumulation (other mixes throw). With
  /// `accumulate` false, c = op(a) * op(b) and c's content on entry is never
  /// read (GEMM beta = 0): the executor folds a zero-fill init into the GEMM
  /// this way instead of filling a buffer only to add to it.
  virtual void matmul(const Tensor &a, const Tensor &b, Tensor &c, bool transA,
                      bool transB, bool accumulate) = 0;
  /// The same over a leading batch dim on all three.
  virtual void batchMatmul(const Tensor &a, const Tensor &b, Tensor &c,
                           bool transA, bool transB, bool accumulate) = 0;
  /// matmul or batchMatmul with `options`; a backend without TF32 ignores
  /// options.tf32 (the default does). The default has no epilogues.
  virtual void gemm(const Tensor &a, const Tensor &b, Tensor &c,
                    const GemmOptions &options) {
    if (options.epilogue != GemmEpilogue::None)
      throw Error(getName() + " backend has no GEMM epilogues");
    if (options.batched)
      batchMatmul(a, b, c, options.transA, options.transB, options.accumulate);
    else
      matmul(a, b, c, options.transA, options.transB, options.accumulate);
  }
  /// OpKind::Conv2D and Pool2D with the backend's own kernels (NCHW f32,
  /// input already padded). A backend that returns false here gets those
  /// instructions' loop nests (generic) instead.
  virtual bool hasWindowKernels() const { return false; }
  /// out += conv(in, w); w is [F, C, KH, KW].
  virtual void conv2d(const Tensor &in, const Tensor &w, Tensor &out,
                      const std::vector<int64_t> &strides,
                      const std::vector<int64_t> &dilations) {
    throw Error(getName() + " backend has no conv2d kernel");
  }
  /// out = max(out, window max) or out += window sum, window [KH, KW].
  virtual void pool2d(const Tensor &in, Tensor &out,
                      const std::vector<int64_t> &kernel,
                      const std::vector<int64_t> &strides,
                      const std::vector<int64_t> &dilations,
                      ReductionKind kind) {
    throw Error(getName() + " backend has no pool2d kernel");
  }
  /// Records instead of running: the work queued until endCapture is
  /// recorded, not done, and nothing may wait for the device meanwhile (a
  /// call that would throws rt::Error). False: this backend cannot record
  /// (the CPU's default).
  virtual bool beginCapture() { return false; }
  /// Ends the recording: null when it failed (a call could not be recorded;
  /// nothing of it ran or will), else the work, which has not run yet.
  virtual std::unique_ptr<CapturedWork> endCapture() { return nullptr; }
  /// Why the last beginCapture or endCapture failed, in one line.
  virtual std::string getCaptureError() const {
    return "the " + getName() + " backend cannot record";
  }
  /// Called once per Executor before it runs `program`: the CUDA backend
  /// loads the program's generated kernels (Program::gpuModule) here.
  virtual void prepare(const Program &program) {}
  /// A loop nest (elementwise, broadcast, reduction, any linalg.generic):
  /// `outputs` hold the init values on entry and the results on exit.
  virtual void generic(const GenericSpec &spec,
                       const std::vector<const Tensor *> &inputs,
                       const std::vector<const Tensor *> &captures,
                       const std::vector<Tensor *> &outputs) = 0;
  /// out[i0..] = in[...] with out dim k = in dim perm[k].
  virtual void transpose(const Tensor &in, Tensor &out,
                         const std::vector<int64_t> &perm) = 0;
  /// Numerically stable softmax along `dim`.
  virtual void softmax(const Tensor &in, Tensor &out, int64_t dim) = 0;
  /// out = reduction of `in` over `dims` (out keeps in's rank with those
  /// dims of size 1, or drops them; same element count either way).
  virtual void reduce(const Tensor &in, Tensor &out,
                      const std::vector<int64_t> &dims, ReductionKind kind) = 0;
  /// Elementwise acc = acc (op) x, for combining partial values.
  virtual void accumulate(Tensor &acc, const Tensor &x, ReductionKind kind) = 0;
  /// tensor.gather: indices [batch..., len(dims)] selects coordinates of
  /// `dims` in `source`; out = batch shape + source shape with `dims`
  /// either 1 (keepDims) or dropped. Out-of-range indices throw (on a
  /// device, at the next synchronising call: DeviceFaultError).
  virtual void gather(const Tensor &source, const Tensor &indices, Tensor &out,
                      const std::vector<int64_t> &dims) = 0;
  /// out = source[offsets + i * strides] over out's (unreduced) `sizes`.
  virtual void extractSlice(const Tensor &source, Tensor &out,
                            const std::vector<int64_t> &offsets,
                            const std::vector<int64_t> &sizes,
                            const std::vector<int64_t> &strides) = 0;
  /// dest[offsets + i * strides] = source over `sizes` (in place on dest).
  virtual void insertSlice(const Tensor &source, Tensor &dest,
                           const std::vector<int64_t> &offsets,
                           const std::vector<int64_t> &sizes,
                           const std::vector<int64_t> &strides) = 0;
  /// out = pieces concatenated along dim.
  virtual void concat(const std::vector<const Tensor *> &pieces, Tensor &out,
                      int64_t dim) = 0;
  /// out = value everywhere, source at offsets `low`.
  virtual void pad(const Tensor &source, const Tensor &value, Tensor &out,
                   const std::vector<int64_t> &low) = 0;

protected:
  const std::string *location = nullptr; // setLocation
};

/// The CPU backend: OpenBLAS for GEMMs, portable loops for the rest.
std::unique_ptr<Backend> createCpuBackend();

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_BACKEND_H
