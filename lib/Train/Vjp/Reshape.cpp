//===- Reshape.cpp - VJP of tensor.expand_shape/collapse_shape/reshape ----===//
//
// A reshape keeps the elements in the same (row-major) order and only
// regroups the dims, so element i of the result is element i of the source
// and the gradient is dOut reshaped back to the source's shape: the
// opposite reshape with the same reassociation (expand <-> collapse), or a
// tensor.reshape to a constant of the source's shape. Static shapes only.
// The shape operand of tensor.reshape gets no gradient.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "autoshard/Train/VjpOpInterface.h"
#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

namespace {

Value reshapeBack(tensor::ExpandShapeOp op, OpBuilder &b, Value dOut) {
  return tensor::CollapseShapeOp::create(b, op.getLoc(), op.getSrcType(), dOut,
                                         op.getReassociationIndices());
}

Value reshapeBack(tensor::CollapseShapeOp op, OpBuilder &b, Value dOut) {
  return tensor::ExpandShapeOp::create(b, op.getLoc(), op.getSrcType(), dOut,
                                       op.getReassociationIndices());
}

/// tensor.reshape back, its shape a constant (of the element type of the
/// op's shape operand) holding the source's shape.
Value reshapeBack(tensor::ReshapeOp op, OpBuilder &b, Value dOut) {
  auto source = cast<RankedTensorType>(op.getSource().getType());
  auto shapeType = RankedTensorType::get(
      {source.getRank()}, op.getShape().getType().getElementType());
  SmallVector<Attribute> sizes;
  for (int64_t size : source.getShape())
    sizes.push_back(b.getIntegerAttr(shapeType.getElementType(), size));
  Value shape = arith::ConstantOp::create(
      b, op.getLoc(), DenseElementsAttr::get(shapeType, sizes));
  return tensor::ReshapeOp::create(b, op.getLoc(), source, dOut, shape);
}

template <typename OpTy>
struct ReshapeVjp
    : public VjpOpInterface::ExternalModel<ReshapeVjp<OpTy>, OpTy> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    if (failed(vjp::requireStaticShapes(op)))
      return failure();
    operandGrads.assign(op->getNumOperands(), Value());
    if (resultGrads[0] && wantGrads[0])
      operandGrads[0] = reshapeBack(cast<OpTy>(op), b, resultGrads[0]);
    return success();
  }
};

} // namespace

void autoshard::vjp::registerReshapeVjp(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::ExpandShapeOp::attachInterface<ReshapeVjp<tensor::ExpandShapeOp>>(
        *ctx);
    tensor::CollapseShapeOp::attachInterface<
        ReshapeVjp<tensor::CollapseShapeOp>>(*ctx);
    tensor::ReshapeOp::attachInterface<ReshapeVjp<tensor::ReshapeOp>>(*ctx);
  });
}
