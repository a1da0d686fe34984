//===- CpuGeneric.cpp - Loop-nest + scalar bytecode evaluator -------------===//
//
// Evaluates a GenericSpec on host tensors. Each operand's affine map is
// folded into one linear function of the loop indices (a stride per loop
// and a base), so walking the iteration space is an odometer that adds
// strides; the body is a register bytecode interpreted per point.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "ScalarEval.h"

#include <cmath>
#include <cstring>

using namespace autoshard::rt;

namespace {
using scalar::asUnsigned;
using scalar::cmpF;
using scalar::cmpI;
using scalar::floatOp;
using scalar::intOp;
using scalar::Reg;
using scalar::roundTo;
using scalar::wrapTo;

/// One operand folded to offset = base + sum_l stride[l] * i_l.
struct LinearAccess {
  const uint8_t *data = nullptr;
  DType type = DType::F32;
  int64_t base = 0;
  std::vector<int64_t> loopStrides;
};

LinearAccess foldMap(const AffineMapSpec &map, const Tensor &t,
                     const std::vector<int64_t> &ranges, int operand) {
  int64_t numLoops = static_cast<int64_t>(ranges.size());
  if (map.numResults != t.getRank() ||
      static_cast<int64_t>(map.coeffs.size()) != map.numResults * numLoops ||
      static_cast<int64_t>(map.consts.size()) != map.numResults)
    throw Error("generic: indexing map of operand " + std::to_string(operand) +
                " does not match its rank-" + std::to_string(t.getRank()) +
                " tensor " + t.getTypeString());
  Shape strides = getStrides(t.getShape());
  LinearAccess acc;
  acc.data = static_cast<const uint8_t *>(t.getRawData());
  acc.type = t.getDType();
  acc.loopStrides.assign(numLoops, 0);
  for (int64_t r = 0; r < map.numResults; ++r) {
    // The index is affine in the loop indices, so its extremes over the
    // iteration box are at corners: check them once instead of per point.
    int64_t lo = map.consts[r], hi = map.consts[r];
    for (int64_t l = 0; l < numLoops; ++l) {
      int64_t c = map.coeffs[r * numLoops + l];
      int64_t span = c * (ranges[l] - 1);
      (span < 0 ? lo : hi) += span;
      acc.loopStrides[l] += c * strides[r];
    }
    if (lo < 0 || hi >= t.getDim(r))
      throw Error("generic: operand " + std::to_string(operand) +
                  " is accessed out of bounds in dim " + std::to_string(r) +
                  " (index range [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "] of " + t.getTypeString() + ")");
    acc.base += map.consts[r] * strides[r];
  }
  return acc;
}

/// Evaluates the body for up to kLanes consecutive points of the innermost
/// loop at once: registers are arrays (reg * kLanes + lane) and each
/// instruction dispatches once per batch, not once per point.
constexpr int kLanes = 256;

template <typename F>
void floatLanes(Reg *d, const Reg *a, const Reg *b, int n, DType t, F f) {
  if (t == DType::F32)
    for (int i = 0; i < n; ++i)
      d[i].f = static_cast<double>(static_cast<float>(f(a[i].f, b[i].f)));
  else if (isHalfDType(t))
    for (int i = 0; i < n; ++i)
      d[i].f = roundTo(f(a[i].f, b[i].f), t);
  else
    for (int i = 0; i < n; ++i)
      d[i].f = f(a[i].f, b[i].f);
}

template <typename F>
void intLanes(Reg *d, const Reg *a, const Reg *b, int n, DType t, F f) {
  for (int i = 0; i < n; ++i)
    d[i].i = wrapTo(f(a[i].i, b[i].i), t);
}

template <ScalarOp Op>
void floatLanes(Reg *d, const Reg *a, const Reg *b, int n, DType t) {
  floatLanes(d, a, b, n, t,
             [](double x, double y) { return floatOp<Op>(x, y); });
}

template <ScalarOp Op>
void intLanes(Reg *d, const Reg *a, const Reg *b, int n, DType t) {
  intLanes(d, a, b, n, t,
           [](int64_t x, int64_t y) { return intOp<Op>(x, y); });
}

/// Ops whose float and integer forms are both the shared scalar op.
template <ScalarOp Op>
void numLanes(Reg *d, const Reg *a, const Reg *b, int n, DType t) {
  if (isFloatDType(t))
    floatLanes<Op>(d, a, b, n, t);
  else
    intLanes<Op>(d, a, b, n, t);
}

class Interpreter {
public:
  Interpreter(const GenericSpec &spec,
              const std::vector<const Tensor *> &captures)
      : spec(spec), captures(captures),
        regs(static_cast<size_t>(spec.numRegs) * kLanes),
        zeros(kLanes, Reg{0}) {}

