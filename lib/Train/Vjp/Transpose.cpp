//===- Transpose.cpp - VJP of linalg.transpose ----------------------------===//
//
// out[i] = in[i∘perm] (result dim k is input dim perm[k]) only moves
// elements, so the gradient moves them back: dIn = transpose(dOut,
// perm⁻¹). The init operand is overwritten: no gradient.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "autoshard/Train/VjpOpInterface.h"
#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

namespace {

struct TransposeVjp
    : public VjpOpInterface::ExternalModel<TransposeVjp, linalg::TransposeOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    auto transpose = cast<linalg::TransposeOp>(op);
    if (failed(vjp::requireStaticShapes(op)))
      return failure();
    operandGrads.assign(op->getNumOperands(), Value());
    if (resultGrads[0] && wantGrads[0])
      operandGrads[0] =
          vjp::transpose(b, op->getLoc(), resultGrads[0],
                         invertPermutationVector(transpose.getPermutation()));
    return success();
  }
};

} // namespace

void autoshard::vjp::registerTransposeVjp(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    linalg::TransposeOp::attachInterface<TransposeVjp>(*ctx);
  });
}
