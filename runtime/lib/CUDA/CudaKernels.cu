//===- CudaKernels.cu - Device code of the CUDA backend -------------------===//
//
// Simple, correct kernels: grid-stride loops, one thread per output element.
// The generic kernel interprets the same scalar bytecode as the CPU backend
// (CpuGeneric.cpp) with the same rounding rules (compute in double, round to
// f32 after every instruction), so results agree with the CPU reference
// bit-for-bit except for the last ulp of transcendental functions. This file
// is compiled with --fmad=false so that no a*b+c is silently fused.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "../ScalarEval.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

using namespace autoshard;
using namespace autoshard::rt;
using namespace autoshard::rt::cuda;

namespace {

constexpr int kThreads = 256;

unsigned gridFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks > (1 << 20))
    blocks = 1 << 20; // grid-stride loops cover the rest
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

__device__ inline int64_t globalThread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t threadStride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

using scalar::asUnsigned;
using scalar::floatOp;
using scalar::intOp;
using scalar::isFloat;
using scalar::Reg;
using scalar::roundTo;
using scalar::wrapTo;

/// Records the first fault only; later ones would overwrite the details.
__device__ void raise(DeviceFault *fault, int32_t site, int32_t code,
                      int32_t dim, int64_t value, int64_t bound) {
  if (atomicCAS(&fault->code, 0, code) == 0) {
    fault->site = site;
    fault->dim = dim;
    fault->value = value;
    fault->bound = bound;
  }
}

