//===- CpuBackend.cpp - The CPU backend (OpenBLAS + loops) ----------------===//

#include "BufferPool.h"
#include "CpuKernels.h"
#include "KernelChecks.h"
#include "ScalarEval.h"
#include "autoshard/Runtime/Backend.h"
#include "autoshard/Runtime/Half.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace autoshard;
using namespace autoshard::rt;

Backend::~Backend() = default;

namespace {

/// Copies `shape` elements of `elemSize` bytes: dst[sum i*dstStrides] =
/// src[sum i*srcStrides] (strides in elements). The innermost dim is a
/// memcpy when both sides are contiguous there.
void stridedCopy(uint8_t *dst, const Shape &dstStrides, const uint8_t *src,
                 const Shape &srcStrides, const Shape &shape,
                 int64_t elemSize) {
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t total = getNumElements(shape);
  if (total == 0)
    return;
  if (rank == 0) {
    std::memcpy(dst, src, elemSize);
    return;
  }
  int64_t inner = shape[rank - 1];
  bool contiguous = dstStrides[rank - 1] == 1 && srcStrides[rank - 1] == 1;
  std::vector<int64_t> idx(rank, 0);
  int64_t dOff = 0, sOff = 0;
  for (int64_t row = 0; row < total / inner; ++row) {
    if (contiguous) {
      std::memcpy(dst + dOff * elemSize, src + sOff * elemSize,
                  inner * elemSize);
    } else {
      int64_t ds = dstStrides[rank - 1], ss = srcStrides[rank - 1];
      switch (elemSize) {
      case 2:
        for (int64_t i = 0; i < inner; ++i)
          reinterpret_cast<uint16_t *>(dst)[dOff + i * ds] =
              reinterpret_cast<const uint16_t *>(src)[sOff + i * ss];
        break;
      case 4:
        for (int64_t i = 0; i < inner; ++i)
          reinterpret_cast<uint32_t *>(dst)[dOff + i * ds] =
              reinterpret_cast<const uint32_t *>(src)[sOff + i * ss];
        break;
      case 8:
        for (int64_t i = 0; i < inner; ++i)
          reinterpret_cast<uint64_t *>(dst)[dOff + i * ds] =
              reinterpret_cast<const uint64_t *>(src)[sOff + i * ss];
        break;
      default:
        for (int64_t i = 0; i < inner; ++i)
          std::memcpy(dst + (dOff + i * ds) * elemSize,
                      src + (sOff + i * ss) * elemSize, elemSize);
      }
    }
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        dOff += dstStrides[d];
        sOff += srcStrides[d];
        break;
      }
      dOff -= dstStrides[d] * (shape[d] - 1);
      sOff -= srcStrides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

uint8_t *bytes(const Tensor &t) {
  return static_cast<uint8_t *>(t.getRawData());
}

template <typename T> T reduceIdentity(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return T(0);
  case ReductionKind::Product:
    return T(1);
  case ReductionKind::Max:
    return std::numeric_limits<T>::lowest();
  case ReductionKind::Min:
    return std::numeric_limits<T>::max();
  }
  return T(0);
}

using scalar::combine;

template <typename T>
void accumulateTyped(T *acc, const T *x, int64_t n, ReductionKind kind) {
  for (int64_t i = 0; i < n; ++i)
    acc[i] = combine(acc[i], x[i], kind);
}

/// bf16/f16 accumulation: each step in f32, rounded to the type (as NCCL's
/// and the collectives' pairwise sums are).
template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
void accumulateHalf(uint16_t *acc, const uint16_t *x, int64_t n,
                    ReductionKind kind) {
  for (int64_t i = 0; i < n; ++i)
    acc[i] = Narrow(combine(Widen(acc[i]), Widen(x[i]), kind));
}

/// out[i] = convert(in[i]) for one of Half.h's conversions.
template <typename From, typename To>
void convertElements(const Tensor &in, Tensor &out, To (*convert)(From)) {
  const From *src = in.getData<From>();
  To *dst = out.getData<To>();
  for (int64_t i = 0, n = in.getNumElements(); i < n; ++i)
    dst[i] = convert(src[i]);
}

/// A bf16/f16 tensor's values into an f32 tensor of the same shape (exact).
void widenToF32(const Tensor &in, Tensor &out) {
  convertElements(in, out,
                  in.getDType() == DType::BF16 ? bf16ToFloat : f16ToFloat);
}

/// f32 values rounded (to nearest even) into a bf16/f16 tensor.
void narrowFromF32(const Tensor &in, Tensor &out) {
  convertElements(in, out,
                  out.getDType() == DType::BF16 ? floatToBF16 : floatToF16);
}

/// out[outer, inner] = reduction over mid of in[outer, mid, inner], where
/// the reduced dims have been made contiguous by a transpose.
template <typename T>
void reduceTyped(const T *in, T *out, int64_t outer, int64_t mid,
                 ReductionKind kind) {
  for (int64_t o = 0; o < outer; ++o) {
    T acc = reduceIdentity<T>(kind);
    const T *row = in + o * mid;
    for (int64_t m = 0; m < mid; ++m)
      acc = combine(acc, row[m], kind);
    out[o] = acc;
  }
}

template <typename T>
void softmaxTyped(const T *in, T *out, int64_t outer, int64_t len,
                  int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T *x = in + o * len * inner + i;
      T *y = out + o * len * inner + i;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < len; ++k)
        mx = std::max(mx, static_cast<double>(x[k * inner]));
      double sum = 0;
      for (int64_t k = 0; k < len; ++k)
        sum += std::exp(static_cast<double>(x[k * inner]) - mx);
      for (int64_t k = 0; k < len; ++k)
        y[k * inner] = static_cast<T>(
            std::exp(static_cast<double>(x[k * inner]) - mx) / sum);
    }
}

