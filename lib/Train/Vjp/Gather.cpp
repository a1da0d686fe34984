//===- Gather.cpp - VJP of tensor.gather (embedding lookup) ---------------===//
//
// The embedding lookup out[p..., d...] = table[idx[p..., 0], d...]
// (gather_dims([0]), indices [P..., 1], result [P..., (1,) D...]) copies
// row idx[p] of the table to position p, so row v of the table receives the
// sum of the output gradients of every position that looked it up:
//   dTable[v, d...] = Σ_p (idx[p] == v ? dOut[p, d...] : 0),
// a scatter-add written as ONE linalg.generic over loops (p..., v, d...)
// (positions reduced, v and d parallel) into zeros of the table, so that
// propagation can split it by vocabulary like the forward gather. The
// indices' unit dim and the result's kept unit dim are reshaped away first.
// A gather along another single dim g (ONNX Gather with axis g) is the same
// with v at position g of the table's dims. Indices are integers: no
// gradient. Gathers over several dims are rejected.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "autoshard/Train/VjpOpInterface.h"
#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

namespace {

/// Succeeds on the embedding form; else a located error saying what is not.
/// (With gather_dims([0]) the verifier already makes the indices [..., 1].)
LogicalResult checkEmbedding(tensor::GatherOp gather) {
  if (gather.getGatherDims().size() != 1)
    return gather.emitError("VJP of tensor.gather supports gathers along one "
                            "dim only (an embedding lookup, ONNX Gather)");
  return vjp::requireStaticShapes(gather);
}

/// out(v, d...) += (idx(p...) == v) ? dy(p..., d...) : 0, v being loop `v`.
Value scatterAddBody(OpBuilder &b, Location loc, ValueRange args, unsigned v) {
  Value row = linalg::IndexOp::create(b, loc, v), idx = args[0];
  if (!idx.getType().isIndex())
    idx = arith::IndexCastOp::create(b, loc, b.getIndexType(), idx);
  Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, idx, row);
  Value zero = vjp::scalar(b, loc, args[1].getType(), 0.0);
  Value picked = arith::SelectOp::create(b, loc, eq, args[1], zero);
  return arith::AddFOp::create(b, loc, picked, args[2]);
}

/// dTable of the embedding lookup `gather` given its result's gradient.
Value scatterAdd(OpBuilder &b, Location loc, tensor::GatherOp gather,
                 Value dOut) {
  RankedTensorType table = gather.getSourceType(),
                   indices = gather.getIndicesType();
  unsigned g = gather.getGatherDims()[0];
  // Positions p... (the indices without their unit dim), then the table's
  // dims, v (the gathered one) at position g.
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  unsigned p = shape.size(), loops = p + table.getRank();
  Value idx =
      vjp::reshape(b, loc, gather.getIndices(),
                   RankedTensorType::get(shape, indices.getElementType()));
  for (auto [d, size] : llvm::enumerate(table.getShape()))
    if (d != g)
      shape.push_back(size);
  Value dy = vjp::reshape(b, loc, dOut,
                          RankedTensorType::get(shape, table.getElementType()));
  AffineMap id = b.getMultiDimIdentityMap(loops);
  auto iters = vjp::parallel(loops);
  std::fill_n(iters.begin(), p, utils::IteratorType::reduction);
  return vjp::generic(
      b, loc, table, {idx, dy},
      {id.getSliceMap(0, p), id.dropResult(p + g),
       id.getSliceMap(p, loops - p)},
      iters,
      [&](OpBuilder &bb, Location l, ValueRange args) {
        return scatterAddBody(bb, l, args, p + g);
      },
      vjp::zeros(b, loc, table));
}

struct GatherVjp
    : public VjpOpInterface::ExternalModel<GatherVjp, tensor::GatherOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    auto gather = cast<tensor::GatherOp>(op);
    if (failed(checkEmbedding(gather)))
      return failure();
    operandGrads.assign(op->getNumOperands(), Value());
    if (resultGrads[0] && wantGrads[0])
      operandGrads[0] = scatterAdd(b, op->getLoc(), gather, resultGrads[0]);
    return success();
  }
};

} // namespace

void autoshard::vjp::registerGatherVjp(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::GatherOp::attachInterface<GatherVjp>(*ctx);
  });
}