/// Runs the body on `r`; returns false (after raising) on a data fault.
__device__ bool runBody(const GenericLaunch &g, const GenericInst *insts,
                        Reg *r, const int64_t *loopIdx, DeviceFault *fault) {
  for (int32_t n = 0; n < g.numInsts; ++n) {
    const GenericInst &in = insts[n];
    Reg &d = r[in.dst];
    const Reg a = in.a >= 0 ? r[in.a] : Reg{0};
    const Reg b = in.b >= 0 ? r[in.b] : Reg{0};
    bool fl = isFloat(in.type);
    switch (in.op) {
    case ScalarOp::Const:
      if (fl)
        d.f = in.fimm;
      else
        d.i = in.imm;
      break;
    case ScalarOp::Index:
      d.i = loopIdx[in.imm];
      break;
    case ScalarOp::Captured: {
      const GenericCapture &t = g.captures[in.imm];
      int64_t offset = 0;
      for (int32_t k = 0; k < in.numArgs; ++k) {
        int64_t ix = r[in.args[k]].i;
        if (ix < 0 || ix >= t.dims[k]) {
          raise(fault, g.site, kCapturedIndexOutOfBounds, k, ix, t.dims[k]);
          return false;
        }
        offset = offset * t.dims[k] + ix;
      }
      d = scalar::load(t.data, offset, t.type);
      break;
    }
// Ops whose float and integer forms are both the shared scalar op.
#define NUMERIC(OP)                                                            \
  case ScalarOp::OP:                                                           \
    if (fl)                                                                    \
      d.f = roundTo(floatOp<ScalarOp::OP>(a.f, b.f), in.type);                 \
    else                                                                       \
      d.i = wrapTo(intOp<ScalarOp::OP>(a.i, b.i), in.type);                    \
    break;
#define FLOAT(OP)                                                              \
  case ScalarOp::OP:                                                           \
    d.f = roundTo(floatOp<ScalarOp::OP>(a.f, b.f), in.type);                   \
    break;
#define INT(OP)                                                                \
  case ScalarOp::OP:                                                           \
    d.i = wrapTo(intOp<ScalarOp::OP>(a.i, b.i), in.type);                      \
    break;
      NUMERIC(Add)
      NUMERIC(Sub)
      NUMERIC(Mul)
      NUMERIC(Neg)
      NUMERIC(Abs)
      FLOAT(MaxNum)
      FLOAT(MinNum)
      FLOAT(Rsqrt)
      FLOAT(Atan2)
      FLOAT(Pow)
      INT(And)
      INT(Or)
      INT(Xor)
      INT(Shl)
      INT(ShrS)
#undef NUMERIC
#undef FLOAT
#undef INT
    case ScalarOp::Div:
    case ScalarOp::Rem:
      if (fl) {
        d.f = roundTo(in.op == ScalarOp::Div ? floatOp<ScalarOp::Div>(a.f, b.f)
                                             : floatOp<ScalarOp::Rem>(a.f, b.f),
                      in.type);
      } else {
        if (b.i == 0) {
          raise(fault, g.site, kIntegerDivisionByZero, 0, 0, 0);
          return false;
        }
        d.i = scalar::divRemS(in.op == ScalarOp::Div, a.i, b.i, in.type);
      }
      break;
    case ScalarOp::DivU:
    case ScalarOp::RemU: {
      uint64_t ua = asUnsigned(a.i, in.type), ub = asUnsigned(b.i, in.type);
      if (ub == 0) {
        raise(fault, g.site, kIntegerDivisionByZero, 0, 0, 0);
        return false;
      }
      d.i = scalar::divRemU(in.op == ScalarOp::DivU, ua, ub, in.type);
      break;
    }
    // maxsi / minsi of i1 (0/1 registers, true is -1): and / or.
    case ScalarOp::Max:
      if (fl)
        d.f = roundTo(floatOp<ScalarOp::Max>(a.f, b.f), in.type);
      else if (in.type == DType::I1)
        d.i = a.i & b.i;
      else
        d.i = wrapTo(intOp<ScalarOp::Max>(a.i, b.i), in.type);
      break;
    case ScalarOp::Min:
      if (fl)
        d.f = roundTo(floatOp<ScalarOp::Min>(a.f, b.f), in.type);
      else if (in.type == DType::I1)
        d.i = a.i | b.i;
      else
        d.i = wrapTo(intOp<ScalarOp::Min>(a.i, b.i), in.type);
      break;
    case ScalarOp::MaxU:
      d.i = asUnsigned(a.i, in.type) >= asUnsigned(b.i, in.type) ? a.i : b.i;
      break;
    case ScalarOp::MinU:
      d.i = asUnsigned(a.i, in.type) <= asUnsigned(b.i, in.type) ? a.i : b.i;
      break;
    case ScalarOp::ShrU:
      d.i = wrapTo(static_cast<int64_t>(asUnsigned(a.i, in.type) >> (b.i & 63)),
                   in.type);
      break;
#define UNARY(OP, FN)                                                          \
  case ScalarOp::OP:                                                           \
    d.f = roundTo(FN(a.f), in.type);                                           \
    break;
      AUTOSHARD_SCALAR_UNARY_MATH(UNARY)
#undef UNARY
    case ScalarOp::Fma:
      d.f = roundTo(fma(a.f, b.f, r[in.c].f), in.type);
      break;
    case ScalarOp::CmpF:
      d.i = scalar::cmpF(in.imm, a.f, b.f);
      break;
    case ScalarOp::CmpI:
      d.i = scalar::cmpI(in.imm, a.i, b.i, in.srcType);
      break;
    case ScalarOp::Select:
      d = (a.i & 1) ? b : r[in.c];
      break;
    case ScalarOp::IToF:
    case ScalarOp::UIToF:
      d.f = scalar::intToFloat(a.i, in.op == ScalarOp::UIToF, in.srcType,
                               in.type);
      break;
    case ScalarOp::FToI:
    case ScalarOp::FToUI:
      d.i = scalar::floatToInt(a.f, in.type);
      break;
    case ScalarOp::FCast:
      d.f = roundTo(a.f, in.type);
      break;
    case ScalarOp::ICast: // extsi of i1 gives -1 for true
      d.i = wrapTo(scalar::asSigned(a.i, in.srcType), in.type);
      break;
    case ScalarOp::ZExt:
      d.i = wrapTo(static_cast<int64_t>(asUnsigned(a.i, in.srcType)), in.type);
      break;
    }
  }
  return true;
}

