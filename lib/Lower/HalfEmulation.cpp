//===- HalfEmulation.cpp - bf16/f16 loop nests as f32 code ----------------===//

#include "HalfEmulation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace autoshard;

bool autoshard::isHalfType(Type type) { return type.isBF16() || type.isF16(); }

namespace {

bool hasHalf(TypeRange types) {
  return llvm::any_of(
      types, [](Type t) { return isHalfType(getElementTypeOrSelf(t)); });
}

/// Exact on f32 values that are bf16/f16 values: the result is one of them
/// or its negation or absolute value.
bool isExactInF32(Operation *op) {
  return isa<arith::ConstantOp, arith::SelectOp, arith::NegFOp, math::AbsFOp,
             arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
             arith::MinNumFOp, arith::CmpFOp, arith::FPToSIOp, arith::FPToUIOp>(
      op);
}

/// Correctly rounded in f32, so one more rounding to bf16/f16 equals the
/// interpreter's double op rounded once (f32 has >= 2p + 2 bits).
bool isRoundedInF32(Operation *op) {
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::RemFOp, math::SqrtOp>(op);
}

/// Computed in f64 and rounded from double, as the interpreter does.
bool isRoundedFromF64(Operation *op) {
  return isa<math::MathDialect>(op->getDialect()) ||
         isa<arith::SIToFPOp, arith::UIToFPOp>(op);
}

class HalfEmulator {
public:
  explicit HalfEmulator(MLIRContext *ctx) : b(ctx) {}

