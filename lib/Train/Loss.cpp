//===- Loss.cpp - Losses of the training step -----------------------------===//
//
// Each loss is emitted with its gradient written out, not differentiated:
// the closed form (softmax - one_hot) / N is exact and cheaper than the
// reverse sweep through a log-sum-exp would be.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Train/Loss.h"

#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace autoshard::vjp;

namespace autoshard::train {

FailureOr<RankedTensorType> labelType(StringRef loss, Value output,
                                      std::string &why) {
  auto type = dyn_cast<RankedTensorType>(output.getType());
  if (!type || !type.hasStaticShape() ||
      !isa<FloatType>(type.getElementType())) {
    why = "output 0 must be a statically shaped float tensor";
    return failure();
  }
  if (loss == "mse")
    return type;
  if (loss == "cross_entropy") {
    if (type.getRank() < 2) {
      why = "cross_entropy needs logits of rank 2 or more (positions..., "
            "classes)";
      return failure();
    }
    return RankedTensorType::get(type.getShape().drop_back(),
                                 IntegerType::get(type.getContext(), 64));
  }
  why = "unknown loss '" + loss.str() + "' (expected cross_entropy or mse)";
  return failure();
}

namespace {
/// Maps of a loop nest over the logits' dims: all dims, and all but the
/// last (positions).
struct LossMaps {
  AffineMap all, positions;
  LossMaps(OpBuilder &b, unsigned rank) {
    all = b.getMultiDimIdentityMap(rank);
    positions = all.getMajorSubMap(rank - 1);
  }
};

utils::IteratorType red() { return utils::IteratorType::reduction; }

/// sum over all points of `term(args)` / count, into a rank-0 tensor.
Value meanOf(OpBuilder &b, Location loc, ValueRange ins,
             ArrayRef<AffineMap> maps, Type elem, int64_t count,
             function_ref<Value(OpBuilder &, Location, ValueRange)> term) {
  auto scalarType = RankedTensorType::get({}, elem);
  unsigned rank = maps.front().getNumDims();
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(AffineMap::get(rank, 0, b.getContext()));
  return generic(
      b, loc, scalarType, ins, allMaps,
      SmallVector<utils::IteratorType>(rank, red()),
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value t = term(bb, l, a);
        Value scaled = arith::MulFOp::create(
            bb, l, t, scalar(bb, l, elem, 1.0 / static_cast<double>(count)));
        return arith::AddFOp::create(bb, l, scaled, a.back());
      },
      zeros(b, loc, scalarType));
}

LossValues crossEntropy(OpBuilder &b, Location loc, Value logits,
                        Value labels, int64_t batches) {
  auto type = cast<RankedTensorType>(logits.getType());
  Type elem = type.getElementType();
  unsigned rank = type.getRank();
  auto rowType = RankedTensorType::get(type.getShape().drop_back(), elem);
  int64_t positions = rowType.getNumElements() * batches;
  LossMaps m(b, rank);
  SmallVector<utils::IteratorType> rowIters = parallel(rank);
  rowIters.back() = red();
  // Row max, then the sum of exp(x - max): a stable log-sum-exp.
  Value maxInit = splat(b, loc, rowType, -std::numeric_limits<double>::infinity());
  Value rowMax = generic(
      b, loc, rowType, {logits}, {m.all, m.positions}, rowIters,
      [](OpBuilder &bb, Location l, ValueRange a) -> Value {
        return arith::MaximumFOp::create(bb, l, a[0], a[1]);
      },
      maxInit);
  Value sumExp = generic(
      b, loc, rowType, {logits, rowMax}, {m.all, m.positions, m.positions},
      rowIters,
      [](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value e = math::ExpOp::create(bb, l,
                                      arith::SubFOp::create(bb, l, a[0], a[1]));
        return arith::AddFOp::create(bb, l, e, a[2]);
      },
      zeros(b, loc, rowType));
  // Whether the current class is the label.
  auto isLabel = [rank](OpBuilder &bb, Location l, Value label) {
    Value c = linalg::IndexOp::create(bb, l, rank - 1);
    Value ci = arith::IndexCastOp::create(bb, l, label.getType(), c);
    return arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq, ci, label);
  };
  // loss = mean over positions of (max + log(sumexp) - x[label]), summed
  // over the classes: the log-sum-exp part is added at the label's class.
  Value loss = meanOf(
      b, loc, {logits, rowMax, sumExp, labels},
      {m.all, m.positions, m.positions, m.positions}, elem, positions,
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value lse = arith::AddFOp::create(
            bb, l, a[1], math::LogOp::create(bb, l, a[2]));
        Value nll = arith::SubFOp::create(bb, l, lse, a[0]);
        return arith::SelectOp::create(bb, l, isLabel(bb, l, a[3]), nll,
                                       scalar(bb, l, a[0].getType(), 0.0));
      });
  // d loss / d x = (softmax(x) - one_hot(label)) / positions.
  Value grad = generic(
      b, loc, type, {logits, rowMax, sumExp, labels},
      {m.all, m.positions, m.positions, m.positions, m.all}, parallel(rank),
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value e = math::ExpOp::create(bb, l,
                                      arith::SubFOp::create(bb, l, a[0], a[1]));
        Value p = arith::DivFOp::create(bb, l, e, a[2]);
        Value one = scalar(bb, l, elem, 1.0), zero = scalar(bb, l, elem, 0.0);
        Value hot =
            arith::SelectOp::create(bb, l, isLabel(bb, l, a[3]), one, zero);
        Value d = arith::SubFOp::create(bb, l, p, hot);
        return arith::MulFOp::create(
            bb, l, d, scalar(bb, l, elem, 1.0 / static_cast<double>(positions)));
      });
  return {loss, grad};
}

LossValues meanSquaredError(OpBuilder &b, Location loc, Value output,
                            Value target, int64_t batches) {
  auto type = cast<RankedTensorType>(output.getType());
  Type elem = type.getElementType();
  unsigned rank = type.getRank();
  int64_t count = type.getNumElements() * batches;
  AffineMap id = b.getMultiDimIdentityMap(rank);
  Value loss = meanOf(b, loc, {output, target}, {id, id}, elem, count,
                      [](OpBuilder &bb, Location l, ValueRange a) -> Value {
                        Value d = arith::SubFOp::create(bb, l, a[0], a[1]);
                        return arith::MulFOp::create(bb, l, d, d);
                      });
  Value grad = generic(
      b, loc, type, {output, target}, {id, id, id}, parallel(rank),
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value d = arith::SubFOp::create(bb, l, a[0], a[1]);
        return arith::MulFOp::create(
            bb, l, d, scalar(bb, l, elem, 2.0 / static_cast<double>(count)));
      });
  return {loss, grad};
}
} // namespace

LossValues buildLoss(OpBuilder &b, Location loc, StringRef loss, Value output,
                     Value labels, int64_t batches) {
  if (loss == "mse")
    return meanSquaredError(b, loc, output, labels, batches);
  return crossEntropy(b, loc, output, labels, batches);
}

} // namespace autoshard::train