template <int NumRegs>
__global__ void genericKernel(GenericLaunch g, const GenericInst *insts,
                              DeviceFault *fault) {
  Reg regs[NumRegs];
  int64_t idx[kMaxLoops];
  int64_t offsets[kMaxOperands];
  int32_t numOperands = g.numInputs + g.numOutputs;
  for (int64_t p = globalThread(); p < g.parallelTotal; p += threadStride()) {
    // Decode this thread's point of the parallel loops (row-major).
    int64_t rest = p;
    for (int32_t j = g.numParallel - 1; j >= 0; --j) {
      int32_t l = g.parallelLoops[j];
      idx[l] = rest % g.ranges[l];
      rest /= g.ranges[l];
    }
    for (int32_t j = 0; j < g.numSequential; ++j)
      idx[g.sequentialLoops[j]] = 0;
    for (int32_t k = 0; k < numOperands; ++k) {
      int64_t off = g.operands[k].base;
      for (int32_t j = 0; j < g.numParallel; ++j) {
        int32_t l = g.parallelLoops[j];
        off += idx[l] * g.operands[k].loopStrides[l];
      }
      offsets[k] = off;
    }
    for (int64_t s = 0; s < g.sequentialTotal; ++s) {
      for (int32_t k = 0; k < numOperands; ++k)
        regs[k] = scalar::load(g.operands[k].data, offsets[k], g.operands[k].type);
      if (!runBody(g, insts, regs, idx, fault))
        return;
      for (int32_t o = 0; o < g.numOutputs; ++o) {
        const GenericOperand &op = g.operands[g.numInputs + o];
        scalar::store(op.data, offsets[g.numInputs + o], op.type, regs[g.yields[o]]);
      }
      // Odometer over the sequential loops, innermost fastest.
      for (int32_t j = g.numSequential - 1; j >= 0; --j) {
        int32_t l = g.sequentialLoops[j];
        if (++idx[l] < g.ranges[l]) {
          for (int32_t k = 0; k < numOperands; ++k)
            offsets[k] += g.operands[k].loopStrides[l];
          break;
        }
        for (int32_t k = 0; k < numOperands; ++k)
          offsets[k] -= g.operands[k].loopStrides[l] * (g.ranges[l] - 1);
        idx[l] = 0;
      }
    }
  }
}

template <typename T>
__global__ void stridedCopyKernel(T *dst, const T *src, CopyBox box,
                                  int64_t total) {
  for (int64_t i = globalThread(); i < total; i += threadStride()) {
    int64_t rest = i, d = 0, s = 0;
    for (int32_t k = box.rank - 1; k >= 0; --k) {
      int64_t c = rest % box.shape[k];
      rest /= box.shape[k];
      d += c * box.dstStrides[k];
      s += c * box.srcStrides[k];
    }
    dst[d] = src[s];
  }
}

__global__ void fillKernel(void *dst, DType dstType, int64_t n,
                           const void *value, DType valueType) {
  // Tensor::setFromDouble / setFromInt semantics, as CpuBackend::fill.
  Reg v = scalar::load(value, 0, valueType);
  Reg out;
  if (isFloat(valueType)) {
    if (dstType == DType::F32)
      out.f = static_cast<float>(v.f);
    else if (isFloat(dstType)) // f64; bf16/f16 round once from double
      out.f = v.f;
    else if (dstType == DType::I1)
      out.i = v.f != 0.0;
    else if (dstType == DType::I32)
      out.i = static_cast<int32_t>(v.f);
    else
      out.i = static_cast<int64_t>(v.f);
  } else {
    if (dstType == DType::F32)
      out.f = static_cast<float>(v.i);
    else if (isFloat(dstType))
      out.f = static_cast<double>(v.i);
    else if (dstType == DType::I1)
      out.i = v.i != 0;
    else
      out.i = v.i;
  }
  for (int64_t i = globalThread(); i < n; i += threadStride())
    scalar::store(dst, i, dstType, out);
}

template <typename T> __device__ T identity(ReductionKind kind);
template <> __device__ float identity<float>(ReductionKind kind) {
  return kind == ReductionKind::Sum       ? 0.0f
         : kind == ReductionKind::Product ? 1.0f
         : kind == ReductionKind::Max     ? -3.402823466e+38f
                                          : 3.402823466e+38f;
}
template <> __device__ double identity<double>(ReductionKind kind) {
  return kind == ReductionKind::Sum       ? 0.0
         : kind == ReductionKind::Product ? 1.0
         : kind == ReductionKind::Max     ? -1.7976931348623157e+308
                                          : 1.7976931348623157e+308;
}
template <> __device__ int32_t identity<int32_t>(ReductionKind kind) {
  return kind == ReductionKind::Sum       ? 0
         : kind == ReductionKind::Product ? 1
         : kind == ReductionKind::Max     ? INT32_MIN
                                          : INT32_MAX;
}
template <> __device__ int64_t identity<int64_t>(ReductionKind kind) {
  return kind == ReductionKind::Sum       ? 0
         : kind == ReductionKind::Product ? 1
         : kind == ReductionKind::Max     ? INT64_MIN
                                          : INT64_MAX;
}
/// Booleans: sum/max are "or", product/min are "and".
template <> __device__ uint8_t identity<uint8_t>(ReductionKind kind) {
  return (kind == ReductionKind::Sum || kind == ReductionKind::Max) ? 0 : 1;
}