class CpuBackend final : public Backend {
public:
  std::string getName() const override { return "cpu"; }

  Tensor allocate(DType type, const Shape &shape) override {
    Tensor t = allocateUninitialized(type, shape);
    std::memset(t.getRawData(), 0, t.getBytes());
    return t;
  }
  Tensor allocateUninitialized(DType type, const Shape &shape) override {
    for (int64_t d : shape)
      if (d < 0)
        throw Error("negative dimension in tensor shape");
    return Tensor(type, shape,
                  pool->get(getNumBytes(type, shape)));
  }
  MemoryStats getMemoryStats() const override { return pool->getStats(); }
  Tensor upload(const Tensor &host) override { return host; }
  Tensor download(const Tensor &t) override { return t; }

  void copy(const Tensor &src, Tensor &dst) override {
    if (src.getBytes() != dst.getBytes() || src.getDType() != dst.getDType())
      throw Error("copy: " + src.getTypeString() + " does not fit " +
                  dst.getTypeString());
    if (src.getRawData() != dst.getRawData())
      std::memcpy(dst.getRawData(), src.getRawData(), src.getBytes());
  }

  void fill(Tensor &dst, const Tensor &value) override {
    if (value.getNumElements() != 1)
      throw Error("fill: the fill value must be a single element, got " +
                  value.getTypeString());
    Tensor one = allocateUninitialized(dst.getDType(), {});
    if (isFloatDType(value.getDType()))
      one.setFromDouble(0, value.getAsDouble(0));
    else
      one.setFromInt(0, value.getAsInt(0));
    int64_t n = dst.getNumElements();
    switch (getDTypeSize(dst.getDType())) {
    case 1:
      std::memset(dst.getRawData(), *one.getData<uint8_t>(), n);
      break;
    case 2:
      std::fill_n(dst.getData<uint16_t>(), n, *one.getData<uint16_t>());
      break;
    case 4:
      std::fill_n(dst.getData<uint32_t>(), n, *one.getData<uint32_t>());
      break;
    default:
      std::fill_n(dst.getData<uint64_t>(), n, *one.getData<uint64_t>());
    }
  }

  void matmul(const Tensor &a, const Tensor &b, Tensor &c, bool transA,
              bool transB, bool accumulate) override {
    checkRank(a, 2, "matmul");
    checkRank(b, 2, "matmul");
    checkRank(c, 2, "matmul");
    withF32Operands(a, b, c, accumulate, "matmul",
                    [&](const Tensor &a, const Tensor &b, Tensor &c) {
                      gemm(a, b, c, transA, transB, accumulate, 0, 0, 0);
                    });
  }

