//===- OnnxReduceOps.cpp - Reductions, arg-reductions, log-softmax --------===//
//
// Every Reduce* op is one reduction linalg.generic (with an elementwise map
// before it, e.g. |x| or x^2, and after it, e.g. sqrt or log, where the op
// has one); ArgMax/ArgMin, LogSoftmax, Hardmax, CumSum and TopK are built
// from reductions and linalg.index, so the runtime needs no new kernel.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace autoshard::onnx_import;
using mlir::utils::IteratorType;

namespace {

Value cst(OpBuilder &b, Location l, Type t, double v) {
  if (isa<FloatType>(t))
    return arith::ConstantOp::create(b, l, b.getFloatAttr(t, v));
  if (v >= 9.2e18)
    return arith::ConstantOp::create(
        b, l, b.getIntegerAttr(t, std::numeric_limits<int64_t>::max()));
  if (v <= -9.2e18)
    return arith::ConstantOp::create(
        b, l, b.getIntegerAttr(t, std::numeric_limits<int64_t>::min()));
  return arith::ConstantOp::create(b, l, b.getIntegerAttr(t, int64_t(v)));
}

Value maxOf(OpBuilder &b, Location l, Value x, Value y) {
  return floatOrInt<arith::MaximumFOp, arith::MaxSIOp>(b, l, x, y);
}
Value minOf(OpBuilder &b, Location l, Value x, Value y) {
  return floatOrInt<arith::MinimumFOp, arith::MinSIOp>(b, l, x, y);
}

/// The shape of `shape` without `axes`, and with them as 1s.
void reducedShapes(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes,
                   std::vector<int64_t> &reduced, std::vector<int64_t> &kept) {
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    bool red = llvm::is_contained(axes, d);
    if (!red)
      reduced.push_back(shape[d]);
    kept.push_back(red ? 1 : shape[d]);
  }
}

/// The map reading a tensor reduced over `axes` inside loops over the full
/// rank.
AffineMap reducedMap(MLIRContext *ctx, int64_t rank, ArrayRef<int64_t> axes) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(axes, d))
      exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// An elementwise generic over `shape` (identity maps unless given).
Value mapGeneric(NodeImporter &n, ArrayRef<GenericInput> ins,
                 ArrayRef<int64_t> shape, ElemKind kind,
                 const NodeImporter::BodyFn &body) {
  int64_t rank = shape.size();
  AffineMap id = n.getBuilder().getMultiDimIdentityMap(rank);
  return n
      .buildGeneric(ins, shape, kind,
                    SmallVector<IteratorType>(rank, IteratorType::parallel),
                    Value(), id, body)
      ->getResult(0);
}

/// Sorted, deduplicated reduction axes of a Reduce* node; empty `axes` with
/// noop_with_empty_axes returns nullopt (the identity).
FailureOr<std::optional<std::vector<int64_t>>> reductionAxes(NodeImporter &n) {
  const Val &x = n.in(0);
  FailureOr<std::optional<std::vector<int64_t>>> a = n.axesArg(1);
  if (failed(a))
    return failure();
  std::vector<int64_t> axes = a->value_or(std::vector<int64_t>());
  if (axes.empty()) {
    if (n.attrInt("noop_with_empty_axes", 0))
      return std::optional<std::vector<int64_t>>();
    axes.resize(x.rank());
    std::iota(axes.begin(), axes.end(), 0);
  }
  for (int64_t &ax : axes)
    if (failed(n.normalizeAxis(ax, x.rank())))
      return failure();
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return std::optional<std::vector<int64_t>>(axes);
}