template <typename T> __device__ T combine(T a, T b, ReductionKind kind) {
  return scalar::combine(a, b, kind);
}
/// Booleans: sum/max are "or", product/min are "and".
template <>
__device__ uint8_t combine<uint8_t>(uint8_t a, uint8_t b, ReductionKind kind) {
  return (kind == ReductionKind::Sum || kind == ReductionKind::Max)
             ? ((a | b) != 0)
             : ((a & b) != 0);
}

/// How an element type is computed: bf16/f16 load into f32 and store back
/// rounded to nearest even (as the CPU backend's f32 compute does); the
/// other types compute in themselves.
template <typename T> struct Num {
  using Acc = T;
  static __device__ Acc load(T v) { return v; }
  static __device__ T store(Acc v) { return v; }
};
template <> struct Num<__nv_bfloat16> {
  using Acc = float;
  static __device__ float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __nv_bfloat16 store(float v) {
    return __float2bfloat16_rn(v);
  }
};
template <> struct Num<__half> {
  using Acc = float;
  static __device__ float load(__half v) { return __half2float(v); }
  static __device__ __half store(float v) { return __float2half_rn(v); }
};

/// Each step rounded to the type (the CPU backend's and NCCL's pairwise
/// bf16/f16 sums).
template <typename T>
__global__ void accumulateKernel(T *acc, const T *x, int64_t n,
                                 ReductionKind kind) {
  using N = Num<T>;
  for (int64_t i = globalThread(); i < n; i += threadStride())
    acc[i] = N::store(combine(N::load(acc[i]), N::load(x[i]), kind));
}

template <typename T>
__global__ void reduceKernel(const T *in, T *out, int64_t numOut,
                             int64_t numRed, ReductionKind kind,
                             ReduceBox box) {
  for (int64_t o = globalThread(); o < numOut; o += threadStride()) {
    int64_t rest = o, base = 0;
    for (int32_t k = box.keptRank - 1; k >= 0; --k) {
      base += (rest % box.keptShape[k]) * box.keptStrides[k];
      rest /= box.keptShape[k];
    }
    // Row-major over the reduced dims, as the CPU backend accumulates;
    // bf16/f16 in f32, rounded once.
    using N = Num<T>;
    typename N::Acc acc = identity<typename N::Acc>(kind);
    for (int64_t m = 0; m < numRed; ++m) {
      int64_t r = m, off = base;
      for (int32_t k = box.redRank - 1; k >= 0; --k) {
        off += (r % box.redShape[k]) * box.redStrides[k];
        r /= box.redShape[k];
      }
      acc = combine(acc, N::load(in[off]), kind);
    }
    out[o] = N::store(acc);
  }
}

template <typename T>
__global__ void softmaxKernel(const T *in, T *out, int64_t outer, int64_t len,
                              int64_t inner) {
  for (int64_t row = globalThread(); row < outer * inner;
       row += threadStride()) {
    int64_t o = row / inner, i = row % inner;
    const T *x = in + o * len * inner + i;
    T *y = out + o * len * inner + i;
    // In double; bf16/f16 round through f32, as the CPU backend's widened
    // f32 softmax does.
    using N = Num<T>;
    auto at = [&](int64_t k) {
      return static_cast<double>(N::load(x[k * inner]));
    };
    double mx = -__longlong_as_double(0x7ff0000000000000LL);
    for (int64_t k = 0; k < len; ++k)
      mx = mx < at(k) ? at(k) : mx;
    double sum = 0;
    for (int64_t k = 0; k < len; ++k)
      sum += exp(at(k) - mx);
    for (int64_t k = 0; k < len; ++k)
      y[k * inner] = N::store(
          static_cast<typename N::Acc>(exp(at(k) - mx) / sum));
  }
}

