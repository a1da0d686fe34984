//===- BatchMatmul.cpp - VJP of linalg.batch_matmul -----------------------===//
//
// C = A·B + C0 per batch (A: BxMxK, B: BxKxN), each batch a matmul, so per
// batch dA = dC·Bᵀ, dB = Aᵀ·dC (transposes swap the last two dims, perm
// [0,2,1]) and dC0 = dC. The products are plain linalg.batch_matmul ops
// (default maps) into zero fills; other indexing_maps or casts are
// rejected.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "autoshard/Train/VjpOpInterface.h"
#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

namespace {

/// lhs·rhs per batch as a plain linalg.batch_matmul into zeros of `type`.
Value batchMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs, Type type) {
  auto t = cast<RankedTensorType>(type);
  return linalg::BatchMatmulOp::create(b, loc, TypeRange{t},
                                       ValueRange{lhs, rhs},
                                       ValueRange{vjp::zeros(b, loc, t)})
      .getResult(0);
}

struct BatchMatmulVjp
    : public VjpOpInterface::ExternalModel<BatchMatmulVjp,
                                           linalg::BatchMatmulOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    if (failed(vjp::requirePlainContraction(cast<linalg::BatchMatmulOp>(op))) ||
        failed(vjp::requireStaticShapes(op)))
      return failure();
    operandGrads.assign(op->getNumOperands(), Value());
    Value dC = resultGrads[0], lhs = op->getOperand(0), rhs = op->getOperand(1);
    Location loc = op->getLoc();
    if (!dC)
      return success();
    if (wantGrads[0])
      operandGrads[0] = batchMatmul(
          b, loc, dC, vjp::transpose(b, loc, rhs, {0, 2, 1}), lhs.getType());
    if (wantGrads[1])
      operandGrads[1] = batchMatmul(
          b, loc, vjp::transpose(b, loc, lhs, {0, 2, 1}), dC, rhs.getType());
    if (wantGrads[2])
      operandGrads[2] = dC;
    return success();
  }
};

} // namespace

void autoshard::vjp::registerBatchMatmulVjp(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    linalg::BatchMatmulOp::attachInterface<BatchMatmulVjp>(*ctx);
  });
}