  LogicalResult run(func::FuncOp fn);

private:
  Value i32(Location loc, uint32_t v) {
    return arith::ConstantOp::create(
        b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)));
  }
  Type f32Type() { return b.getF32Type(); }
  Value f32(Location loc, float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value shr(Location loc, Value x, uint32_t n) {
    return arith::ShRUIOp::create(b, loc, x, i32(loc, n));
  }
  Value shl(Location loc, Value x, uint32_t n) {
    return arith::ShLIOp::create(b, loc, x, i32(loc, n));
  }
  Value andi(Location loc, Value x, uint32_t m) {
    return arith::AndIOp::create(b, loc, x, i32(loc, m));
  }
  Value ori(Location loc, Value x, Value y) {
    return arith::OrIOp::create(b, loc, x, y);
  }
  Value add(Location loc, Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value cmp(Location loc, arith::CmpIPredicate p, Value x, uint32_t c) {
    return arith::CmpIOp::create(b, loc, p, x, i32(loc, c));
  }
  Value select(Location loc, Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }

  Value widen(Location loc, Value bits, Type half);
  Value widenF16(Location loc, Value h);
  Value narrow(Location loc, Value f32, Type half);
  Value narrowF16(Location loc, Value u);
  Value narrowF64(Location loc, Value f64, Type half);
  Value roundToOdd(Location loc, Value f64);
  LogicalResult rewrite(Operation *op);
  /// `op`'s kind on `operands` with result type `type`.
  Value createLike(Operation *op, ValueRange operands, Type type);
  Value get(Value v) { return wide.lookup(v) ? wide.lookup(v) : v; }

  OpBuilder b;
  /// bf16/f16 values (and their i16 storage) -> their value in f32.
  DenseMap<Value, Value> wide;
  /// bf16/f16 values -> their i16 pattern, where one was computed (a store
  /// then does not narrow the widened value again).
  DenseMap<Value, Value> bits;
  SmallVector<Operation *> dead;
};

/// Half.h's bf16ToFloat / f16ToFloat on an i16 pattern.
Value HalfEmulator::widen(Location loc, Value bits, Type half) {
  Value h = arith::ExtUIOp::create(b, loc, b.getI32Type(), bits);
  Value u = half.isBF16() ? shl(loc, h, 16) : widenF16(loc, h);
  return arith::BitcastOp::create(b, loc, b.getF32Type(), u);
}

Value HalfEmulator::widenF16(Location loc, Value h) {
  Value sign = shl(loc, andi(loc, h, 0x8000u), 16);
  Value exp = andi(loc, shr(loc, h, 10), 0x1fu);
  Value mant = andi(loc, h, 0x3ffu);
  Value mant13 = shl(loc, mant, 13);
  Value normal = ori(
      loc, sign, ori(loc, shl(loc, add(loc, exp, i32(loc, 112)), 23), mant13));
  Value infNaN = ori(loc, sign, ori(loc, i32(loc, 0x7f800000u), mant13));
  // A subnormal m * 2^-24 is exact in f32: convert m and scale.
  Value m = arith::SIToFPOp::create(b, loc, b.getF32Type(), mant);
  Value scaled = arith::MulFOp::create(b, loc, m, f32(loc, 0x1p-24f));
  Value sub =
      ori(loc, sign, arith::BitcastOp::create(b, loc, b.getI32Type(), scaled));
  Value isSub = cmp(loc, arith::CmpIPredicate::eq, exp, 0);
  Value isInfNaN = cmp(loc, arith::CmpIPredicate::eq, exp, 0x1f);
  return select(loc, isInfNaN, infNaN, select(loc, isSub, sub, normal));
}

/// Half.h's floatToBF16 / floatToF16: round to nearest even, NaN quieted.
Value HalfEmulator::narrow(Location loc, Value f32, Type half) {
  Value u = arith::BitcastOp::create(b, loc, b.getI32Type(), f32);
  Value r;
  if (half.isBF16()) {
    Value isNaN = cmp(loc, arith::CmpIPredicate::sgt, andi(loc, u, 0x7fffffffu),
                      0x7f800000u);
    Value nan = ori(loc, shr(loc, u, 16), i32(loc, 0x40u));
    Value lsb = andi(loc, shr(loc, u, 16), 1u);
    Value rounded = shr(loc, add(loc, add(loc, u, i32(loc, 0x7fffu)), lsb), 16);
    r = select(loc, isNaN, nan, rounded);
  } else {
    r = narrowF16(loc, u);
  }
  return arith::TruncIOp::create(b, loc, b.getI16Type(), r);
}

Value HalfEmulator::narrowF16(Location loc, Value u) {
  using P = arith::CmpIPredicate;
  Value sign = andi(loc, shr(loc, u, 16), 0x8000u);
  Value a = andi(loc, u, 0x7fffffffu);
  Value nan =
      ori(loc, sign,
          ori(loc, i32(loc, 0x7e00u), andi(loc, shr(loc, a, 13), 0x3ffu)));
  Value inf = ori(loc, sign, i32(loc, 0x7c00u));
  // Normal: rebias 127 -> 15 and round off 13 bits.
  Value r = arith::SubIOp::create(b, loc, a, i32(loc, 112u << 23));
  Value lsb = andi(loc, shr(loc, r, 13), 1u);
  Value normal = ori(
      loc, sign, shr(loc, add(loc, add(loc, r, i32(loc, 0xfffu)), lsb), 13));
  // Subnormal or zero: round(|f| * 2^24) to an integer, ties to even. The
  // scaling is exact, and adding then subtracting 2^23 in f32 rounds a value
  // below 2^23 to an integer the IEEE way: the same result as Half.h's
  // shifts, in fewer vector ops. Other lanes are clamped to 2^-14 so the
  // conversion stays in range.
  Value tiny = arith::BitcastOp::create(
      b, loc, f32Type(),
      arith::MinSIOp::create(b, loc, a, i32(loc, 0x38800000u)));
  Value scaled = arith::MulFOp::create(b, loc, tiny, f32(loc, 0x1p24f));
  Value magic = f32(loc, 0x1p23f);
  Value rounded = arith::SubFOp::create(
      b, loc, arith::AddFOp::create(b, loc, scaled, magic), magic);
  Value sub =
      ori(loc, sign, arith::FPToSIOp::create(b, loc, b.getI32Type(), rounded));
  // a >= 0 as an i32: signed compares (x86 has no unsigned vector ones).
  Value isNaN = cmp(loc, P::sgt, a, 0x7f800000u);
  Value isInf = cmp(loc, P::sge, a, 0x477ff000u);
  Value isNormal = cmp(loc, P::sge, a, 0x38800000u);
  return select(loc, isNaN, nan,
                select(loc, isInf, inf, select(loc, isNormal, normal, sub)));
}

/// Half.h's doubleToFloatRoundToOdd: f32 towards zero, lowest bit set when
/// inexact, so the next rounding to bf16/f16 is not a double rounding.
Value HalfEmulator::roundToOdd(Location loc, Value d) {
  Value f = arith::TruncFOp::create(b, loc, b.getF32Type(), d);
  Value back = arith::ExtFOp::create(b, loc, b.getF64Type(), f);
  Value keep =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UEQ, back, d);
  Value away = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                     math::AbsFOp::create(b, loc, back),
                                     math::AbsFOp::create(b, loc, d));
  Value u = arith::BitcastOp::create(b, loc, b.getI32Type(), f);
  Value stepped =
      select(loc, away, arith::SubIOp::create(b, loc, u, i32(loc, 1)), u);
  Value odd = arith::BitcastOp::create(b, loc, b.getF32Type(),
                                       ori(loc, stepped, i32(loc, 1)));
  return select(loc, keep, f, odd);
}

Value HalfEmulator::narrowF64(Location loc, Value f64, Type half) {
  return narrow(loc, roundToOdd(loc, f64), half);
}

Value HalfEmulator::createLike(Operation *op, ValueRange operands, Type type) {
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(operands);
  state.addTypes(type);
  state.addAttributes(op->getAttrs());
  return b.create(state)->getResult(0);
}