template <typename T, typename I>
__global__ void gatherKernel(const T *source, const I *indices, T *out,
                             GatherBox box, DeviceFault *fault) {
  int64_t total = box.batch * box.sliceElems;
  for (int64_t i = globalThread(); i < total; i += threadStride()) {
    int64_t b = i / box.sliceElems, s = i % box.sliceElems;
    int64_t off = 0;
    for (int32_t k = 0; k < box.numIndexDims; ++k) {
      int64_t ix = static_cast<int64_t>(indices[b * box.numIndexDims + k]);
      if (ix < 0 || ix >= box.indexDimSizes[k]) {
        raise(fault, box.site, kGatherIndexOutOfBounds, box.indexDims[k], ix,
              box.indexDimSizes[k]);
        return;
      }
      off += ix * box.indexDimStrides[k];
    }
    for (int32_t k = box.sliceRank - 1; k >= 0; --k) {
      off += (s % box.sliceShape[k]) * box.sliceStrides[k];
      s /= box.sliceShape[k];
    }
    out[i] = source[off];
  }
}

} // namespace

cudaError_t autoshard::rt::cuda::launchStridedCopy(void *dst, const void *src,
                                                   const CopyBox &box,
                                                   int64_t elemSize,
                                                   cudaStream_t stream) {
  int64_t total = 1;
  for (int32_t k = 0; k < box.rank; ++k)
    total *= box.shape[k];
  if (total == 0)
    return cudaSuccess;
  unsigned grid = gridFor(total);
  switch (elemSize) {
  case 1:
    stridedCopyKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<uint8_t *>(dst), static_cast<const uint8_t *>(src), box,
        total);
    break;
  case 2:
    stridedCopyKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<uint16_t *>(dst), static_cast<const uint16_t *>(src), box,
        total);
    break;
  case 4:
    stridedCopyKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<uint32_t *>(dst), static_cast<const uint32_t *>(src), box,
        total);
    break;
  default:
    stridedCopyKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<uint64_t *>(dst), static_cast<const uint64_t *>(src), box,
        total);
  }
  return cudaGetLastError();
}

cudaError_t autoshard::rt::cuda::launchFill(void *dst, DType dstType,
                                            int64_t n, const void *value,
                                            DType valueType,
                                            cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  fillKernel<<<gridFor(n), kThreads, 0, stream>>>(dst, dstType, n, value,
                                                  valueType);
  return cudaGetLastError();
}

cudaError_t autoshard::rt::cuda::launchAccumulate(void *acc, const void *x,
                                                  int64_t n, DType type,
                                                  ReductionKind kind,
                                                  cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  unsigned grid = gridFor(n);
  switch (type) {
  case DType::F32:
    accumulateKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<float *>(acc), static_cast<const float *>(x), n, kind);
    break;
  case DType::F64:
    accumulateKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<double *>(acc), static_cast<const double *>(x), n, kind);
    break;
  case DType::I32:
    accumulateKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<int32_t *>(acc), static_cast<const int32_t *>(x), n, kind);
    break;
  case DType::I64:
    accumulateKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<int64_t *>(acc), static_cast<const int64_t *>(x), n, kind);
    break;
  case DType::I1:
    accumulateKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<uint8_t *>(acc), static_cast<const uint8_t *>(x), n, kind);
    break;
  case DType::BF16:
    accumulateKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<__nv_bfloat16 *>(acc),
        static_cast<const __nv_bfloat16 *>(x), n, kind);
    break;
  case DType::F16:
    accumulateKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<__half *>(acc), static_cast<const __half *>(x), n, kind);
    break;
  }
  return cudaGetLastError();
}