LogicalResult convertReduce(NodeImporter &n, StringRef op) {
  bool floatOnly = op == "ReduceMean" || op == "ReduceL2" ||
                   op == "ReduceLogSum" || op == "ReduceLogSumExp";
  if (floatOnly && !isFloatKind(n.in(0).kind))
    return n.error() << "expects a float input";
  FailureOr<std::optional<std::vector<int64_t>>> axesOr = reductionAxes(n);
  if (failed(axesOr))
    return failure();
  if (!*axesOr) {
    n.setOutput(0, n.materialize(n.in(0)), n.in(0).kind);
    return success();
  }
  // float16/bfloat16 sums and products accumulate in f32 and round once, as
  // torch's CPU reductions do (OnnxWidening.cpp); a split reduction's
  // partial results are then all-reduced in f32. Max and Min are exact in
  // the narrow type and stay there.
  ElemKind outKind = n.in(0).kind;
  if (op != "ReduceMax" && op != "ReduceMin" &&
      failed(widenHalfInputs(n, {})))
    return failure();
  const Val &x = n.in(0);
  const std::vector<int64_t> &axes = **axesOr;
  int64_t count = 1;
  for (int64_t a : axes)
    count *= x.shape[a];
  // Before: |x|, x^2 or exp(x); combine; after: sqrt, log or / count.
  Value v = n.materialize(x);
  if (op == "ReduceL1" || op == "ReduceL2" || op == "ReduceSumSquare" ||
      op == "ReduceLogSumExp") {
    GenericInput in{v, n.getBuilder().getMultiDimIdentityMap(x.rank()),
                    std::nullopt};
    v = mapGeneric(n, {in}, x.shape, x.kind,
                   [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                     if (op == "ReduceL1")
                       return isa<FloatType>(a[0].getType())
                                  ? Value(math::AbsFOp::create(b, l, a[0]))
                                  : Value(math::AbsIOp::create(b, l, a[0]));
                     if (op == "ReduceLogSumExp")
                       return math::ExpOp::create(b, l, a[0]);
                     return floatOrInt<arith::MulFOp, arith::MulIOp>(b, l, a[0], a[0]);
                   });
  }
  double inf = std::numeric_limits<double>::infinity();
  double init = op == "ReduceMax"    ? -inf
                : op == "ReduceMin"  ? inf
                : op == "ReduceProd" ? 1.0
                                     : 0.0;
  Value r = n.reduce(
      v, x.shape, axes, x.kind,
      [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        if (op == "ReduceMax")
          return maxOf(b, l, a[0], a[1]);
        if (op == "ReduceMin")
          return minOf(b, l, a[0], a[1]);
        if (op == "ReduceProd")
          return floatOrInt<arith::MulFOp, arith::MulIOp>(b, l, a[0], a[1]);
        return floatOrInt<arith::AddFOp, arith::AddIOp>(b, l, a[0], a[1]);
      },
      init);
  SmallVector<int64_t> ident(x.rank());
  std::iota(ident.begin(), ident.end(), 0);
  n.main.op = r.getDefiningOp();
  n.main.operands = {OperandSource{0, ident}};
  std::vector<int64_t> reduced, kept;
  reducedShapes(x.shape, axes, reduced, kept);
  if (op == "ReduceMean" || op == "ReduceL2" || op == "ReduceLogSum" ||
      op == "ReduceLogSumExp") {
    AffineMap id = n.getBuilder().getMultiDimIdentityMap(reduced.size());
    r = mapGeneric(n, {GenericInput{r, id, std::nullopt}}, reduced, x.kind,
                   [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                     if (op == "ReduceMean")
                       return arith::DivFOp::create(
                           b, l, a[0], cst(b, l, a[0].getType(), count));
                     if (op == "ReduceL2")
                       return math::SqrtOp::create(b, l, a[0]);
                     return math::LogOp::create(b, l, a[0]);
                   });
  }
  if (n.attrInt("keepdims", 1))
    r = n.reshapeTo(r, reduced, kept);
  n.setOutput(0, narrowFromF32(n, r, outKind), outKind);
  return success();
}

