//===- Broadcast.cpp - VJP of linalg.broadcast ----------------------------===//
//
// out[i] = in[i without the added `dimensions`]: each input element is
// copied to every position along the added dims, so its gradient is the sum
// of dOut over those dims (a reduction generic into zeros). The init
// operand is overwritten: no gradient.
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

struct BroadcastVjp
    : public VjpOpInterface::ExternalModel<BroadcastVjp, linalg::BroadcastOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    auto broadcast = cast<linalg::BroadcastOp>(op);
    if (failed(vjp::requireStaticShapes(op)))
      return failure();
    operandGrads.assign(op->getNumOperands(), Value());
    Value dOut = resultGrads[0];
    if (!dOut || !wantGrads[0])
      return success();
    unsigned rank = cast<RankedTensorType>(dOut.getType()).getRank();
    AffineMap inMap =
        b.getMultiDimIdentityMap(rank).dropResults(broadcast.getDimensions());
    operandGrads[0] =
        vjp::sumInto(b, op->getLoc(), dOut, inMap,
                     cast<RankedTensorType>(broadcast.getInput().getType()));
    return success();
  }
};

} // namespace

void autoshard::vjp::registerBroadcastVjp(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    linalg::BroadcastOp::attachInterface<BroadcastVjp>(*ctx);
  });
}