cudaError_t autoshard::rt::cuda::launchReduce(const void *in, void *out,
                                              int64_t numOut, DType type,
                                              ReductionKind kind,
                                              const ReduceBox &box,
                                              cudaStream_t stream) {
  if (numOut == 0)
    return cudaSuccess;
  int64_t numRed = 1;
  for (int32_t k = 0; k < box.redRank; ++k)
    numRed *= box.redShape[k];
  unsigned grid = gridFor(numOut);
  switch (type) {
  case DType::F32:
    reduceKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const float *>(in), static_cast<float *>(out), numOut,
        numRed, kind, box);
    break;
  case DType::F64:
    reduceKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const double *>(in), static_cast<double *>(out), numOut,
        numRed, kind, box);
    break;
  case DType::I32:
    reduceKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const int32_t *>(in), static_cast<int32_t *>(out), numOut,
        numRed, kind, box);
    break;
  case DType::I64:
    reduceKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const int64_t *>(in), static_cast<int64_t *>(out), numOut,
        numRed, kind, box);
    break;
  case DType::I1:
    reduceKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const uint8_t *>(in), static_cast<uint8_t *>(out), numOut,
        numRed, kind, box);
    break;
  case DType::BF16:
    reduceKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const __nv_bfloat16 *>(in),
        static_cast<__nv_bfloat16 *>(out), numOut, numRed, kind, box);
    break;
  case DType::F16:
    reduceKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const __half *>(in), static_cast<__half *>(out), numOut,
        numRed, kind, box);
    break;
  }
  return cudaGetLastError();
}

cudaError_t autoshard::rt::cuda::launchSoftmax(const void *in, void *out,
                                               DType type, int64_t outer,
                                               int64_t len, int64_t inner,
                                               cudaStream_t stream) {
  if (outer * inner == 0)
    return cudaSuccess;
  unsigned grid = gridFor(outer * inner);
  if (type == DType::F32)
    softmaxKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const float *>(in), static_cast<float *>(out), outer, len,
        inner);
  else if (type == DType::BF16)
    softmaxKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const __nv_bfloat16 *>(in),
        static_cast<__nv_bfloat16 *>(out), outer, len, inner);
  else if (type == DType::F16)
    softmaxKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const __half *>(in), static_cast<__half *>(out), outer,
        len, inner);
  else
    softmaxKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const double *>(in), static_cast<double *>(out), outer,
        len, inner);
  return cudaGetLastError();
}

template <typename T>
static void launchGatherTyped(const void *source, const void *indices,
                              DType indexType, void *out, const GatherBox &box,
                              DeviceFault *fault, cudaStream_t stream) {
  unsigned grid = gridFor(box.batch * box.sliceElems);
  if (indexType == DType::I32)
    gatherKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const T *>(source), static_cast<const int32_t *>(indices),
        static_cast<T *>(out), box, fault);
  else
    gatherKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const T *>(source), static_cast<const int64_t *>(indices),
        static_cast<T *>(out), box, fault);
}

cudaError_t autoshard::rt::cuda::launchGather(
    const void *source, const void *indices, DType indexType, void *out,
    int64_t elemSize, const GatherBox &box, DeviceFault *fault,
    cudaStream_t stream) {
  if (box.batch * box.sliceElems == 0)
    return cudaSuccess;
  switch (elemSize) {
  case 1:
    launchGatherTyped<uint8_t>(source, indices, indexType, out, box, fault,
                               stream);
    break;
  case 2:
    launchGatherTyped<uint16_t>(source, indices, indexType, out, box, fault,
                                stream);
    break;
  case 4:
    launchGatherTyped<uint32_t>(source, indices, indexType, out, box, fault,
                                stream);
    break;
  default:
    launchGatherTyped<uint64_t>(source, indices, indexType, out, box, fault,
                                stream);
  }
  return cudaGetLastError();
}

cudaError_t autoshard::rt::cuda::launchGeneric(const GenericLaunch &launch,
                                               const GenericInst *insts,
                                               DeviceFault *fault,
                                               cudaStream_t stream) {
  if (launch.parallelTotal == 0 || launch.sequentialTotal == 0)
    return cudaSuccess;
  // Bodies without a parallel loop run on one thread (sequential semantics).
  unsigned grid = gridFor(launch.parallelTotal);
  unsigned threads =
      launch.parallelTotal < kThreads ? static_cast<unsigned>(
                                            launch.parallelTotal)
                                      : kThreads;
  if (launch.numRegs <= 32)
    genericKernel<32><<<grid, threads, 0, stream>>>(launch, insts, fault);
  else if (launch.numRegs <= 128)
    genericKernel<128><<<grid, threads, 0, stream>>>(launch, insts, fault);
  else
    genericKernel<kMaxRegs><<<grid, threads, 0, stream>>>(launch, insts,
                                                          fault);
  return cudaGetLastError();
}