/// Index of the first (or last) extreme of `x` along `axis`: the extreme by
/// one reduction, then the smallest (largest) index holding it by another.
Value argExtreme(NodeImporter &n, Value xv, ArrayRef<int64_t> shape,
                 ElemKind kind, int64_t axis, bool isMax, bool last) {
  MLIRContext *ctx = n.getBuilder().getContext();
  int64_t rank = shape.size();
  double inf = std::numeric_limits<double>::infinity();
  Value m = n.reduce(
      xv, shape, {axis}, kind,
      [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        return isMax ? maxOf(b, l, a[0], a[1]) : minOf(b, l, a[0], a[1]);
      },
      isMax ? -inf : inf);
  std::vector<int64_t> reduced, kept;
  reducedShapes(shape, {axis}, reduced, kept);
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  iters[axis] = IteratorType::reduction;
  OpBuilder &b = n.getBuilder();
  Value init = linalg::FillOp::create(
                   b, n.getLoc(),
                   ValueRange{n.scalarConstant(
                       b, last ? -1.0 : double(shape[axis]), ElemKind::I64)},
                   ValueRange{n.emptyTensor(reduced, ElemKind::I64)})
                   .getResult(0);
  AffineMap rmap = reducedMap(ctx, rank, {axis});
  return n
      .buildGeneric(
          {GenericInput{xv, b.getMultiDimIdentityMap(rank), std::nullopt},
           GenericInput{m, rmap, std::nullopt},
           loopIndex(n, axis, shape[axis], rank)},
          reduced, ElemKind::I64, iters, init, rmap,
          [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
            Value idx = a[2];
            Value hit = isa<FloatType>(a[0].getType())
                            ? Value(arith::CmpFOp::create(
                                  bb, l, arith::CmpFPredicate::OEQ, a[0], a[1]))
                            : Value(arith::CmpIOp::create(
                                  bb, l, arith::CmpIPredicate::eq, a[0], a[1]));
            Value better = last ? Value(arith::MaxSIOp::create(bb, l, a[3], idx))
                                : Value(arith::MinSIOp::create(bb, l, a[3], idx));
            return arith::SelectOp::create(bb, l, hit, better, a[3]);
          })
      ->getResult(0);
}

LogicalResult convertArgReduce(NodeImporter &n, StringRef op) {
  const Val &x = n.in(0);
  int64_t axis = n.attrInt("axis", 0);
  if (failed(n.normalizeAxis(axis, x.rank())))
    return failure();
  Value r = argExtreme(n, n.materialize(x), x.shape, x.kind, axis,
                       op == "ArgMax", n.attrInt("select_last_index", 0));
  std::vector<int64_t> reduced, kept;
  reducedShapes(x.shape, {axis}, reduced, kept);
  if (n.attrInt("keepdims", 1))
    r = n.reshapeTo(r, reduced, kept);
  n.setOutput(0, r, ElemKind::I64);
  return success();
}

/// TopK: the k largest (or smallest) elements along the axis, in order,
/// ties to the lower index (as ONNX orders them). Two reductions, no sort:
/// each element's rank (how many elements precede it in that order), then
/// output r along the axis is the element whose rank is r.
LogicalResult convertTopK(NodeImporter &n, StringRef) {
  const Val &x = n.in(0);
  FailureOr<std::vector<int64_t>> kv = n.constInts(1, "k");
  if (failed(kv))
    return failure();
  int64_t rank = x.rank(), axis = n.attrInt("axis", -1);
  if (failed(n.normalizeAxis(axis, rank)))
    return failure();
  int64_t len = rank ? x.shape[axis] : 1;
  if (kv->size() != 1 || (*kv)[0] < 1 || (*kv)[0] > len)
    return n.error() << "k must be one value in [1, " << len << "]";
  int64_t k = (*kv)[0];
  bool largest = n.attrInt("largest", 1) != 0;
  OpBuilder &b = n.getBuilder();
  MLIRContext *ctx = b.getContext();
  // Loops (p..., i): p over x's shape, i over the axis once more.
  auto alongAxis = [&](int64_t numLoops) {
    SmallVector<AffineExpr> e;
    for (int64_t d = 0; d < rank; ++d)
      e.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
    return AffineMap::get(numLoops, 0, e, ctx);
  };
  AffineMap outer =
      AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank);
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  iters.push_back(IteratorType::reduction);
  Value xv = n.materialize(x);
  SmallVector<GenericInput> ins = {
      {xv, outer, std::nullopt},
      {xv, alongAxis(rank + 1), std::nullopt},
      loopIndex(n, axis, len, rank + 1),
      loopIndex(n, rank, len, rank + 1)};
  Value rankOf =
      n.buildGeneric(
           ins, x.shape, ElemKind::I64, iters,
           n.zeroFilled(x.shape, ElemKind::I64), outer,
           [&](OpBuilder &bb, Location l, ArrayRef<Value> a) {
             // Does element i precede element p in the output order?
             Value mine = a[0], other = a[1];
             Value better, same;
             if (isa<FloatType>(mine.getType())) {
               using P = arith::CmpFPredicate;
               better = arith::CmpFOp::create(bb, l, largest ? P::OGT : P::OLT,
                                              other, mine);
               same = arith::CmpFOp::create(bb, l, P::OEQ, other, mine);
             } else {
               using P = arith::CmpIPredicate;
               better = arith::CmpIOp::create(bb, l, largest ? P::sgt : P::slt,
                                              other, mine);
               same = arith::CmpIOp::create(bb, l, P::eq, other, mine);
             }
             Value earlier = arith::CmpIOp::create(
                 bb, l, arith::CmpIPredicate::slt, a[3], a[2]);
             Value before = arith::OrIOp::create(
                 bb, l, better, arith::AndIOp::create(bb, l, same, earlier));
             return Value(arith::AddIOp::create(
                 bb, l, a[4],
                 arith::ExtUIOp::create(bb, l, bb.getI64Type(), before)));
           })
          ->getResult(0);
  // Loops (q..., j), q[axis] = r < k: pick the element j of rank r.
  std::vector<int64_t> out = x.shape;
  out[axis] = k;
  auto pick = [&](bool values) {
    SmallVector<GenericInput> pins = {
        {rankOf, alongAxis(rank + 1), std::nullopt},
        loopIndex(n, axis, k, rank + 1), loopIndex(n, rank, len, rank + 1)};
    if (values)
      pins.push_back({xv, alongAxis(rank + 1), std::nullopt});
    ElemKind kind = values ? x.kind : ElemKind::I64;
    return n
        .buildGeneric(pins, out, kind, iters, n.zeroFilled(out, kind), outer,
                      [&](OpBuilder &bb, Location l, ArrayRef<Value> a) {
                        Value hit = arith::CmpIOp::create(
                            bb, l, arith::CmpIPredicate::eq, a[0], a[1]);
                        return Value(arith::SelectOp::create(
                            bb, l, hit, values ? a[3] : a[2], a.back()));
                      })
        ->getResult(0);
  };
  n.setOutput(0, pick(true), x.kind);
  n.setOutput(1, pick(false), ElemKind::I64);
  return success();
}

