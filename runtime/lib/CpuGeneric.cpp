//===- CpuGeneric.cpp - Loop-nest + scalar bytecode evaluator -------------===//
//
// Evaluates a GenericSpec on host tensors. Each operand's affine map is
// folded into one linear function of the loop indices (a stride per loop
// and a base), so walking the iteration space is an odometer that adds
// strides; the body is a register bytecode interpreted per point.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include <cmath>
#include <cstring>

using namespace autoshard::rt;

namespace {
union Reg {
  double f;
  int64_t i;
};

double roundTo(double v, DType t) {
  return t == DType::F32 ? static_cast<double>(static_cast<float>(v)) : v;
}

int64_t wrapTo(int64_t v, DType t) {
  switch (t) {
  case DType::I32:
    return static_cast<int32_t>(v);
  case DType::I1:
    return v & 1;
  default:
    return v;
  }
}

uint64_t asUnsigned(int64_t v, DType t) {
  switch (t) {
  case DType::I32:
    return static_cast<uint32_t>(v);
  case DType::I1:
    return static_cast<uint64_t>(v & 1);
  default:
    return static_cast<uint64_t>(v);
  }
}

Reg load(const uint8_t *base, int64_t offset, DType t) {
  Reg r;
  switch (t) {
  case DType::F32:
    r.f = reinterpret_cast<const float *>(base)[offset];
    break;
  case DType::F64:
    r.f = reinterpret_cast<const double *>(base)[offset];
    break;
  case DType::I32:
    r.i = reinterpret_cast<const int32_t *>(base)[offset];
    break;
  case DType::I64:
    r.i = reinterpret_cast<const int64_t *>(base)[offset];
    break;
  case DType::I1:
    r.i = base[offset] != 0;
    break;
  }
  return r;
}

void store(uint8_t *base, int64_t offset, DType t, Reg r) {
  switch (t) {
  case DType::F32:
    reinterpret_cast<float *>(base)[offset] = static_cast<float>(r.f);
    break;
  case DType::F64:
    reinterpret_cast<double *>(base)[offset] = r.f;
    break;
  case DType::I32:
    reinterpret_cast<int32_t *>(base)[offset] = static_cast<int32_t>(r.i);
    break;
  case DType::I64:
    reinterpret_cast<int64_t *>(base)[offset] = r.i;
    break;
  case DType::I1:
    base[offset] = (r.i & 1) != 0;
    break;
  }
}

bool cmpF(int64_t pred, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (pred) {
  case 0:
    return false;
  case 1:
    return !unordered && a == b;
  case 2:
    return !unordered && a > b;
  case 3:
    return !unordered && a >= b;
  case 4:
    return !unordered && a < b;
  case 5:
    return !unordered && a <= b;
  case 6:
    return !unordered && a != b;
  case 7:
    return !unordered;
  case 8:
    return unordered || a == b;
  case 9:
    return unordered || a > b;
  case 10:
    return unordered || a >= b;
  case 11:
    return unordered || a < b;
  case 12:
    return unordered || a <= b;
  case 13:
    return unordered || a != b;
  case 14:
    return unordered;
  default:
    return true;
  }
}

bool cmpI(int64_t pred, int64_t a, int64_t b, DType t) {
  uint64_t ua = asUnsigned(a, t), ub = asUnsigned(b, t);
  switch (pred) {
  case 0:
    return a == b;
  case 1:
    return a != b;
  case 2:
    return a < b;
  case 3:
    return a <= b;
  case 4:
    return a > b;
  case 5:
    return a >= b;
  case 6:
    return ua < ub;
  case 7:
    return ua <= ub;
  case 8:
    return ua > ub;
  default:
    return ua >= ub;
  }
}

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

class Interpreter {
public:
  Interpreter(const GenericSpec &spec,
              const std::vector<const Tensor *> &captures)
      : spec(spec), captures(captures), regs(spec.numRegs) {}

  Reg *getRegs() { return regs.data(); }

