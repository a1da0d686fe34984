//===- WidenF64.cpp - The --dist-widen-f64 pass ---------------------------===//
//
// The program with every f32 computed in f64: a reference for how much
// FP32 rounding the program itself makes, as it propagates it (autoshard
// verify, docs/design.md "Precision"). Each function keeps its f32
// signature -- its arguments are extended at entry and its results
// truncated at the return -- so seeded inputs and weight files give the
// widened program exactly the values the f32 one reads, and its outputs
// compare with the f32 ones' directly.
//
// Inside, every f32 type (scalars, the element type of tensors) becomes
// f64 and every f32 constant the same value in f64. A cast that becomes an
// identity (an f32 -> f64 extf, an f64 -> f32 truncf) goes; casts from and
// to other types (bf16 inputs of a mixed-precision GEMM) stay, now from and
// to f64.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Train/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace autoshard {
#define GEN_PASS_DEF_DISTWIDENF64
#include "autoshard/Train/Passes.h.inc"
} // namespace autoshard

using namespace mlir;
using namespace autoshard;

namespace {

/// `type` with f32 (itself or as an element type) made f64.
Type widen(Type type) {
  Type f64 = Float64Type::get(type.getContext());
  if (type.isF32())
    return f64;
  if (auto shaped = dyn_cast<ShapedType>(type);
      shaped && shaped.getElementType().isF32())
    return shaped.clone(f64);
  return type;
}

/// The f32 constant `value` in f64 (exact: every f32 is an f64); null if it
/// holds no f32.
TypedAttr widenConstant(Attribute value) {
  if (auto f = dyn_cast<FloatAttr>(value); f && f.getType().isF32())
    return FloatAttr::get(widen(f.getType()), f.getValue().convertToFloat());
  auto dense = dyn_cast<DenseFPElementsAttr>(value);
  if (!dense || !dense.getElementType().isF32())
    return {};
  SmallVector<double> values;
  for (APFloat v : dense.getValues<APFloat>())
    values.push_back(v.convertToFloat());
  return DenseElementsAttr::get(cast<ShapedType>(widen(dense.getType())),
                                ArrayRef<double>(values));
}

/// An attribute of `op` typed f32 that the pass cannot widen (a resource
/// blob, an op-specific attribute): reported rather than left inconsistent.
bool hasF32Attr(Operation *op) {
  for (NamedAttribute attr : op->getAttrs())
    if (auto typed = dyn_cast<TypedAttr>(attr.getValue()))
      if (widen(typed.getType()) != typed.getType())
        return true;
  return false;
}

/// Makes the types in and below `op` f64; calls keep their callee's f32
/// types (their operands are truncated, their results extended).
LogicalResult widenOp(Operation *op) {
  OpBuilder b(op);
  if (auto call = dyn_cast<func::CallOp>(op)) {
    // The callee's declared types: the call's own are its (widened)
    // operands'.
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee)
      return call.emitError("dist-widen-f64: no callee ")
             << call.getCalleeAttr();
    for (OpOperand &operand : call->getOpOperands()) {
      Type want = callee.getArgumentTypes()[operand.getOperandNumber()];
      if (operand.get().getType() != want)
        operand.set(
            arith::TruncFOp::create(b, call.getLoc(), want, operand.get()));
    }
    b.setInsertionPointAfter(call);
    for (Value result : call->getResults())
      if (widen(result.getType()) != result.getType()) {
        auto ext = arith::ExtFOp::create(b, call.getLoc(),
                                         widen(result.getType()), result);
        result.replaceAllUsesExcept(ext.getResult(), ext);
      }
    return success();
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (TypedAttr wide = widenConstant(constant.getValue()))
      constant.setValueAttr(wide);
  }
  if (hasF32Attr(op))
    return op->emitError("dist-widen-f64: cannot widen this op's f32 "
                         "attribute");
  for (Value result : op->getResults())
    result.setType(widen(result.getType()));
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (BlockArgument arg : block.getArguments())
        arg.setType(widen(arg.getType()));
  return success();
}

/// Drops `op` if it is an extf/truncf that widening made an identity.
void dropIdentityCast(Operation *op) {
  if (isa<arith::ExtFOp, arith::TruncFOp>(op) &&
      op->getOperand(0).getType() == op->getResult(0).getType()) {
    op->getResult(0).replaceAllUsesWith(op->getOperand(0));
    op->erase();
  }
}

LogicalResult widenFunction(func::FuncOp func) {
  if (func.isExternal())
    return success();
  // In order, so each op sees its operands widened (a call truncates
  // them back); ops the walk inserts after the current one (a call's
  // extensions) are not visited again.
  WalkResult walked = func.getBody().walk([&](Operation *op) {
    if (isa<func::ReturnOp>(op))
      return WalkResult::advance();
    return failed(widenOp(op)) ? WalkResult::interrupt()
                               : WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  // The entry block keeps the signature's f32 arguments: extended once, at
  // the top.
  Block &entry = func.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  for (BlockArgument arg : entry.getArguments())
    if (widen(arg.getType()) != arg.getType()) {
      auto ext =
          arith::ExtFOp::create(b, arg.getLoc(), widen(arg.getType()), arg);
      arg.replaceAllUsesExcept(ext.getResult(), ext);
    }
  // Returns give the signature's f32 results.
  func.walk([&](func::ReturnOp ret) {
    OpBuilder rb(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      Type want = func.getResultTypes()[operand.getOperandNumber()];
      if (operand.get().getType() != want)
        operand.set(
            arith::TruncFOp::create(rb, ret.getLoc(), want, operand.get()));
    }
  });
  SmallVector<Operation *> casts;
  func.walk([&](Operation *op) {
    if (isa<arith::ExtFOp, arith::TruncFOp>(op))
      casts.push_back(op);
  });
  for (Operation *op : casts)
    dropIdentityCast(op);
  return success();
}

struct DistWidenF64Pass
    : public autoshard::impl::DistWidenF64Base<DistWidenF64Pass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(widenFunction(func)))
        return signalPassFailure();
  }
};

} // namespace
