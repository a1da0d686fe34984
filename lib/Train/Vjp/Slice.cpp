//===- Slice.cpp - VJP of tensor.extract_slice ----------------------------===//
//
// out = source[offsets : offsets + sizes] (unit strides) copies that window
// and drops the rest, so dSource is dOut placed at the window and zero
// elsewhere: tensor.pad of dOut with low = offsets, high = sourceSize −
// offset − size and pad value 0. A rank-reducing slice only drops unit
// dims, so dOut is first expanded back to `sizes`. Static offsets, sizes
// and unit strides only.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "autoshard/Train/VjpOpInterface.h"
#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

namespace {

LogicalResult checkSlice(tensor::ExtractSliceOp slice) {
  if (!slice.getOffsets().empty() || !slice.getSizes().empty() ||
      !slice.getStrides().empty())
    return slice.emitError("VJP of tensor.extract_slice with dynamic "
                           "offsets, sizes or strides is not supported");
  if (!llvm::all_of(slice.getStaticStrides(), [](int64_t s) { return s == 1; }))
    return slice.emitError(
        "VJP of tensor.extract_slice with non-unit strides is not supported");
  return vjp::requireStaticShapes(slice);
}

struct SliceVjp
    : public VjpOpInterface::ExternalModel<SliceVjp, tensor::ExtractSliceOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    if (failed(checkSlice(slice)))
      return failure();
    operandGrads.assign(op->getNumOperands(), Value());
    if (!resultGrads[0] || !wantGrads[0])
      return success();
    Location loc = op->getLoc();
    RankedTensorType source = slice.getSourceType();
    ArrayRef<int64_t> offsets = slice.getStaticOffsets(),
                      sizes = slice.getStaticSizes();
    SmallVector<int64_t> high;
    for (auto [n, offset, size] : llvm::zip(source.getShape(), offsets, sizes))
      high.push_back(n - offset - size);
    Value window =
        vjp::reshape(b, loc, resultGrads[0],
                     RankedTensorType::get(sizes, source.getElementType()));
    Value zero = vjp::scalar(b, loc, source.getElementType(), 0.0);
    operandGrads[0] = tensor::PadOp::create(
        b, loc, source, window, getAsIndexOpFoldResult(b.getContext(), offsets),
        getAsIndexOpFoldResult(b.getContext(), high), zero);
    return success();
  }
};

} // namespace

void autoshard::vjp::registerSliceVjp(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::ExtractSliceOp::attachInterface<SliceVjp>(*ctx);
  });
}
