//===- Concat.cpp - VJP of tensor.concat ----------------------------------===//
//
// out = concat(x_0, ..., x_n) along d places x_k at offset Σ_{j<k} size_j(d)
// and copies it unchanged, so dx_k is the slice of dOut over x_k's extent at
// that offset (tensor.extract_slice, unit strides).
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

struct ConcatVjp
    : public VjpOpInterface::ExternalModel<ConcatVjp, tensor::ConcatOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    auto concat = cast<tensor::ConcatOp>(op);
    if (failed(vjp::requireStaticShapes(op)))
      return failure();
    operandGrads.assign(op->getNumOperands(), Value());
    Value dOut = resultGrads[0];
    if (!dOut)
      return success();
    int64_t dim = concat.getDim();
    SmallVector<int64_t> offsets(concat.getResultType().getRank(), 0);
    for (auto [i, x] : llvm::enumerate(concat.getInputs())) {
      auto type = cast<RankedTensorType>(x.getType());
      if (wantGrads[i])
        operandGrads[i] = vjp::slice(b, op->getLoc(), dOut, offsets, type);
      offsets[dim] += type.getDimSize(dim);
    }
    return success();
  }
};

} // namespace

void autoshard::vjp::registerConcatVjp(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::ConcatOp::attachInterface<ConcatVjp>(*ctx);
  });
}
