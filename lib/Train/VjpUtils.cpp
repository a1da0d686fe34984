//===- VjpUtils.cpp - Builders shared by the VJP rules --------------------===//

#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"

using namespace mlir;

namespace autoshard::vjp {

Value empty(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value scalar(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, type,
                                   b.getFloatAttr(type, value));
}

Value splat(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  Value c = scalar(b, loc, type.getElementType(), value);
  return linalg::FillOp::create(b, loc, c, empty(b, loc, type)).getResult(0);
}

Value zeros(OpBuilder &b, Location loc, RankedTensorType type) {
  return splat(b, loc, type, 0.0);
}

Value generic(OpBuilder &b, Location loc, RankedTensorType outType,
              ValueRange ins, ArrayRef<AffineMap> maps,
              ArrayRef<utils::IteratorType> iters, BodyFn body, Value init) {
  if (!init)
    init = empty(b, loc, outType);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{outType}, ins, ValueRange{init}, maps, iters,
      [&](OpBuilder &bb, Location l, ValueRange args) {
        linalg::YieldOp::create(bb, l, body(bb, l, args));
      });
  return op.getResult(0);
}

SmallVector<utils::IteratorType> parallel(unsigned rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

linalg::GenericOp pruneGeneric(OpBuilder &b, linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  // Collected first: a reverse iterator's base is the op after the one it
  // reads, so erasing while iterating would invalidate it.
  SmallVector<Operation *> ops;
  for (Operation &inner : body.without_terminator())
    ops.push_back(&inner);
  for (Operation *inner : llvm::reverse(ops))
    if (inner->use_empty() && isPure(inner))
      inner->erase();
  unsigned numIns = op.getNumDpsInputs();
  llvm::BitVector unused(body.getNumArguments());
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  for (unsigned i = 0; i < numIns; ++i) {
    if (body.getArgument(i).use_empty()) {
      unused.set(i);
      continue;
    }
    ins.push_back(op.getDpsInputs()[i]);
    maps.push_back(op.getIndexingMapsArray()[i]);
  }
  if (unused.none())
    return op;
  maps.push_back(op.getIndexingMapsArray().back());
  auto pruned = linalg::GenericOp::create(
      b, op.getLoc(), op.getResultTypes(), ins, op.getDpsInits(), maps,
      op.getIteratorTypesArray());
  pruned.getRegion().takeBody(op.getRegion());
  pruned.getRegion().front().eraseArguments(unused);
  op.getResult(0).replaceAllUsesWith(pruned.getResult(0));
  op.erase();
  return pruned;
}

Value add(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  auto type = cast<RankedTensorType>(lhs.getType());
  unsigned rank = type.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  return generic(b, loc, type, {lhs, rhs}, {id, id, id}, parallel(rank),
                 [](OpBuilder &bb, Location l, ValueRange a) -> Value {
                   return arith::AddFOp::create(bb, l, a[0], a[1]);
                 });
}

Value transpose(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  auto outType = RankedTensorType::get(shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, v, empty(b, loc, outType), perm)
      .getResult()[0];
}

Value sumInto(OpBuilder &b, Location loc, Value v, AffineMap outMap,
              RankedTensorType outType) {
  unsigned rank = cast<RankedTensorType>(v.getType()).getRank();
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::reduction);
  for (AffineExpr e : outMap.getResults())
    iters[cast<AffineDimExpr>(e).getPosition()] = utils::IteratorType::parallel;
  return generic(b, loc, outType, {v},
                 {b.getMultiDimIdentityMap(rank), outMap}, iters,
                 [](OpBuilder &bb, Location l, ValueRange a) -> Value {
                   return arith::AddFOp::create(bb, l, a[0], a[1]);
                 },
                 zeros(b, loc, outType));
}

bool isFloatTensor(Type t) {
  auto tt = dyn_cast<RankedTensorType>(t);
  return tt && isa<FloatType>(tt.getElementType());
}

LogicalResult requireStaticShapes(Operation *op) {
  auto dynamic = [](Type t) {
    auto tt = dyn_cast<ShapedType>(t);
    return tt && !tt.hasStaticShape();
  };
  if (llvm::any_of(op->getOperandTypes(), dynamic) ||
      llvm::any_of(op->getResultTypes(), dynamic))
    return op->emitError("VJP of '")
           << op->getName() << "' needs static tensor shapes";
  return success();
}

Value slice(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> offsets,
            RankedTensorType type) {
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> ones(type.getRank(), 1);
  return tensor::ExtractSliceOp::create(
      b, loc, type, v, getAsIndexOpFoldResult(ctx, offsets),
      getAsIndexOpFoldResult(ctx, type.getShape()),
      getAsIndexOpFoldResult(ctx, ones));
}

Value reshape(OpBuilder &b, Location loc, Value v, RankedTensorType type) {
  auto from = cast<RankedTensorType>(v.getType());
  if (from == type)
    return v;
  auto groups = getReassociationIndicesForReshape(from, type);
  if (!groups)
    return {};
  if (from.getRank() > type.getRank())
    return tensor::CollapseShapeOp::create(b, loc, type, v, *groups);
  return tensor::ExpandShapeOp::create(b, loc, type, v, *groups);
}

} // namespace autoshard::vjp
