//===- OnnxMathOps.cpp - Elementwise ONNX ops beyond the core set ---------===//
//
// Unary math (rounding, trigonometry, activations), logic and comparisons,
// the variadic Min/Max/Sum/Mean and Clip: each one numpy-broadcasting
// linalg.generic whose body uses only arith/math ops the runtime evaluates
// (functions it lacks, e.g. asin or sinh, are composed from exp/log/atan2).
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace autoshard::onnx_import;

namespace {

/// Scalar builders for one generic body.
struct Sc {
  OpBuilder &b;
  Location l;
  Type t;
  bool isF() const { return isa<FloatType>(t); }
  Value c(double v) const {
    if (isF())
      return arith::ConstantOp::create(b, l, b.getFloatAttr(t, v));
    return arith::ConstantOp::create(b, l,
                                     b.getIntegerAttr(t, int64_t(v)));
  }
  Value add(Value x, Value y) const {
    return floatOrInt<arith::AddFOp, arith::AddIOp>(b, l, x, y);
  }
  Value sub(Value x, Value y) const {
    return floatOrInt<arith::SubFOp, arith::SubIOp>(b, l, x, y);
  }
  Value mul(Value x, Value y) const {
    return floatOrInt<arith::MulFOp, arith::MulIOp>(b, l, x, y);
  }
  Value div(Value x, Value y) const { return arith::DivFOp::create(b, l, x, y); }
  Value exp(Value x) const { return math::ExpOp::create(b, l, x); }
  Value log(Value x) const { return math::LogOp::create(b, l, x); }
  Value sqrt(Value x) const { return math::SqrtOp::create(b, l, x); }
  Value max(Value x, Value y) const {
    return floatOrInt<arith::MaximumFOp, arith::MaxSIOp>(b, l, x, y);
  }
  Value min(Value x, Value y) const {
    return floatOrInt<arith::MinimumFOp, arith::MinSIOp>(b, l, x, y);
  }
  Value cmp(arith::CmpFPredicate fp, arith::CmpIPredicate ip, Value x,
            Value y) const {
    return isF() ? Value(arith::CmpFOp::create(b, l, fp, x, y))
                 : Value(arith::CmpIOp::create(b, l, ip, x, y));
  }
  Value sel(Value c, Value x, Value y) const {
    return arith::SelectOp::create(b, l, c, x, y);
  }
};

bool isFloatOnly(StringRef op) {
  static const char *kIntOk[] = {"Sign", "Not", "Floor", "Ceil", "Round"};
  for (const char *o : kIntOk)
    if (op == o)
      return false;
  return true;
}

/// The body of a one-input op (attributes read by the caller into `alpha`,
/// `beta`, `gamma`).
Value unaryBody(const Sc &s, StringRef op, Value x, double alpha, double beta,
                double gamma) {
  OpBuilder &b = s.b;
  Location l = s.l;
  using FP = arith::CmpFPredicate;
  using IP = arith::CmpIPredicate;
  if (op == "Floor")
    return s.isF() ? Value(math::FloorOp::create(b, l, x)) : x;
  if (op == "Ceil")
    return s.isF() ? Value(math::CeilOp::create(b, l, x)) : x;
  if (op == "Round") // half to even, as numpy and ONNX
    return s.isF() ? Value(math::RoundEvenOp::create(b, l, x)) : x;
  if (op == "Sign") {
    Value zero = s.c(0);
    Value pos = s.sel(s.cmp(FP::OGT, IP::sgt, x, zero), s.c(1), zero);
    return s.sel(s.cmp(FP::OLT, IP::slt, x, zero), s.c(-1), pos);
  }
  if (op == "Not")
    return arith::XOrIOp::create(
        b, l, x, arith::ConstantOp::create(b, l, b.getIntegerAttr(s.t, 1)));
  if (op == "IsNaN")
    return arith::CmpFOp::create(b, l, FP::UNO, x, x);
  if (op == "IsInf") {
    Value inf = s.c(std::numeric_limits<double>::infinity());
    Value ninf = s.c(-std::numeric_limits<double>::infinity());
    Value p = arith::CmpFOp::create(b, l, FP::OEQ, x, inf);
    Value n = arith::CmpFOp::create(b, l, FP::OEQ, x, ninf);
    Value f = arith::ConstantOp::create(b, l, b.getBoolAttr(false));
    return arith::OrIOp::create(b, l, alpha != 0 ? p : f, beta != 0 ? n : f);
  }
  if (op == "Sin")
    return math::SinOp::create(b, l, x);
  if (op == "Cos")
    return math::CosOp::create(b, l, x);
  if (op == "Tan")
    return math::TanOp::create(b, l, x);
  if (op == "Atan")
    return math::AtanOp::create(b, l, x);
  Value one = s.c(1);
  if (op == "Asin" || op == "Acos") {
    Value r = s.sqrt(s.sub(one, s.mul(x, x)));
    return op == "Asin" ? Value(math::Atan2Op::create(b, l, x, r))
                        : Value(math::Atan2Op::create(b, l, r, x));
  }
  if (op == "Sinh" || op == "Cosh") {
    Value e = s.exp(x), ne = s.exp(arith::NegFOp::create(b, l, x));
    return s.mul(s.c(0.5), op == "Sinh" ? s.sub(e, ne) : s.add(e, ne));
  }
  if (op == "Asinh")
    return s.log(s.add(x, s.sqrt(s.add(s.mul(x, x), one))));
  if (op == "Acosh")
    return s.log(s.add(x, s.sqrt(s.sub(s.mul(x, x), one))));
  if (op == "Atanh")
    return s.mul(s.c(0.5), s.log(s.div(s.add(one, x), s.sub(one, x))));
  Value zero = s.c(0);
  if (op == "Softplus")
    return s.log(s.add(s.exp(x), one));
  if (op == "Softsign")
    return s.div(x, s.add(one, math::AbsFOp::create(b, l, x)));
  if (op == "Elu" || op == "Celu") {
    // Celu: max(0,x) + min(0, alpha*(exp(x/alpha)-1)); Elu: alpha*(exp(x)-1).
    Value ex = op == "Celu" ? s.exp(s.div(x, s.c(alpha))) : s.exp(x);
    Value neg = s.mul(s.c(alpha), s.sub(ex, one));
    return s.sel(s.cmp(FP::OGT, IP::sgt, x, zero), x,
                 op == "Celu" ? s.min(zero, neg) : neg);
  }
  if (op == "Selu") {
    Value neg = s.sub(s.mul(s.c(alpha), s.exp(x)), s.c(alpha));
    return s.mul(s.c(gamma), s.sel(s.cmp(FP::OGT, IP::sgt, x, zero), x, neg));
  }
  if (op == "LeakyRelu")
    return s.sel(s.cmp(FP::OLT, IP::slt, x, zero), s.mul(s.c(alpha), x), x);
  if (op == "ThresholdedRelu")
    return s.sel(s.cmp(FP::OGT, IP::sgt, x, s.c(alpha)), x, zero);
  if (op == "HardSigmoid" || op == "HardSwish") {
    Value h = s.max(zero, s.min(one, s.add(s.mul(s.c(alpha), x), s.c(beta))));
    return op == "HardSigmoid" ? h : s.mul(x, h);
  }
  if (op == "Mish") {
    Value sp = s.log(s.add(s.exp(x), one));
    return s.mul(x, math::TanhOp::create(b, l, sp));
  }
  if (op == "Gelu") {
    if (alpha != 0) { // approximate = "tanh"
      Value inner = s.mul(s.c(std::sqrt(2.0 / M_PI)),
                          s.add(x, s.mul(s.c(0.044715), s.mul(x, s.mul(x, x)))));
      return s.mul(s.mul(s.c(0.5), x),
                   s.add(one, math::TanhOp::create(b, l, inner)));
    }
    Value erf = math::ErfOp::create(b, l, s.mul(x, s.c(M_SQRT1_2)));
    return s.mul(s.mul(s.c(0.5), x), s.add(one, erf));
  }
  if (op == "Shrink") { // alpha = bias, beta = lambd
    Value lo = s.cmp(FP::OLT, IP::slt, x, s.c(-beta));
    Value hi = s.cmp(FP::OGT, IP::sgt, x, s.c(beta));
    return s.sel(lo, s.add(x, s.c(alpha)),
                 s.sel(hi, s.sub(x, s.c(alpha)), zero));
  }
  llvm_unreachable("unhandled unary op");
}

LogicalResult convertUnary(NodeImporter &n, StringRef op) {
  ElemKind kind = n.in(0).kind;
  if (isFloatOnly(op) && !isFloatKind(kind))
    return n.error() << "expects a float input";
  if (op == "Not" && kind != ElemKind::Bool)
    return n.error() << "expects a bool input";
  double alpha = 0, beta = 0, gamma = 0;
  if (op == "Elu" || op == "Celu")
    alpha = n.attrFloat("alpha", 1.0f);
  else if (op == "Selu")
    alpha = n.attrFloat("alpha", 1.67326319217681884765625f),
    gamma = n.attrFloat("gamma", 1.05070102214813232421875f);
  else if (op == "LeakyRelu")
    alpha = n.attrFloat("alpha", 0.01f);
  else if (op == "ThresholdedRelu")
    alpha = n.attrFloat("alpha", 1.0f);
  else if (op == "HardSigmoid")
    alpha = n.attrFloat("alpha", 0.2f), beta = n.attrFloat("beta", 0.5f);
  else if (op == "HardSwish")
    alpha = 1.0 / 6, beta = 0.5;
  else if (op == "IsInf")
    alpha = n.attrInt("detect_positive", 1), beta = n.attrInt("detect_negative", 1);
  else if (op == "Shrink")
    alpha = n.attrFloat("bias", 0.0f), beta = n.attrFloat("lambd", 0.5f);
  else if (op == "Gelu")
    alpha = n.attr("approximate") && n.attr("approximate")->s() == "tanh";
  bool toBool = op == "IsNaN" || op == "IsInf";
  ElemKind outKind = toBool ? ElemKind::Bool : kind;
  FailureOr<Value> r = n.elementwise(
      {0}, outKind, [&](OpBuilder &bb, Location l, ArrayRef<Value> a) {
        Sc s{bb, l, a[0].getType()};
        return unaryBody(s, op, a[0], alpha, beta, gamma);
      });
  if (failed(r))
    return failure();
  n.setOutput(0, *r, outKind);
  return success();
}

/// Two-input ops: logic, the comparisons core lacks, Mod, BitShift, PRelu.
LogicalResult convertBinary(NodeImporter &n, StringRef op) {
  ElemKind kind = n.in(0).kind;
  bool logic = op == "And" || op == "Or" || op == "Xor";
  if (logic && (kind != ElemKind::Bool || n.in(1).kind != ElemKind::Bool))
    return n.error() << "expects bool inputs";
  if (n.in(0).kind != n.in(1).kind)
    return n.error() << "has inputs of different element types";
  bool cmp = op == "LessOrEqual" || op == "GreaterOrEqual";
  ElemKind outKind = cmp ? ElemKind::Bool : kind;
  bool fmod = n.attrInt("fmod", 0) != 0;
  if (op == "Mod" && isFloatKind(kind) && !fmod)
    return n.error() << "fmod = 0 on a float input is invalid";
  bool left = n.attr("direction") && n.attr("direction")->s() == "LEFT";
  if (op == "BitShift" && isFloatKind(kind))
    return n.error() << "expects integer inputs";
  FailureOr<Value> r = n.elementwise(
      {0, 1}, outKind,
      [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
        Sc s{bb, l, a[0].getType()};
        Value x = a[0], y = a[1];
        using FP = arith::CmpFPredicate;
        using IP = arith::CmpIPredicate;
        if (op == "And" || op == "BitwiseAnd")
          return arith::AndIOp::create(bb, l, x, y);
        if (op == "Or" || op == "BitwiseOr")
          return arith::OrIOp::create(bb, l, x, y);
        if (op == "Xor" || op == "BitwiseXor")
          return arith::XOrIOp::create(bb, l, x, y);
        if (op == "LessOrEqual")
          return s.cmp(FP::OLE, IP::sle, x, y);
        if (op == "GreaterOrEqual")
          return s.cmp(FP::OGE, IP::sge, x, y);
        if (op == "BitShift")
          return left ? Value(arith::ShLIOp::create(bb, l, x, y))
                      : Value(arith::ShRUIOp::create(bb, l, x, y));
        if (op == "PRelu")
          return s.sel(s.cmp(FP::OLT, IP::slt, x, s.c(0)), s.mul(x, y), x);
        // Mod: fmod keeps the dividend's sign, else the divisor's (Python).
        if (s.isF())
          return arith::RemFOp::create(bb, l, x, y);
        Value rem = arith::RemSIOp::create(bb, l, x, y);
        if (fmod)
          return rem;
        Value zero = s.c(0);
        Value nz = arith::CmpIOp::create(bb, l, IP::ne, rem, zero);
        Value diff = arith::XOrIOp::create(
            bb, l, arith::CmpIOp::create(bb, l, IP::slt, rem, zero),
            arith::CmpIOp::create(bb, l, IP::slt, y, zero));
        Value fix = arith::AndIOp::create(bb, l, nz, diff);
        return s.sel(fix, s.add(rem, y), rem);
      });
  if (failed(r))
    return failure();
  n.setOutput(0, *r, outKind);
  return success();
}

LogicalResult convertBitwiseNot(NodeImporter &n, StringRef) {
  if (isFloatKind(n.in(0).kind))
    return n.error() << "expects an integer input";
  FailureOr<Value> r = n.elementwise(
      {0}, n.in(0).kind, [&](OpBuilder &bb, Location l, ArrayRef<Value> a) {
        Sc s{bb, l, a[0].getType()};
        return Value(arith::XOrIOp::create(bb, l, a[0], s.c(-1)));
      });
  if (failed(r))
    return failure();
  n.setOutput(0, *r, n.in(0).kind);
  return success();
}

/// Min, Max, Sum, Mean over any number of broadcasting inputs.
LogicalResult convertVariadic(NodeImporter &n, StringRef op) {
  std::vector<int64_t> idx(n.numInputs());
  std::iota(idx.begin(), idx.end(), 0);
  for (int64_t i : idx)
    if (!n.hasInput(i) || n.in(i).kind != n.in(0).kind)
      return n.error() << "expects inputs of one element type";
  ElemKind kind = n.in(0).kind;
  if (op == "Mean" && !isFloatKind(kind))
    return n.error() << "expects float inputs";
  FailureOr<Value> r = n.elementwise(
      idx, kind, [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
        Sc s{bb, l, a[0].getType()};
        Value acc = a[0];
        for (Value v : a.drop_front())
          acc = op == "Min"   ? s.min(acc, v)
                : op == "Max" ? s.max(acc, v)
                              : s.add(acc, v);
        if (op == "Mean")
          acc = s.div(acc, s.c(double(a.size())));
        return acc;
      });
  if (failed(r))
    return failure();
  n.setOutput(0, *r, kind);
  return success();
}

/// Clip (opset 11+: min and max are optional inputs).
LogicalResult convertClip(NodeImporter &n, StringRef) {
  ElemKind kind = n.in(0).kind;
  std::vector<int64_t> idx = {0};
  int64_t minSlot = -1, maxSlot = -1;
  for (int64_t i : {1, 2})
    if (n.hasInput(i)) {
      (i == 1 ? minSlot : maxSlot) = idx.size();
      idx.push_back(i);
    }
  // Opset < 11 spells min/max as attributes.
  const onnx::AttributeProto *minAttr = n.attr("min"), *maxAttr = n.attr("max");
  FailureOr<Value> r = n.elementwise(
      idx, kind, [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
        Sc s{bb, l, a[0].getType()};
        Value x = a[0];
        if (minSlot >= 0)
          x = s.max(x, a[minSlot]);
        else if (minAttr)
          x = s.max(x, s.c(minAttr->f()));
        if (maxSlot >= 0)
          x = s.min(x, a[maxSlot]);
        else if (maxAttr)
          x = s.min(x, s.c(maxAttr->f()));
        return x;
      });
  if (failed(r))
    return failure();
  n.setOutput(0, *r, kind);
  return success();
}

} // namespace

void autoshard::onnx_import::registerMathOps(OpTable &t) {
  for (const char *op :
       {"Floor", "Ceil", "Round", "Sign", "Not", "IsNaN", "IsInf", "Sin", "Cos",
        "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh",
        "Atanh", "Softplus", "Softsign", "Elu", "Celu", "Selu", "LeakyRelu",
        "ThresholdedRelu", "HardSigmoid", "HardSwish", "Mish", "Gelu",
        "Shrink"})
    t[op] = convertUnary;
  for (const char *op :
       {"And", "Or", "Xor", "LessOrEqual", "GreaterOrEqual", "Mod", "BitShift",
        "PRelu", "BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    t[op] = convertBinary;
  t["BitwiseNot"] = convertBitwiseNot;
  for (const char *op : {"Min", "Max", "Sum", "Mean"})
    t[op] = convertVariadic;
  t["Clip"] = convertClip;
}