/// Softmax-family axis handling: opset < 13 coerces the input to 2-D
/// [prod(dims < axis), prod(dims >= axis)] and works on dim 1.
struct Coerced {
  Value x;
  std::vector<int64_t> shape;
  int64_t axis;
};
FailureOr<Coerced> softmaxInput(NodeImporter &n) {
  const Val &x = n.in(0);
  if (!isFloatKind(x.kind))
    return n.error() << "expects a float input", failure();
  bool legacy = n.getOpset() < 13;
  int64_t axis = n.attrInt("axis", legacy ? 1 : -1);
  if (failed(n.normalizeAxis(axis, x.rank())))
    return failure();
  Value v = n.materialize(x);
  if (!legacy || x.rank() <= 1)
    return Coerced{v, x.shape, axis};
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < x.rank(); ++d)
    (d < axis ? outer : inner) *= x.shape[d];
  std::vector<int64_t> shape = {outer, inner};
  return Coerced{n.reshapeTo(v, x.shape, shape), shape, 1};
}

void setSoftmaxOutput(NodeImporter &n, Value r, const Coerced &c,
                      ElemKind kind) {
  const Val &x = n.in(0);
  if (c.shape != x.shape)
    r = n.reshapeTo(r, c.shape, x.shape);
  n.setOutput(0, r, kind);
}

/// x - max - log(sum(exp(x - max))) along the axis; `sumOp`, if given,
/// receives the generic summing the exponentials.
Value logSoftmax(NodeImporter &n, Value xv, ArrayRef<int64_t> shape,
                 ElemKind kind, int64_t axis, Operation **sumOp = nullptr) {
  MLIRContext *ctx = n.getBuilder().getContext();
  int64_t rank = shape.size();
  double inf = std::numeric_limits<double>::infinity();
  Value m = n.reduce(
      xv, shape, {axis}, kind,
      [](OpBuilder &b, Location l, ArrayRef<Value> a) {
        return maxOf(b, l, a[0], a[1]);
      },
      -inf);
  std::vector<int64_t> reduced, kept;
  reducedShapes(shape, {axis}, reduced, kept);
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  iters[axis] = IteratorType::reduction;
  AffineMap id = n.getBuilder().getMultiDimIdentityMap(rank);
  AffineMap rmap = reducedMap(ctx, rank, {axis});
  Value init = n.zeroFilled(reduced, kind);
  Value s = n.buildGeneric(
                 {GenericInput{xv, id, std::nullopt},
                  GenericInput{m, rmap, std::nullopt}},
                 reduced, kind, iters, init, rmap,
                 [](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                   Value e = math::ExpOp::create(
                       b, l, arith::SubFOp::create(b, l, a[0], a[1]));
                   return arith::AddFOp::create(b, l, a[2], e);
                 })
                ->getResult(0);
  if (sumOp)
    *sumOp = s.getDefiningOp();
  return mapGeneric(
      n,
      {GenericInput{xv, id, std::nullopt}, GenericInput{m, rmap, std::nullopt},
       GenericInput{s, rmap, std::nullopt}},
      shape, kind, [](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        Value sh = arith::SubFOp::create(b, l, a[0], a[1]);
        return arith::SubFOp::create(b, l, sh, math::LogOp::create(b, l, a[2]));
      });
}