LogicalResult HalfEmulator::rewrite(Operation *op) {
  Location loc = op->getLoc();
  if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
    Block &body = generic.getRegion().front();
    b.setInsertionPointToStart(&body);
    for (BlockArgument arg : body.getArguments()) {
      Type t = arg.getType();
      if (!isHalfType(t))
        continue;
      arg.setType(b.getI16Type());
      wide[arg] = widen(loc, arg, t);
      bits[arg] = arg;
    }
    return success();
  }
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    Type t = load.getType();
    if (!isHalfType(t))
      return success();
    load.getResult().setType(b.getI16Type());
    b.setInsertionPointAfter(load);
    wide[load] = widen(loc, load, t);
    bits[load] = load;
    return success();
  }
  b.setInsertionPoint(op);
  if (auto yield = dyn_cast<linalg::YieldOp>(op)) {
    for (OpOperand &o : yield->getOpOperands())
      if (Type t = o.get().getType(); isHalfType(t))
        o.set(bits.count(o.get()) ? bits.lookup(o.get())
                                  : narrow(loc, get(o.get()), t));
    return success();
  }
  // Block arguments and loads are i16 already: look at the map.
  bool readsHalf = llvm::any_of(op->getOperands(),
                                [&](Value v) { return wide.contains(v); });
  if (!readsHalf && !hasHalf(op->getResultTypes()))
    return success();
  if (op->getNumResults() != 1)
    return op->emitError("bf16/f16 op not compiled");
  SmallVector<Value> operands =
      llvm::map_to_vector(op->getOperands(), [&](Value v) { return get(v); });
  Type resultType = op->getResult(0).getType();
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  Value result, resultBits;
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    APFloat v = cast<FloatAttr>(c.getValue()).getValue();
    bool lost = false;
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    result = arith::ConstantOp::create(b, loc,
                                       b.getF32FloatAttr(v.convertToFloat()));
  } else if (isa<arith::ExtFOp>(op)) {
    result = resultType.isF32()
                 ? operands[0]
                 : arith::ExtFOp::create(b, loc, resultType, operands[0])
                       .getResult();
  } else if (isa<arith::TruncFOp>(op)) {
    resultBits = operands[0].getType().isF64()
                     ? narrowF64(loc, operands[0], resultType)
                     : narrow(loc, operands[0], resultType);
    result = widen(loc, resultBits, resultType);
  } else if (isExactInF32(op)) {
    result =
        createLike(op, operands, isHalfType(resultType) ? f32 : resultType);
  } else if (isRoundedInF32(op)) {
    Value r = createLike(op, operands, f32);
    resultBits = narrow(loc, r, resultType);
    result = widen(loc, resultBits, resultType);
  } else {
    if (!isRoundedFromF64(op))
      return op->emitError("bf16/f16 op not compiled");
    for (Value &v : operands)
      if (v.getType().isF32())
        v = arith::ExtFOp::create(b, loc, f64, v);
    Value r = createLike(op, operands, f64);
    resultBits = narrowF64(loc, r, resultType);
    result = widen(loc, resultBits, resultType);
  }
  if (isHalfType(resultType)) {
    wide[op->getResult(0)] = result;
    if (resultBits)
      bits[op->getResult(0)] = resultBits;
  } else {
    op->getResult(0).replaceAllUsesWith(result);
  }
  dead.push_back(op);
  return success();
}

LogicalResult HalfEmulator::run(func::FuncOp fn) {
  // Storage: the runtime passes bf16/f16 buffers as their 16-bit patterns.
  SmallVector<Type> argTypes;
  for (BlockArgument arg : fn.getArguments()) {
    auto memref = dyn_cast<MemRefType>(arg.getType());
    if (memref && isHalfType(memref.getElementType()))
      arg.setType(MemRefType::get(memref.getShape(), b.getI16Type()));
    argTypes.push_back(arg.getType());
  }
  fn.setType(b.getFunctionType(argTypes, {}));
  // Pre-order: a generic's block arguments are widened before its body.
  SmallVector<Operation *> ops;
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op != fn)
      ops.push_back(op);
  });
  for (Operation *op : ops)
    if (failed(rewrite(op)))
      return failure();
  for (Operation *op : dead)
    op->dropAllReferences();
  for (Operation *op : llvm::reverse(dead))
    op->erase();
  return success();
}

} // namespace

bool autoshard::canEmulateHalf(Operation *op) {
  if (!hasHalf(op->getOperandTypes()) && !hasHalf(op->getResultTypes()))
    return true;
  if (isa<linalg::YieldOp>(op))
    return true;
  if (op->getNumResults() != 1)
    return false;
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return isa<FloatAttr>(c.getValue());
  if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
    std::optional<arith::RoundingMode> mode = trunc.getRoundingmode();
    return (!mode || *mode == arith::RoundingMode::to_nearest_even) &&
           isHalfType(getElementTypeOrSelf(trunc.getType()));
  }
  if (isa<arith::ExtFOp>(op))
    return isHalfType(getElementTypeOrSelf(op->getOperand(0).getType()));
  if (isExactInF32(op) || isRoundedInF32(op))
    return true;
  // f64 math on a bf16/f16 result (an i1 result, say math.isnan, is not).
  return isRoundedFromF64(op) &&
         isHalfType(getElementTypeOrSelf(op->getResult(0).getType()));
}

LogicalResult autoshard::emulateHalfTypes(func::FuncOp fn) {
  return HalfEmulator(fn.getContext()).run(fn);
}
