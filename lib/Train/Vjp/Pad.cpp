//===- Pad.cpp - VJP of tensor.pad ----------------------------------------===//
//
// out = source placed at offset `low` in a tensor of constants, so each
// source element appears once, at its position + low: dSource is the window
// of dOut at [low, low + sourceSize) (tensor.extract_slice, unit strides).
// The pad value is a constant and the low/high sizes are static: no
// gradients for them. Dynamic low/high or a computed pad value: error.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "autoshard/Train/VjpOpInterface.h"
#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

namespace {

struct PadVjp : public VjpOpInterface::ExternalModel<PadVjp, tensor::PadOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    auto pad = cast<tensor::PadOp>(op);
    if (!pad.getLow().empty() || !pad.getHigh().empty())
      return op->emitError(
          "VJP of tensor.pad with dynamic low/high is not supported");
    if (!pad.getConstantPaddingValue())
      return op->emitError(
          "VJP of tensor.pad with a non-constant pad value is not supported");
    if (failed(vjp::requireStaticShapes(op)))
      return failure();
    operandGrads.assign(op->getNumOperands(), Value());
    if (resultGrads[0] && wantGrads[0])
      operandGrads[0] = vjp::slice(b, op->getLoc(), resultGrads[0],
                                   pad.getStaticLow(), pad.getSourceType());
    return success();
  }
};

} // namespace

void autoshard::vjp::registerPadVjp(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::PadOp::attachInterface<PadVjp>(*ctx);
  });
}