  Reg *getReg(int32_t r) {
    return regs.data() + static_cast<size_t>(r) * kLanes;
  }

  /// Lanes are points loopIdx with loop `inner` = loopIdx[inner] + lane.
  void run(const int64_t *loopIdx, int64_t inner, int n) {
    for (const ScalarInst &in : spec.body) {
      Reg *d = getReg(in.dst);
      const Reg *a = in.a >= 0 ? getReg(in.a) : zeros.data();
      const Reg *b = in.b >= 0 ? getReg(in.b) : zeros.data();
      const Reg *c = in.c >= 0 ? getReg(in.c) : zeros.data();
      DType t = in.type;
      bool fl = isFloatDType(t);
      switch (in.op) {
      case ScalarOp::Const:
        for (int i = 0; i < n; ++i) {
          if (fl)
            d[i].f = in.fimm;
          else
            d[i].i = in.imm;
        }
        break;
      case ScalarOp::Index:
        for (int i = 0; i < n; ++i)
          d[i].i = loopIdx[in.imm] + (in.imm == inner ? i : 0);
        break;
      case ScalarOp::Captured: {
        const Tensor &tensor = *captures[in.imm];
        const auto *base = static_cast<const uint8_t *>(tensor.getRawData());
        for (int i = 0; i < n; ++i) {
          int64_t offset = 0;
          for (size_t k = 0; k < in.args.size(); ++k) {
            int64_t ix = getReg(in.args[k])[i].i;
            if (ix < 0 || ix >= tensor.getDim(k))
              throw Error("tensor.extract index " + std::to_string(ix) +
                          " out of bounds for dim " + std::to_string(k) +
                          " of " + tensor.getTypeString());
            offset = offset * tensor.getDim(k) + ix;
          }
          // Captured element types match the result type by construction.
          d[i] = scalar::load(base, offset, tensor.getDType());
        }
        break;
      }
      case ScalarOp::Add:
        numLanes<ScalarOp::Add>(d, a, b, n, t);
        break;
      case ScalarOp::Sub:
        numLanes<ScalarOp::Sub>(d, a, b, n, t);
        break;
      case ScalarOp::Mul:
        numLanes<ScalarOp::Mul>(d, a, b, n, t);
        break;
      case ScalarOp::Div:
      case ScalarOp::Rem:
        if (fl) {
          if (in.op == ScalarOp::Div)
            floatLanes<ScalarOp::Div>(d, a, b, n, t);
          else
            floatLanes<ScalarOp::Rem>(d, a, b, n, t);
          break;
        }
        for (int i = 0; i < n; ++i) {
          if (b[i].i == 0)
            throw Error("integer division by zero");
          d[i].i = scalar::divRemS(in.op == ScalarOp::Div, a[i].i, b[i].i, t);
        }
        break;
      case ScalarOp::DivU:
      case ScalarOp::RemU:
        for (int i = 0; i < n; ++i) {
          uint64_t ua = asUnsigned(a[i].i, t), ub = asUnsigned(b[i].i, t);
          if (ub == 0)
            throw Error("integer division by zero");
          d[i].i = scalar::divRemU(in.op == ScalarOp::DivU, ua, ub, t);
        }
        break;
      // maxsi / minsi of i1 (0/1 registers, true is -1): and / or.
      case ScalarOp::Max:
        if (t == DType::I1)
          intLanes<ScalarOp::And>(d, a, b, n, t);
        else
          numLanes<ScalarOp::Max>(d, a, b, n, t);
        break;
      case ScalarOp::Min:
        if (t == DType::I1)
          intLanes<ScalarOp::Or>(d, a, b, n, t);
        else
          numLanes<ScalarOp::Min>(d, a, b, n, t);
        break;
      case ScalarOp::MaxU:
      case ScalarOp::MinU:
        for (int i = 0; i < n; ++i) {
          bool aBigger = asUnsigned(a[i].i, t) >= asUnsigned(b[i].i, t);
          d[i].i = (aBigger == (in.op == ScalarOp::MaxU)) ? a[i].i : b[i].i;
        }
        break;
      case ScalarOp::MaxNum:
        floatLanes<ScalarOp::MaxNum>(d, a, b, n, t);
        break;
      case ScalarOp::MinNum:
        floatLanes<ScalarOp::MinNum>(d, a, b, n, t);
        break;
      case ScalarOp::Neg:
        numLanes<ScalarOp::Neg>(d, a, b, n, t);
        break;
      case ScalarOp::Abs:
        numLanes<ScalarOp::Abs>(d, a, b, n, t);
        break;
      case ScalarOp::And:
        intLanes<ScalarOp::And>(d, a, b, n, t);
        break;
      case ScalarOp::Or:
        intLanes<ScalarOp::Or>(d, a, b, n, t);
        break;
      case ScalarOp::Xor:
        intLanes<ScalarOp::Xor>(d, a, b, n, t);
        break;
      case ScalarOp::Shl:
        intLanes<ScalarOp::Shl>(d, a, b, n, t);
        break;
      case ScalarOp::ShrS:
        intLanes<ScalarOp::ShrS>(d, a, b, n, t);
        break;
      case ScalarOp::ShrU:
        for (int i = 0; i < n; ++i)
          d[i].i = wrapTo(
              static_cast<int64_t>(asUnsigned(a[i].i, t) >> (b[i].i & 63)), t);
        break;
#define UNARY(OP, FN)                                                          \
  case ScalarOp::OP:                                                           \
    floatLanes(d, a, b, n, t, [](double x, double) { return FN(x); });         \
    break;
        AUTOSHARD_SCALAR_UNARY_MATH(UNARY)
#undef UNARY
      case ScalarOp::Rsqrt:
        floatLanes<ScalarOp::Rsqrt>(d, a, b, n, t);
        break;
      case ScalarOp::Atan2:
        floatLanes<ScalarOp::Atan2>(d, a, b, n, t);
        break;
      case ScalarOp::Pow:
        floatLanes<ScalarOp::Pow>(d, a, b, n, t);
        break;
      case ScalarOp::Fma:
        for (int i = 0; i < n; ++i)
          d[i].f = roundTo(std::fma(a[i].f, b[i].f, c[i].f), t);
        break;
      case ScalarOp::CmpF:
        for (int i = 0; i < n; ++i)
          d[i].i = cmpF(in.imm, a[i].f, b[i].f);
        break;
      case ScalarOp::CmpI:
        for (int i = 0; i < n; ++i)
          d[i].i = cmpI(in.imm, a[i].i, b[i].i, in.srcType);
        break;
      case ScalarOp::Select:
        for (int i = 0; i < n; ++i)
          d[i] = (a[i].i & 1) ? b[i] : c[i];
        break;
      case ScalarOp::IToF:
      case ScalarOp::UIToF:
        for (int i = 0; i < n; ++i)
          d[i].f = scalar::intToFloat(a[i].i, in.op == ScalarOp::UIToF,
                                      in.srcType, t);
        break;
      case ScalarOp::FToI:
      case ScalarOp::FToUI:
        for (int i = 0; i < n; ++i)
          d[i].i = scalar::floatToInt(a[i].f, t);
        break;
      case ScalarOp::FCast:
        for (int i = 0; i < n; ++i)
          d[i].f = roundTo(a[i].f, t);
        break;
      case ScalarOp::ICast: // extsi of i1 gives -1 for true
        for (int i = 0; i < n; ++i)
          d[i].i = wrapTo(scalar::asSigned(a[i].i, in.srcType), t);
        break;
      case ScalarOp::ZExt:
        for (int i = 0; i < n; ++i)
          d[i].i =
              wrapTo(static_cast<int64_t>(asUnsigned(a[i].i, in.srcType)), t);
        break;
      }
    }
  }

private:
  const GenericSpec &spec;
  const std::vector<const Tensor *> &captures;
  std::vector<Reg> regs;
  std::vector<Reg> zeros;
};