LogicalResult convertSoftmaxFamily(NodeImporter &n, StringRef op) {
  // LogSoftmax on float16/bfloat16 runs in f32 and rounds once (the
  // runtime's Softmax kernel widens by itself; Hardmax is exact).
  ElemKind outKind = n.in(0).kind;
  if (op == "LogSoftmax" && failed(widenHalfInputs(n, {})))
    return failure();
  FailureOr<Coerced> c = softmaxInput(n);
  if (failed(c))
    return failure();
  ElemKind kind = n.in(0).kind;
  Value r;
  if (op == "LogSoftmax") {
    Operation *sum = nullptr;
    r = narrowFromF32(n, logSoftmax(n, c->x, c->shape, kind, c->axis, &sum),
                      outKind);
    if (c->shape == n.in(0).shape) {
      // A strategy applies to the sum of exponentials (x and the max):
      // splitting the axis makes it a partial f32 sum.
      SmallVector<int64_t> ident(c->shape.size());
      std::iota(ident.begin(), ident.end(), 0);
      n.main.op = sum;
      n.main.operands = {OperandSource{0, ident}, std::nullopt};
    }
  } else if (op == "Softmax") {
    if (n.getOpset() >= 13)
      return n.convertSoftmax(); // records the op a strategy applies to
    OpBuilder &b = n.getBuilder();
    r = linalg::SoftmaxOp::create(b, n.getLoc(),
                                  TypeRange{n.tensorType(c->shape, kind)}, c->x,
                                  n.emptyTensor(c->shape, kind), c->axis)
            .getResult()[0];
  } else { // Hardmax: 1 at the first maximum.
    Value idx = argExtreme(n, c->x, c->shape, kind, c->axis, true, false);
    MLIRContext *ctx = n.getBuilder().getContext();
    int64_t rank = c->shape.size();
    int64_t axis = c->axis;
    r = mapGeneric(
        n,
        {GenericInput{idx, reducedMap(ctx, rank, {axis}), std::nullopt},
         loopIndex(n, axis, c->shape[axis], rank)},
        c->shape, kind, [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
          Value hit =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1], a[0]);
          Type t = a[2].getType();
          return Value(arith::SelectOp::create(b, l, hit, cst(b, l, t, 1),
                                               cst(b, l, t, 0)));
        });
  }
  setSoftmaxOutput(n, r, *c, outKind);
  return success();
}