  void run(const int64_t *loopIdx) {
    Reg *r = regs.data();
    for (const ScalarInst &in : spec.body) {
      Reg &d = r[in.dst];
      const Reg a = in.a >= 0 ? r[in.a] : Reg{0};
      const Reg b = in.b >= 0 ? r[in.b] : Reg{0};
      bool fl = isFloatDType(in.type);
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
        const Tensor &t = *captures[in.imm];
        int64_t offset = 0;
        for (size_t k = 0; k < in.args.size(); ++k) {
          int64_t ix = r[in.args[k]].i;
          if (ix < 0 || ix >= t.getDim(k))
            throw Error("tensor.extract index " + std::to_string(ix) +
                        " out of bounds for dim " + std::to_string(k) +
                        " of " + t.getTypeString());
          offset = offset * t.getDim(k) + ix;
        }
        Reg v = load(static_cast<const uint8_t *>(t.getRawData()), offset,
                     t.getDType());
        // Captured element types match the result type by construction.
        d = v;
        break;
      }
      case ScalarOp::Add:
        if (fl)
          d.f = roundTo(a.f + b.f, in.type);
        else
          d.i = wrapTo(static_cast<int64_t>(static_cast<uint64_t>(a.i) +
                                            static_cast<uint64_t>(b.i)),
                       in.type);
        break;
      case ScalarOp::Sub:
        if (fl)
          d.f = roundTo(a.f - b.f, in.type);
        else
          d.i = wrapTo(static_cast<int64_t>(static_cast<uint64_t>(a.i) -
                                            static_cast<uint64_t>(b.i)),
                       in.type);
        break;
      case ScalarOp::Mul:
        if (fl)
          d.f = roundTo(a.f * b.f, in.type);
        else
          d.i = wrapTo(static_cast<int64_t>(static_cast<uint64_t>(a.i) *
                                            static_cast<uint64_t>(b.i)),
                       in.type);
        break;
      case ScalarOp::Div:
        if (fl) {
          d.f = roundTo(a.f / b.f, in.type);
        } else {
          if (b.i == 0)
            throw Error("integer division by zero");
          d.i = wrapTo(a.i / b.i, in.type);
        }
        break;
      case ScalarOp::Rem:
        if (fl) {
          d.f = roundTo(std::fmod(a.f, b.f), in.type);
        } else {
          if (b.i == 0)
            throw Error("integer remainder by zero");
          d.i = wrapTo(a.i % b.i, in.type);
        }
        break;
      case ScalarOp::DivU:
      case ScalarOp::RemU: {
        uint64_t ua = asUnsigned(a.i, in.type), ub = asUnsigned(b.i, in.type);
        if (ub == 0)
          throw Error("integer division by zero");
        d.i = wrapTo(static_cast<int64_t>(in.op == ScalarOp::DivU ? ua / ub
                                                                   : ua % ub),
                     in.type);
        break;
      }
      case ScalarOp::Max:
        if (fl)
          d.f = (std::isnan(a.f) || std::isnan(b.f)) ? NAN
                                                     : std::max(a.f, b.f);
        else
          d.i = std::max(a.i, b.i);
        break;
      case ScalarOp::Min:
        if (fl)
          d.f = (std::isnan(a.f) || std::isnan(b.f)) ? NAN
                                                     : std::min(a.f, b.f);
        else
          d.i = std::min(a.i, b.i);
        break;
      case ScalarOp::MaxU:
        d.i = asUnsigned(a.i, in.type) >= asUnsigned(b.i, in.type) ? a.i : b.i;
        break;
      case ScalarOp::MinU:
        d.i = asUnsigned(a.i, in.type) <= asUnsigned(b.i, in.type) ? a.i : b.i;
        break;
      case ScalarOp::MaxNum:
        d.f = std::fmax(a.f, b.f);
        break;
      case ScalarOp::MinNum:
        d.f = std::fmin(a.f, b.f);
        break;
      case ScalarOp::Neg:
        if (fl)
          d.f = -a.f;
        else
          d.i = wrapTo(-a.i, in.type);
        break;
      case ScalarOp::Abs:
        if (fl)
          d.f = std::fabs(a.f);
        else
          d.i = wrapTo(a.i < 0 ? -a.i : a.i, in.type);
        break;
      case ScalarOp::And:
        d.i = a.i & b.i;
        break;
      case ScalarOp::Or:
        d.i = a.i | b.i;
        break;
      case ScalarOp::Xor:
        d.i = wrapTo(a.i ^ b.i, in.type);
        break;
      case ScalarOp::Shl:
        d.i = wrapTo(static_cast<int64_t>(static_cast<uint64_t>(a.i)
                                          << (b.i & 63)),
                     in.type);
        break;
      case ScalarOp::ShrS:
        d.i = a.i >> (b.i & 63);
        break;
      case ScalarOp::ShrU:
        d.i = wrapTo(
            static_cast<int64_t>(asUnsigned(a.i, in.type) >> (b.i & 63)),
            in.type);
        break;
#define UNARY(OP, FN)                                                          \
  case ScalarOp::OP:                                                           \
    d.f = roundTo(FN(a.f), in.type);                                           \
    break;
        UNARY(Exp, std::exp)
        UNARY(Exp2, std::exp2)
        UNARY(Expm1, std::expm1)
        UNARY(Log, std::log)
        UNARY(Log2, std::log2)
        UNARY(Log1p, std::log1p)
        UNARY(Sqrt, std::sqrt)
        UNARY(Tanh, std::tanh)
        UNARY(Sin, std::sin)
        UNARY(Cos, std::cos)
        UNARY(Tan, std::tan)
        UNARY(Erf, std::erf)
        UNARY(Atan, std::atan)
        UNARY(Floor, std::floor)
        UNARY(Ceil, std::ceil)
        UNARY(Round, std::round)
        UNARY(RoundEven, std::nearbyint)
        UNARY(Trunc, std::trunc)
#undef UNARY
      case ScalarOp::Rsqrt:
        d.f = roundTo(1.0 / std::sqrt(a.f), in.type);
        break;
      case ScalarOp::Atan2:
        d.f = roundTo(std::atan2(a.f, b.f), in.type);
        break;
      case ScalarOp::Pow:
        d.f = roundTo(std::pow(a.f, b.f), in.type);
        break;
      case ScalarOp::Fma:
        d.f = roundTo(std::fma(a.f, b.f, r[in.c].f), in.type);
        break;
      case ScalarOp::CmpF:
        d.i = cmpF(in.imm, a.f, b.f);
        break;
      case ScalarOp::CmpI:
        d.i = cmpI(in.imm, a.i, b.i, in.srcType);
        break;
      case ScalarOp::Select:
        d = (a.i & 1) ? b : r[in.c];
        break;
      case ScalarOp::IToF:
        d.f = roundTo(static_cast<double>(a.i), in.type);
        break;
      case ScalarOp::UIToF:
        d.f = roundTo(static_cast<double>(asUnsigned(a.i, in.srcType)),
                      in.type);
        break;
      case ScalarOp::FToI:
      case ScalarOp::FToUI:
        // Out-of-range conversions are poison in MLIR; saturate instead of
        // invoking C++ undefined behaviour.
        if (std::isnan(a.f))
          d.i = 0;
        else if (a.f >= 9.2e18)
          d.i = INT64_MAX;
        else if (a.f <= -9.2e18)
          d.i = INT64_MIN;
        else
          d.i = wrapTo(static_cast<int64_t>(a.f), in.type);
        break;
      case ScalarOp::FCast:
        d.f = roundTo(a.f, in.type);
        break;
      case ScalarOp::ICast:
        d.i = wrapTo(a.i, in.type);
        break;
      case ScalarOp::ZExt:
        d.i = wrapTo(static_cast<int64_t>(asUnsigned(a.i, in.srcType)),
                     in.type);
        break;
      }
    }
  }