  void batchMatmul(const Tensor &a, const Tensor &b, Tensor &c, bool transA,
                   bool transB, bool accumulate) override {
    checkRank(a, 3, "batch_matmul");
    checkRank(b, 3, "batch_matmul");
    checkRank(c, 3, "batch_matmul");
    int64_t batch = c.getDim(0);
    if (a.getDim(0) != batch || b.getDim(0) != batch)
      throw Error("batch_matmul: batch sizes differ (" + a.getTypeString() +
                  ", " + b.getTypeString() + ", " + c.getTypeString() + ")");
    int64_t sa = a.getDim(1) * a.getDim(2), sb = b.getDim(1) * b.getDim(2),
            sc = c.getDim(1) * c.getDim(2);
    withF32Operands(a, b, c, accumulate, "batch_matmul",
                    [&](const Tensor &a, const Tensor &b, Tensor &c) {
                      for (int64_t i = 0; i < batch; ++i)
                        gemm(a, b, c, transA, transB, accumulate, i * sa,
                             i * sb, i * sc);
                    });
  }

  void gemm(const Tensor &a, const Tensor &b, Tensor &c,
            const GemmOptions &o) override {
    int64_t batch = checkGemmOperands(a, b, c, o);
    if (o.epilogue == GemmEpilogue::None)
      return Backend::gemm(a, b, c, o);
    int64_t rank = a.getRank();
    int64_t sa = a.getDim(rank - 2) * a.getDim(rank - 1),
            sb = b.getDim(rank - 2) * b.getDim(rank - 1),
            sc = c.getDim(rank - 2) * c.getDim(rank - 1);
    // The epilogue runs on the FP32 result, before a bf16/f16 c is
    // rounded: one rounding, as in cuBLASLt's epilogues.
    withF32Operands(a, b, c, o.accumulate,
                    o.batched ? "batch_matmul" : "matmul",
                    [&](const Tensor &a, const Tensor &b, Tensor &c) {
                      for (int64_t i = 0; i < batch; ++i)
                        gemm(a, b, c, o.transA, o.transB, o.accumulate,
                             i * sa, i * sb, i * sc);
                      applyEpilogue(c, o.bias ? toF32(*o.bias) : Tensor(),
                                    o.epilogue);
                    });
  }

  void generic(const GenericSpec &spec,
               const std::vector<const Tensor *> &inputs,
               const std::vector<const Tensor *> &captures,
               const std::vector<Tensor *> &outputs) override {
    cpu::runGeneric(spec, inputs, captures, outputs);
  }

  void transpose(const Tensor &in, Tensor &out,
                 const std::vector<int64_t> &perm) override {
    int64_t rank = in.getRank();
    checkSameType(in, out, "transpose");
    if (static_cast<int64_t>(perm.size()) != rank || out.getRank() != rank)
      throw Error("transpose: permutation does not match " +
                  in.getTypeString());
    Shape inStrides = getStrides(in.getShape()), srcStrides(rank);
    std::vector<bool> seen(rank, false);
    for (int64_t k = 0; k < rank; ++k) {
      if (perm[k] < 0 || perm[k] >= rank || seen[perm[k]] ||
          out.getDim(k) != in.getDim(perm[k]))
        throw Error("transpose: invalid permutation for " + in.getTypeString() +
                    " -> " + out.getTypeString());
      seen[perm[k]] = true;
      srcStrides[k] = inStrides[perm[k]];
    }
    stridedCopy(bytes(out), getStrides(out.getShape()), bytes(in), srcStrides,
                out.getShape(), getDTypeSize(in.getDType()));
  }

  void softmax(const Tensor &in, Tensor &out, int64_t dim) override {
    checkSameType(in, out, "softmax");
    if (dim < 0 || dim >= in.getRank() || in.getShape() != out.getShape())
      throw Error("softmax: bad dim " + std::to_string(dim) + " for " +
                  in.getTypeString());
    int64_t outer = 1, inner = 1, len = in.getDim(dim);
    for (int64_t d = 0; d < dim; ++d)
      outer *= in.getDim(d);
    for (int64_t d = dim + 1; d < in.getRank(); ++d)
      inner *= in.getDim(d);
    if (in.getDType() == DType::F32)
      softmaxTyped(in.getData<float>(), out.getData<float>(), outer, len,
                   inner);
    else if (in.getDType() == DType::F64)
      softmaxTyped(in.getData<double>(), out.getData<double>(), outer, len,
                   inner);
    else if (isHalfDType(in.getDType())) {
      // Max, exponentials and sum in f32 or wider; rounded once at the end.
      Tensor wide = toF32(in), wideOut = allocateUninitialized(
                                   DType::F32, out.getShape());
      softmaxTyped(wide.getData<float>(), wideOut.getData<float>(), outer,
                   len, inner);
      narrowFromF32(wideOut, out);
    } else
      throw Error("softmax: unsupported element type in " + in.getTypeString());
  }

