//===- InterpreterSemantics.cpp - Kernels compute the interpreter's values ===//
//
// See InterpreterSemantics.h.
//
//===----------------------------------------------------------------------===//

#include "InterpreterSemantics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

#include <cstdint>

using namespace mlir;

//===----------------------------------------------------------------------===//
// Ops that may trap
//===----------------------------------------------------------------------===//

/// Whether `v` is a constant (scalar or tensor) none of whose elements is
/// zero, nor all ones (-1) when `signedOp`.
static bool isSafeDivisor(Value v, bool signedOp) {
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  auto safe = [&](const APInt &d) {
    return !d.isZero() && !(signedOp && d.isAllOnes());
  };
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return safe(i.getValue());
  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr))
    return llvm::all_of(dense.getValues<APInt>(), safe);
  return false;
}

/// Whether native code for `op` could trap where the interpreter raises a
/// located error: an integer division or remainder by zero is SIGFPE on
/// x86 (and garbage in PTX), and so is the signed INT_MIN / -1. Only a
/// constant divisor known to be neither compiles (the ONNX importer's
/// index arithmetic divides by constant sizes); the rest stays
/// interpreted, which checks every element.
bool autoshard::mayTrap(Operation *op) {
  if (isa<arith::DivUIOp, arith::RemUIOp, arith::CeilDivUIOp>(op))
    return !isSafeDivisor(op->getOperand(1), /*signedOp=*/false);
  if (isa<arith::DivSIOp, arith::RemSIOp, arith::CeilDivSIOp,
          arith::FloorDivSIOp>(op))
    return !isSafeDivisor(op->getOperand(1), /*signedOp=*/true);
  return false;
}

//===----------------------------------------------------------------------===//
// The interpreter's values where MLIR has none
//===----------------------------------------------------------------------===//
//
// MLIR makes some results poison (a shift by >= the width, fptosi/fptoui out
// of range) and LLVM turns poison into whatever the instruction or its
// vectorised form gives (x86 masks scalar shift counts by 31 or 63, AVX2
// shifts give 0, cvttsd2si gives INT_MIN). The interpreter
// (runtime/lib/ScalarEval.h) defines them, so these rewrites make a kernel
// compute exactly its values and --kernels never changes a result. Both
// the CPU library and the PTX are built from the rewritten kernels.

/// x << / >> y as the interpreter: the count is y & 63 and the shift is done
/// on the value widened to 64 bits (sign-extended for shli/shrsi of i32, as
/// its registers hold them; zero-extended for shrui and i1, which it holds
/// as 0/1), then wrapped to the type.
static void rewriteShift(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value x = op->getOperand(0), y = op->getOperand(1);
  Type t = x.getType();
  Type i64 = b.getI64Type();
  bool wide = t.isIndex() || t.isInteger(64);
  auto mask = [&](Type type, Value v) {
    return arith::AndIOp::create(
        b, loc, v,
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 63)));
  };
  if (!wide) {
    bool zext = isa<arith::ShRUIOp>(op) || t.isInteger(1);
    x = zext ? Value(arith::ExtUIOp::create(b, loc, i64, x))
             : Value(arith::ExtSIOp::create(b, loc, i64, x));
    y = arith::ExtUIOp::create(b, loc, i64, y);
  }
  Value amount = mask(wide ? t : i64, y);
  OperationState state(loc, op->getName());
  state.addOperands({x, amount});
  state.addTypes(x.getType());
  Value r = b.create(state)->getResult(0);
  if (!wide)
    r = arith::TruncIOp::create(b, loc, t, r);
  op->getResult(0).replaceAllUsesWith(r);
  op->erase();
}

/// fptosi/fptoui as the interpreter's floatToInt: NaN 0, >= 2^64 INT64_MAX,
/// [2^63, 2^64) the unsigned value, < -2^63 INT64_MIN, else truncated;
/// computed in i64 from f64 and wrapped to the type. The unselected arms'
/// poison is harmless: select yields only the chosen operand.
static void rewriteFloatToInt(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  Value x = op->getOperand(0);
  if (!x.getType().isF64())
    x = arith::ExtFOp::create(b, loc, f64, x);
  auto fconst = [&](double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(f64, v));
  };
  auto iconst = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  };
  auto cmp = [&](arith::CmpFPredicate p, Value rhs) {
    return arith::CmpFOp::create(b, loc, p, x, rhs);
  };
  Value r = arith::FPToSIOp::create(b, loc, i64, x);
  r = arith::SelectOp::create(b, loc,
                              cmp(arith::CmpFPredicate::OLT, fconst(-0x1p63)),
                              iconst(INT64_MIN), r);
  r = arith::SelectOp::create(b, loc,
                              cmp(arith::CmpFPredicate::OGE, fconst(0x1p63)),
                              arith::FPToUIOp::create(b, loc, i64, x), r);
  r = arith::SelectOp::create(b, loc,
                              cmp(arith::CmpFPredicate::OGE, fconst(0x1p64)),
                              iconst(INT64_MAX), r);
  r = arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::UNO, x),
                              iconst(0), r);
  Type t = op->getResult(0).getType();
  if (t != i64)
    r = arith::TruncIOp::create(b, loc, t, r);
  op->getResult(0).replaceAllUsesWith(r);
  op->erase();
}

/// math.absi as arith (x < 0 ? 0 - x : x, wrapping): the libm conversion
/// of the CPU pipeline rejects it.
static void rewriteAbsI(math::AbsIOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value x = op.getOperand();
  Value zero =
      arith::ConstantOp::create(b, loc, b.getIntegerAttr(x.getType(), 0));
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
  Value r = arith::SelectOp::create(b, loc, negative,
                                    arith::SubIOp::create(b, loc, zero, x), x);
  op.getResult().replaceAllUsesWith(r);
  op.erase();
}

void autoshard::rewriteToInterpreterSemantics(func::FuncOp fn) {
  SmallVector<Operation *> ops;
  fn.walk([&](Operation *op) {
    if (isa<arith::ShLIOp, arith::ShRSIOp, arith::ShRUIOp, arith::FPToSIOp,
            arith::FPToUIOp, math::AbsIOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    if (auto abs = dyn_cast<math::AbsIOp>(op))
      rewriteAbsI(abs);
    else if (isa<arith::FPToSIOp, arith::FPToUIOp>(op))
      rewriteFloatToInt(op);
    else
      rewriteShift(op);
  }
}