private:
  const GenericSpec &spec;
  const std::vector<const Tensor *> &captures;
  std::vector<Reg> regs;
};
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

  const std::vector<int64_t> &ranges = spec.loopRanges;
  int64_t numLoops = static_cast<int64_t>(ranges.size());
  int64_t total = 1;
  for (int64_t r : ranges) {
    if (r < 0)
      throw Error("generic: negative loop range");
    total *= r;
  }
  int32_t numOperands = spec.numInputs + spec.numOutputs;
  std::vector<LinearAccess> acc;
  for (int32_t k = 0; k < numOperands; ++k) {
    const Tensor &t = k < spec.numInputs ? *inputs[k]
                                         : *outputs[k - spec.numInputs];
    acc.push_back(foldMap(spec.maps[k], t, ranges, k));
  }
  if (total == 0)
    return;

  Interpreter interp(spec, captures);
  Reg *regs = interp.getRegs();
  std::vector<int64_t> idx(numLoops, 0);
  std::vector<int64_t> offsets(numOperands);
  for (int32_t k = 0; k < numOperands; ++k)
    offsets[k] = acc[k].base;

  for (int64_t point = 0; point < total; ++point) {
    for (int32_t k = 0; k < numOperands; ++k)
      regs[k] = load(acc[k].data, offsets[k], acc[k].type);
    interp.run(idx.data());
    for (int32_t o = 0; o < spec.numOutputs; ++o) {
      int32_t k = spec.numInputs + o;
      store(const_cast<uint8_t *>(acc[k].data), offsets[k], acc[k].type,
            regs[spec.yields[o]]);
    }
    // Advance the odometer (innermost loop fastest).
    for (int64_t l = numLoops - 1; l >= 0; --l) {
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