  void reduce(const Tensor &in, Tensor &out, const std::vector<int64_t> &dims,
              ReductionKind kind) override {
    checkSameType(in, out, "reduce");
    int64_t rank = in.getRank();
    std::vector<bool> reduced(rank, false);
    for (int64_t d : dims) {
      if (d < 0 || d >= rank || reduced[d])
        throw Error("reduce: bad dims for " + in.getTypeString());
      reduced[d] = true;
    }
    // Move reduced dims innermost, then reduce contiguous rows.
    std::vector<int64_t> perm;
    Shape permShape;
    int64_t outer = 1, mid = 1;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d]) {
        perm.push_back(d);
        permShape.push_back(in.getDim(d));
        outer *= in.getDim(d);
      }
    for (int64_t d = 0; d < rank; ++d)
      if (reduced[d]) {
        perm.push_back(d);
        permShape.push_back(in.getDim(d));
        mid *= in.getDim(d);
      }
    if (out.getNumElements() != outer)
      throw Error("reduce: result " + out.getTypeString() +
                  " does not match the kept dims of " + in.getTypeString());
    if (isHalfDType(in.getDType())) {
      // Accumulate in f32, round the result once.
      Tensor wideOut = allocateUninitialized(DType::F32, out.getShape());
      reduce(toF32(in), wideOut, dims, kind);
      return narrowFromF32(wideOut, out);
    }
    Tensor tmp = allocateUninitialized(in.getDType(), permShape);
    transpose(in, tmp, perm);
    switch (in.getDType()) {
    case DType::F32:
      return reduceTyped(tmp.getData<float>(), out.getData<float>(), outer, mid,
                         kind);
    case DType::F64:
      return reduceTyped(tmp.getData<double>(), out.getData<double>(), outer,
                         mid, kind);
    case DType::I32:
      return reduceTyped(tmp.getData<int32_t>(), out.getData<int32_t>(), outer,
                         mid, kind);
    case DType::I64:
      return reduceTyped(tmp.getData<int64_t>(), out.getData<int64_t>(), outer,
                         mid, kind);
    case DType::I1:
      // Booleans: sum/max are "or", product/min are "and".
      for (int64_t o = 0; o < outer; ++o) {
        bool any = false, all = true;
        for (int64_t m = 0; m < mid; ++m) {
          bool v = tmp.getData<uint8_t>()[o * mid + m] != 0;
          any |= v;
          all &= v;
        }
        out.getData<uint8_t>()[o] =
            (kind == ReductionKind::Sum || kind == ReductionKind::Max) ? any
                                                                       : all;
      }
      return;
    case DType::BF16:
    case DType::F16:
      return; // handled above
    }
  }

  bool hasWindowKernels() const override { return cpu::haveWindowKernels(); }
  void conv2d(const Tensor &in, const Tensor &w, Tensor &out,
              const std::vector<int64_t> &strides,
              const std::vector<int64_t> &dilations) override {
    cpu::conv2d(in, w, out, strides, dilations);
  }
  void pool2d(const Tensor &in, Tensor &out, const std::vector<int64_t> &kernel,
              const std::vector<int64_t> &strides,
              const std::vector<int64_t> &dilations,
              ReductionKind kind) override {
    cpu::pool2d(in, out, kernel, strides, dilations, kind);
  }

  void accumulate(Tensor &acc, const Tensor &x, ReductionKind kind) override {
    checkSameType(acc, x, "accumulate");
    if (acc.getNumElements() != x.getNumElements())
      throw Error("accumulate: " + acc.getTypeString() + " and " +
                  x.getTypeString() + " differ in size");
    int64_t n = acc.getNumElements();
    switch (acc.getDType()) {
    case DType::F32:
      return accumulateTyped(acc.getData<float>(), x.getData<float>(), n, kind);
    case DType::F64:
      return accumulateTyped(acc.getData<double>(), x.getData<double>(), n,
                             kind);
    case DType::I32:
      return accumulateTyped(acc.getData<int32_t>(), x.getData<int32_t>(), n,
                             kind);
    case DType::I64:
      return accumulateTyped(acc.getData<int64_t>(), x.getData<int64_t>(), n,
                             kind);
    case DType::I1: {
      uint8_t *a = acc.getData<uint8_t>();
      const uint8_t *b = x.getData<uint8_t>();
      bool useOr = kind == ReductionKind::Sum || kind == ReductionKind::Max;
      for (int64_t i = 0; i < n; ++i)
        a[i] = useOr ? (a[i] | b[i]) : (a[i] & b[i]);
      return;
    }
    case DType::BF16:
      return accumulateHalf<bf16ToFloat, floatToBF16>(
          acc.getData<uint16_t>(), x.getData<uint16_t>(), n, kind);
    case DType::F16:
      return accumulateHalf<f16ToFloat, floatToF16>(
          acc.getData<uint16_t>(), x.getData<uint16_t>(), n, kind);
    }
  }

  void gather(const Tensor &source, const Tensor &indices, Tensor &out,
              const std::vector<int64_t> &dims) override {
    checkSameType(source, out, "gather");
    int64_t rank = source.getRank();
    int64_t nd = static_cast<int64_t>(dims.size());
    if (indices.getRank() < 1 || indices.getDim(indices.getRank() - 1) != nd)
      throw Error("gather: indices " + indices.getTypeString() +
                  " do not end in a dim of size " + std::to_string(nd));
    if (isFloatDType(indices.getDType()))
      throw Error("gather: indices must be integers, got " +
                  indices.getTypeString());
    std::vector<bool> gathered(rank, false);
    for (int64_t d : dims) {
      if (d < 0 || d >= rank || gathered[d])
        throw Error("gather: bad gather dims for " + source.getTypeString());
      gathered[d] = true;
    }
    // Each batch entry copies the sub-tensor of source over the dims not
    // gathered, at the coordinates the indices give for gathered dims.
    Shape sliceShape, sliceStrides;
    Shape srcStrides = getStrides(source.getShape());
    for (int64_t d = 0; d < rank; ++d)
      if (!gathered[d]) {
        sliceShape.push_back(source.getDim(d));
        sliceStrides.push_back(srcStrides[d]);
      }
    int64_t batch = indices.getNumElements() / std::max<int64_t>(nd, 1);
    if (nd == 0)
      batch = indices.getNumElements();
    int64_t sliceElems = getNumElements(sliceShape);
    if (out.getNumElements() != batch * sliceElems)
      throw Error("gather: result " + out.getTypeString() +
                  " does not match indices " + indices.getTypeString() +
                  " and source " + source.getTypeString());
    int64_t size = getDTypeSize(source.getDType());
    Shape contiguous = getStrides(sliceShape);
    for (int64_t b = 0; b < batch; ++b) {
      int64_t base = 0;
      for (int64_t k = 0; k < nd; ++k) {
        int64_t ix = indices.getAsInt(b * nd + k);
        if (ix < 0 || ix >= source.getDim(dims[k]))
          throw Error("gather: index " + std::to_string(ix) +
                      " out of bounds for dim " + std::to_string(dims[k]) +
                      " of " + source.getTypeString());
        base += ix * srcStrides[dims[k]];
      }
      stridedCopy(bytes(out) + b * sliceElems * size, contiguous,
                  bytes(source) + base * size, sliceStrides, sliceShape, size);
    }
  }

  void extractSlice(const Tensor &source, Tensor &out,
                    const std::vector<int64_t> &offsets,
                    const std::vector<int64_t> &sizes,
                    const std::vector<int64_t> &strides) override {
    checkSameType(source, out, "extract_slice");
    checkBox(source, offsets, sizes, strides, "extract_slice");
    if (getNumElements(sizes) != out.getNumElements())
      throw Error("extract_slice: result " + out.getTypeString() +
                  " does not match the slice sizes");
    Shape srcStrides = getStrides(source.getShape());
    int64_t base = 0;
    Shape stepStrides(sizes.size());
    for (size_t d = 0; d < sizes.size(); ++d) {
      base += offsets[d] * srcStrides[d];
      stepStrides[d] = strides[d] * srcStrides[d];
    }
    int64_t size = getDTypeSize(source.getDType());
    stridedCopy(bytes(out), getStrides(sizes), bytes(source) + base * size,
                stepStrides, sizes, size);
  }

  void insertSlice(const Tensor &source, Tensor &dest,
                   const std::vector<int64_t> &offsets,
                   const std::vector<int64_t> &sizes,
                   const std::vector<int64_t> &strides) override {
    checkSameType(source, dest, "insert_slice");
    checkBox(dest, offsets, sizes, strides, "insert_slice");
    if (getNumElements(sizes) != source.getNumElements())
      throw Error("insert_slice: source " + source.getTypeString() +
                  " does not match the slice sizes");
    Shape dstStrides = getStrides(dest.getShape());
    int64_t base = 0;
    Shape stepStrides(sizes.size());
    for (size_t d = 0; d < sizes.size(); ++d) {
      base += offsets[d] * dstStrides[d];
      stepStrides[d] = strides[d] * dstStrides[d];
    }
    int64_t size = getDTypeSize(dest.getDType());
    stridedCopy(bytes(dest) + base * size, stepStrides, bytes(source),
                getStrides(sizes), sizes, size);
  }

  void concat(const std::vector<const Tensor *> &pieces, Tensor &out,
              int64_t dim) override {
    if (dim < 0 || dim >= out.getRank())
      throw Error("concat: bad dim " + std::to_string(dim) + " for " +
                  out.getTypeString());
    int64_t offset = 0;
    for (const Tensor *p : pieces) {
      checkSameType(*p, out, "concat");
      std::vector<int64_t> offsets(out.getRank(), 0);
      std::vector<int64_t> strides(out.getRank(), 1);
      offsets[dim] = offset;
      bool fits = p->getRank() == out.getRank();
      for (int64_t d = 0; fits && d < out.getRank(); ++d)
        fits = d == dim || p->getDim(d) == out.getDim(d);
      if (!fits)
        throw Error("concat: piece " + p->getTypeString() + " does not fit " +
                    out.getTypeString() + " along dim " + std::to_string(dim));
      insertSlice(*p, out, offsets, p->getShape(), strides);
      offset += p->getDim(dim);
    }
    if (offset != out.getDim(dim))
      throw Error("concat: pieces do not add up to " + out.getTypeString());
  }

  void pad(const Tensor &source, const Tensor &value, Tensor &out,
           const std::vector<int64_t> &low) override {
    fill(out, value);
    std::vector<int64_t> strides(out.getRank(), 1);
    insertSlice(source, out, low, source.getShape(), strides);
  }

