//===- Softmax.cpp - VJP of linalg.softmax --------------------------------===//
//
// y = softmax(x) along d: y_i = e^{x_i} / Σ_j e^{x_j}, whose Jacobian is
// ∂y_j/∂x_i = y_j (δ_ij − y_i). Hence
//   dx_i = Σ_j dy_j y_j (δ_ij − y_i) = y_i (dy_i − Σ_j dy_j y_j),
// i.e. dx = y ⊙ (dy − Σ_d(dy ⊙ y)): one linalg.generic reducing dy ⊙ y
// over d into zeros, one elementwise generic reading the sum broadcast
// along d. The init operand is overwritten: no gradient.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "autoshard/Train/VjpOpInterface.h"
#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

namespace {

/// dx = y ⊙ (dy − Σ_d(dy ⊙ y)) for y = softmax(x) along `d`.
Value softmaxGrad(OpBuilder &b, Location loc, Value y, Value dy, int64_t d) {
  auto type = cast<RankedTensorType>(y.getType());
  unsigned rank = type.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank), rowMap = id.dropResult(d);
  SmallVector<int64_t> rowShape(type.getShape());
  rowShape.erase(rowShape.begin() + d);
  auto rowType = RankedTensorType::get(rowShape, type.getElementType());
  // s = Σ_d dy ⊙ y
  auto iters = vjp::parallel(rank);
  iters[d] = utils::IteratorType::reduction;
  Value s = vjp::generic(
      b, loc, rowType, {dy, y}, {id, id, rowMap}, iters,
      [](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value p = arith::MulFOp::create(bb, l, a[0], a[1]);
        return arith::AddFOp::create(bb, l, p, a[2]);
      },
      vjp::zeros(b, loc, rowType));
  // dx = y ⊙ (dy − s)
  return vjp::generic(b, loc, type, {y, dy, s}, {id, id, rowMap, id},
                      vjp::parallel(rank),
                      [](OpBuilder &bb, Location l, ValueRange a) -> Value {
                        Value diff = arith::SubFOp::create(bb, l, a[1], a[2]);
                        return arith::MulFOp::create(bb, l, a[0], diff);
                      });
}

struct SoftmaxVjp
    : public VjpOpInterface::ExternalModel<SoftmaxVjp, linalg::SoftmaxOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    auto softmax = cast<linalg::SoftmaxOp>(op);
    if (failed(vjp::requireStaticShapes(op)))
      return failure();
    operandGrads.assign(op->getNumOperands(), Value());
    if (resultGrads[0] && wantGrads[0])
      operandGrads[0] = softmaxGrad(b, op->getLoc(), softmax.getResult()[0],
                                    resultGrads[0], softmax.getDimension());
    return success();
  }
};

} // namespace

void autoshard::vjp::registerSoftmaxVjp(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    linalg::SoftmaxOp::attachInterface<SoftmaxVjp>(*ctx);
  });
}