/// CumSum as a generic with a second loop over the axis: out[i] sums x[k]
/// for k <= i (k < i exclusive; reversed: k >= i).
LogicalResult convertCumSum(NodeImporter &n, StringRef) {
  FailureOr<ElemKind> kind = widenHalfInputs(n, {});
  if (failed(kind))
    return failure();
  const Val &x = n.in(0);
  FailureOr<std::vector<int64_t>> axisV = n.constInts(1, "the axis");
  if (failed(axisV))
    return failure();
  if (axisV->size() != 1)
    return n.error() << "axis must hold one value";
  int64_t axis = (*axisV)[0];
  if (failed(n.normalizeAxis(axis, x.rank())))
    return failure();
  bool exclusive = n.attrInt("exclusive", 0), reverse = n.attrInt("reverse", 0);
  int64_t rank = x.rank();
  MLIRContext *ctx = n.getBuilder().getContext();
  SmallVector<AffineExpr> inExprs;
  for (int64_t d = 0; d < rank; ++d)
    inExprs.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  iters.push_back(IteratorType::reduction);
  Value init = n.zeroFilled(x.shape, x.kind);
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(getAffineDimExpr(d, ctx));
  Value r =
      n.buildGeneric(
           {GenericInput{n.materialize(x),
                         AffineMap::get(rank + 1, 0, inExprs, ctx),
                         std::nullopt},
            loopIndex(n, axis, x.shape[axis], rank + 1),
            loopIndex(n, rank, x.shape[axis], rank + 1)},
           x.shape, x.kind, iters, init,
           AffineMap::get(rank + 1, 0, outExprs, ctx),
           [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
             Value i = a[1], k = a[2];
             using P = arith::CmpIPredicate;
             P p = reverse ? (exclusive ? P::sgt : P::sge)
                           : (exclusive ? P::slt : P::sle);
             Value take = arith::CmpIOp::create(b, l, p, k, i);
             Value zero = cst(b, l, a[0].getType(), 0);
             return floatOrInt<arith::AddFOp, arith::AddIOp>(
                 b, l, a[3], arith::SelectOp::create(b, l, take, a[0], zero));
           })
          ->getResult(0);
  // A strategy applies to the generic; the axis stays whole (its loop-index
  // operands are not the node's, so a split of it is refused, located).
  SmallVector<int64_t> ident(rank);
  std::iota(ident.begin(), ident.end(), 0);
  n.main.op = r.getDefiningOp();
  n.main.operands = {OperandSource{0, ident}, std::nullopt, std::nullopt};
  n.main.resultDims = ident;
  n.setOutput(0, narrowFromF32(n, r, *kind), *kind);
  return success();
}

} // namespace

GenericInput autoshard::onnx_import::loopIndex(NodeImporter &n, int64_t dim,
                                               int64_t size, int64_t numLoops) {
  // Built directly: materialize() caches by HostTensor address, which a
  // temporary would hand on to the next one. The host array counts against
  // the fold budget (a dim is a few bytes of a model); past it the program
  // makes the iota, a generic of linalg.index.
  OpBuilder &b = n.getBuilder();
  MLIRContext *ctx = b.getContext();
  auto type = RankedTensorType::get({size}, b.getI64Type());
  Value c;
  if (n.reserveFold({size})) {
    std::vector<int64_t> iota(size);
    std::iota(iota.begin(), iota.end(), 0);
    c = arith::ConstantOp::create(
        b, n.getLoc(), DenseElementsAttr::get(type, ArrayRef<int64_t>(iota)));
  } else {
    // A unit reduction loop (over a one-element operand that gives its
    // extent) keeps it out of elementwise fusion, which would remap
    // linalg.index through an affine.apply the runtime does not run.
    auto unitType = RankedTensorType::get({1}, b.getI64Type());
    Value unit = arith::ConstantOp::create(
        b, n.getLoc(),
        DenseElementsAttr::get(unitType, b.getI64IntegerAttr(0)));
    AffineMap out = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
    AffineMap in = AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx);
    c = n.buildGeneric({GenericInput{unit, in, std::nullopt}}, {size},
                       ElemKind::I64,
                       {IteratorType::parallel, IteratorType::reduction},
                       Value(), out,
                       [&](OpBuilder &bb, Location l, ArrayRef<Value>) {
                         Value i = linalg::IndexOp::create(bb, l, 0);
                         return arith::IndexCastOp::create(
                                    bb, l, bb.getI64Type(), i)
                             .getResult();
                       })
            ->getResult(0);
  }
  return {c,
          AffineMap::get(numLoops, 0, {getAffineDimExpr(dim, ctx)}, ctx),
          std::nullopt};
}

Value autoshard::onnx_import::buildLogSoftmax(NodeImporter &n, Value x,
                                              ArrayRef<int64_t> shape,
                                              ElemKind kind, int64_t axis) {
  return logSoftmax(n, x, shape, kind, axis);
}

void autoshard::onnx_import::registerReduceOps(OpTable &t) {
  for (const char *op :
       {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
        "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
        "ReduceSumSquare"})
    t[op] = convertReduce;
  t["ArgMax"] = convertArgReduce;
  t["ArgMin"] = convertArgReduce;
  t["TopK"] = convertTopK;
  for (const char *op : {"Softmax", "LogSoftmax", "Hardmax"})
    t[op] = convertSoftmaxFamily;
  t["CumSum"] = convertCumSum;
}