private:
  /// A bf16/f16 tensor widened into pooled f32 scratch; others as they are.
  Tensor toF32(const Tensor &t) {
    if (!isHalfDType(t.getDType()))
      return t;
    Tensor wide = allocateUninitialized(DType::F32, t.getShape());
    widenToF32(t, wide);
    return wide;
  }

  /// Runs `body` on f32 forms of a GEMM's operands. bf16/f16 A and B (the
  /// same type) are widened exactly, so OpenBLAS's sgemm gives the FP32
  /// accumulation that cuBLAS's bf16/f16 GEMMs with FP32 compute give; C is
  /// f32, or their type (widened for beta = 1, rounded back once). Other
  /// mixes are errors.
  template <typename F>
  void withF32Operands(const Tensor &a, const Tensor &b, Tensor &c,
                       bool accumulate, const char *what, F body) {
    DType ta = a.getDType(), tc = c.getDType();
    if (!isHalfDType(ta) && !isHalfDType(b.getDType()) && !isHalfDType(tc))
      return body(a, b, c);
    if (!isHalfDType(ta) || b.getDType() != ta ||
        (tc != DType::F32 && tc != ta))
      throw Error(std::string(what) + ": unsupported element types " +
                  a.getTypeString() + " x " + b.getTypeString() + " -> " +
                  c.getTypeString() +
                  " (bf16/f16 operands must match; the result is f32 or "
                  "their type)");
    Tensor wa = toF32(a), wb = toF32(b);
    if (tc == DType::F32)
      return body(wa, wb, c);
    Tensor wc = accumulate ? toF32(c)
                           : allocateUninitialized(DType::F32, c.getShape());
    body(wa, wb, wc);
    narrowFromF32(wc, c);
  }

  /// c = act(c + bias[j]) over c's last dim j, in f32: the add rounds as
  /// an f32 add does, the activations are computed in double and rounded
  /// once.
  static void applyEpilogue(Tensor &c, const Tensor &bias,
                            GemmEpilogue epilogue) {
    bool relu = epilogue == GemmEpilogue::Relu ||
                epilogue == GemmEpilogue::BiasRelu;
    bool gelu = epilogue == GemmEpilogue::Gelu ||
                epilogue == GemmEpilogue::BiasGelu;
    bool geluErf = epilogue == GemmEpilogue::GeluErf ||
                   epilogue == GemmEpilogue::BiasGeluErf;
    int64_t n = c.getDim(c.getRank() - 1);
    int64_t rows = n ? c.getNumElements() / n : 0;
    const float *b = bias.isNull() ? nullptr : bias.getData<float>();
    for (int64_t r = 0; r < rows; ++r) {
      float *row = c.getData<float>() + r * n;
      for (int64_t j = 0; j < n; ++j) {
        float x = b ? row[j] + b[j] : row[j];
        if (relu)
          x = x > 0 || std::isnan(x) ? x : 0.0f;
        else if (gelu)
          x = static_cast<float>(geluTanh(x));
        else if (geluErf)
          x = static_cast<float>(0.5 * x * (1 + std::erf(x * M_SQRT1_2)));
        row[j] = x;
      }
    }
  }

  /// GELU's tanh form, as cuBLASLt's GELU epilogues compute it.
  static double geluTanh(double x) {
    const double kSqrt2OverPi = 0.7978845608028654;
    return 0.5 * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
  }

  static void gemm(const Tensor &a, const Tensor &b, Tensor &c, bool transA,
                   bool transB, bool accumulate, int64_t offA, int64_t offB,
                   int64_t offC) {
    checkSameType(a, c, "matmul");
    checkSameType(b, c, "matmul");
    int64_t r = a.getRank();
    int64_t m = transA ? a.getDim(r - 1) : a.getDim(r - 2);
    int64_t k = transA ? a.getDim(r - 2) : a.getDim(r - 1);
    int64_t kb = transB ? b.getDim(r - 1) : b.getDim(r - 2);
    int64_t n = transB ? b.getDim(r - 2) : b.getDim(r - 1);
    if (k != kb || c.getDim(r - 2) != m || c.getDim(r - 1) != n)
      throw Error("matmul: shapes do not agree: " + a.getTypeString() + " x " +
                  b.getTypeString() + " -> " + c.getTypeString());
    if (m == 0 || n == 0)
      return;
    if (k == 0) { // an empty sum: BLAS would not touch c
      if (!accumulate)
        std::memset(static_cast<uint8_t *>(c.getRawData()) +
                        offC * getDTypeSize(c.getDType()),
                    0, m * n * getDTypeSize(c.getDType()));
      return;
    }
    int lda = static_cast<int>(a.getDim(r - 1));
    int ldb = static_cast<int>(b.getDim(r - 1));
    int ldc = static_cast<int>(n);
    CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans;
    CBLAS_TRANSPOSE tb = transB ? CblasTrans : CblasNoTrans;
    if (c.getDType() == DType::F32)
      cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f,
                  a.getData<float>() + offA, lda, b.getData<float>() + offB,
                  ldb, accumulate ? 1.0f : 0.0f, c.getData<float>() + offC,
                  ldc);
    else if (c.getDType() == DType::F64)
      cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0,
                  a.getData<double>() + offA, lda, b.getData<double>() + offB,
                  ldb, accumulate ? 1.0 : 0.0, c.getData<double>() + offC, ldc);
    else
      throw Error("matmul: BLAS path needs f32 or f64, got " +
                  c.getTypeString());
  }

  /// Tensor buffers: 64-byte aligned host blocks, reused after they die.
  std::shared_ptr<BufferPool> pool = BufferPool::create(
      MemorySpace::Host,
      [](size_t bytes) { return std::aligned_alloc(64, bytes); },
      [](void *block) { std::free(block); });
};
} // namespace

std::unique_ptr<Backend> autoshard::rt::createCpuBackend() {
  return std::make_unique<CpuBackend>();
}