void loadLanes(Reg *dst, const uint8_t *base, int64_t offset, int64_t stride,
               int n, DType t) {
  switch (t) {
  case DType::F32: {
    const float *p = reinterpret_cast<const float *>(base) + offset;
    for (int i = 0; i < n; ++i)
      dst[i].f = p[i * stride];
    return;
  }
  case DType::F64: {
    const double *p = reinterpret_cast<const double *>(base) + offset;
    for (int i = 0; i < n; ++i)
      dst[i].f = p[i * stride];
    return;
  }
  default:
    for (int i = 0; i < n; ++i)
      dst[i] = scalar::load(base, offset + i * stride, t);
  }
}

void storeLanes(const Reg *src, uint8_t *base, int64_t offset, int64_t stride,
                int n, DType t) {
  if (t == DType::F32) {
    float *p = reinterpret_cast<float *>(base) + offset;
    for (int i = 0; i < n; ++i)
      p[i * stride] = static_cast<float>(src[i].f);
    return;
  }
  for (int i = 0; i < n; ++i)
    scalar::store(base, offset + i * stride, t, src[i]);
}
} // namespace

void autoshard::rt::cpu::runGeneric(const GenericSpec &spec,
                                    const std::vector<const Tensor *> &inputs,
                                    const std::vector<const Tensor *> &captures,
                                    const std::vector<Tensor *> &outputs) {
  if (static_cast<int32_t>(inputs.size()) != spec.numInputs ||
      static_cast<int32_t>(outputs.size()) != spec.numOutputs ||
      static_cast<int32_t>(captures.size()) != spec.numCaptures ||
      static_cast<int32_t>(spec.maps.size()) !=
          spec.numInputs + spec.numOutputs ||
      static_cast<int32_t>(spec.yields.size()) != spec.numOutputs ||
      spec.numRegs < spec.numInputs + spec.numOutputs)
    throw Error("generic: operand counts do not match the loop nest");
  for (const ScalarInst &in : spec.body)
    if (in.dst < 0 || in.dst >= spec.numRegs || in.a >= spec.numRegs ||
        in.b >= spec.numRegs || in.c >= spec.numRegs ||
        (in.op == ScalarOp::Captured &&
         (in.imm < 0 || in.imm >= spec.numCaptures ||
          static_cast<int64_t>(in.args.size()) !=
              captures[in.imm]->getRank())) ||
        (in.op == ScalarOp::Index &&
         (in.imm < 0 ||
          in.imm >= static_cast<int64_t>(spec.loopRanges.size()))))
      throw Error("generic: malformed body bytecode");
  for (int32_t y : spec.yields)
    if (y < 0 || y >= spec.numRegs)
      throw Error("generic: malformed body bytecode");

  const std::vector<int64_t> &ranges = spec.loopRanges;
  int64_t numLoops = static_cast<int64_t>(ranges.size());
  int64_t total = 1;
  for (int64_t r : ranges) {
    if (r < 0)
      throw Error("generic: negative loop range");
    total *= r;
  }
  // An empty iteration space touches nothing (and has no last index to
  // check bounds with).
  if (total == 0)
    return;
  int32_t numOperands = spec.numInputs + spec.numOutputs;
  std::vector<LinearAccess> acc;
  for (int32_t k = 0; k < numOperands; ++k) {
    const Tensor &t =
        k < spec.numInputs ? *inputs[k] : *outputs[k - spec.numInputs];
    acc.push_back(foldMap(spec.maps[k], t, ranges, k));
  }

  // Batch along the innermost loop unless an output revisits an element
  // there (a reduction over it): then each point must see the previous
  // point's store, so run one lane at a time.
  int64_t inner = numLoops - 1;
  bool batch = numLoops > 0;
  for (int32_t o = 0; batch && o < spec.numOutputs; ++o)
    if (acc[spec.numInputs + o].loopStrides[inner] == 0 && ranges[inner] > 1)
      batch = false;
  int64_t innerRange = numLoops > 0 ? ranges[inner] : 1;
  int64_t outerPoints = total / innerRange;
  int maxLanes = batch ? kLanes : 1;

  Interpreter interp(spec, captures);
  std::vector<int64_t> idx(numLoops, 0);
  std::vector<int64_t> offsets(numOperands);
  for (int32_t k = 0; k < numOperands; ++k)
    offsets[k] = acc[k].base;

  for (int64_t outer = 0; outer < outerPoints; ++outer) {
    for (int64_t start = 0; start < innerRange; start += maxLanes) {
      int n = static_cast<int>(std::min<int64_t>(maxLanes, innerRange - start));
      if (numLoops > 0)
        idx[inner] = start;
      for (int32_t k = 0; k < numOperands; ++k) {
        int64_t stride = numLoops > 0 ? acc[k].loopStrides[inner] : 0;
        loadLanes(interp.getReg(k), acc[k].data, offsets[k] + start * stride,
                  stride, n, acc[k].type);
      }
      interp.run(idx.data(), inner, n);
      for (int32_t o = 0; o < spec.numOutputs; ++o) {
        int32_t k = spec.numInputs + o;
        int64_t stride = numLoops > 0 ? acc[k].loopStrides[inner] : 0;
        storeLanes(interp.getReg(spec.yields[o]),
                   const_cast<uint8_t *>(acc[k].data),
                   offsets[k] + start * stride, stride, n, acc[k].type);
      }
    }
    if (numLoops > 0)
      idx[inner] = 0;
    // Advance the odometer over the outer loops.
    for (int64_t l = numLoops - 2; l >= 0; --l) {
      if (++idx[l] < ranges[l]) {
        for (int32_t k = 0; k < numOperands; ++k)
          offsets[k] += acc[k].loopStrides[l];
        break;
      }
      for (int32_t k = 0; k < numOperands; ++k)
        offsets[k] -= acc[k].loopStrides[l] * (ranges[l] - 1);
      idx[l] = 0;
    }
  }
}
