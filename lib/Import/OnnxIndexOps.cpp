//===- OnnxIndexOps.cpp - Indexing ONNX ops: gathers, scatters, masks -----===//
//
// Ops that read or write by computed index. Each is a linalg.generic whose
// body finds its element with linalg.index and tensor.extract (a gather the
// runtime evaluates as a captured read), so no new kernel is needed.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <numeric>

using namespace mlir;
using namespace autoshard::onnx_import;
using mlir::utils::IteratorType;

namespace {

/// Size: the element count, known from the static shape.
LogicalResult convertSize(NodeImporter &n, StringRef) {
  HostTensor t;
  t.kind = ElemKind::I64;
  t.i = {n.in(0).constant ? n.in(0).constant->numel() : 1};
  if (!n.in(0).constant)
    for (int64_t d : n.in(0).shape)
      t.i[0] *= d;
  n.setOutput(0, std::move(t));
  return success();
}

/// An index read from a tensor inside a generic body, as `index`.
Value toIndex(OpBuilder &b, Location l, Value v) {
  return arith::IndexCastOp::create(b, l, b.getIndexType(), v);
}

/// NegativeLogLikelihoodLoss on log-probabilities `logp` [N, C, d...] with
/// integer targets [N, d...]: per element -logp[n, t, d] * w[t] (0 where
/// t == ignore_index), then reduced as `reduction` says ("mean" divides by
/// the summed weights of the kept elements). Computed in `kind`; the result
/// is rounded once to `outKind` (a float16/bfloat16 loss sums in f32).
LogicalResult nllLoss(NodeImporter &n, Value logp, ArrayRef<int64_t> shape,
                      ElemKind kind, ElemKind outKind, const Val &target,
                      const Val *weight) {
  if (isFloatKind(target.kind) || target.kind == ElemKind::Bool)
    return n.error() << "expects integer targets";
  if (static_cast<int64_t>(shape.size()) != target.rank() + 1 ||
      shape[0] != target.shape[0])
    return n.error() << "target shape does not match the input's [N, d...]";
  std::string reduction = "mean";
  if (const onnx::AttributeProto *a = n.attr("reduction"))
    reduction = a->s();
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return n.error() << "reduction '" << reduction << "' is not one of "
                     << "none, sum, mean";
  const onnx::AttributeProto *ignoreAttr = n.attr("ignore_index");
  int64_t ignore = ignoreAttr ? ignoreAttr->i() : 0;
  int64_t classes = shape[1];
  int64_t rank = target.rank(), loops = rank + 1;
  OpBuilder &b = n.getBuilder();
  MLIRContext *ctx = b.getContext();
  // Loops (n, c, d...) as logp's dims, c a reduction: the picked class is a
  // select over c, not a read at a computed index, so the batch (and d...)
  // split like any parallel dim and a rank needs only its own rows. Exactly
  // one c is taken (none for an ignored target), so the sum is exact.
  SmallVector<AffineExpr> tExprs = {getAffineDimExpr(0, ctx)};
  for (int64_t d = 2; d < loops; ++d)
    tExprs.push_back(getAffineDimExpr(d, ctx));
  AffineMap tMap = AffineMap::get(loops, 0, tExprs, ctx);
  SmallVector<IteratorType> iters(loops, IteratorType::parallel);
  iters[1] = IteratorType::reduction;
  SmallVector<GenericInput> ins = {
      GenericInput{n.materialize(target), tMap, std::nullopt},
      loopIndex(n, 1, classes, loops)};
  if (weight)
    ins.push_back(
        GenericInput{n.materialize(*weight),
                     AffineMap::get(loops, 0, {getAffineDimExpr(1, ctx)}, ctx),
                     std::nullopt});
  // One generic per output: the weighted loss and (for mean) the weight.
  auto perElement = [&](bool lossOut) {
    SmallVector<GenericInput> all(ins);
    if (lossOut)
      all.push_back(
          GenericInput{logp, b.getMultiDimIdentityMap(loops), std::nullopt});
    return n
        .buildGeneric(
            all, target.shape, kind, iters, n.zeroFilled(target.shape, kind),
            tMap,
            [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
              Value tv = a[0], acc = a.back();
              Type ft = acc.getType();
              if (tv.getType() != bb.getI64Type()) // int32 targets
                tv = arith::ExtSIOp::create(bb, l, bb.getI64Type(), tv);
              Value take = arith::CmpIOp::create(
                  bb, l, arith::CmpIPredicate::eq, tv, a[1]);
              if (ignoreAttr)
                take = arith::AndIOp::create(
                    bb, l, take,
                    arith::CmpIOp::create(
                        bb, l, arith::CmpIPredicate::ne, tv,
                        arith::ConstantOp::create(
                            bb, l, bb.getIntegerAttr(tv.getType(), ignore))));
              Value v = weight ? a[2]
                               : Value(arith::ConstantOp::create(
                                     bb, l, bb.getFloatAttr(ft, 1)));
              if (lossOut)
                v = arith::NegFOp::create(
                    bb, l, arith::MulFOp::create(bb, l, a[a.size() - 2], v));
              Value zero =
                  arith::ConstantOp::create(bb, l, bb.getFloatAttr(ft, 0));
              return arith::AddFOp::create(
                  bb, l, acc, arith::SelectOp::create(bb, l, take, v, zero));
            })
        ->getResult(0);
  };
  Value loss = perElement(true);
  // A strategy applies to the pick: its operands are the targets, the class
  // iota, the weights and the (log-)scores, whose dims are input 0's.
  SmallVector<int64_t> tDims(rank), xDims(loops);
  std::iota(tDims.begin(), tDims.end(), 0);
  std::iota(xDims.begin(), xDims.end(), 0);
  n.main.op = loss.getDefiningOp();
  n.main.operands = {OperandSource{1, tDims}, std::nullopt};
  if (weight)
    n.main.operands.push_back(OperandSource{2, {0}});
  n.main.operands.push_back(OperandSource{0, xDims});
  if (reduction == "none") {
    n.setOutput(0, narrowFromF32(n, loss, outKind), outKind);
    return success();
  }
  std::vector<int64_t> all(rank);
  std::iota(all.begin(), all.end(), 0);
  auto sum = [&](Value v) {
    return n.reduce(v, target.shape, all, kind,
                    [](OpBuilder &bb, Location l, ArrayRef<Value> a) {
                      return Value(arith::AddFOp::create(bb, l, a[0], a[1]));
                    });
  };
  Value total = sum(loss);
  if (reduction == "mean") {
    Value wsum = sum(perElement(false));
    total =
        n.buildGeneric(
             {GenericInput{total, AffineMap::get(0, 0, {}, b.getContext()),
                           std::nullopt},
              GenericInput{wsum, AffineMap::get(0, 0, {}, b.getContext()),
                           std::nullopt}},
             {}, kind, {}, Value(), AffineMap::get(0, 0, {}, b.getContext()),
             [](OpBuilder &bb, Location l, ArrayRef<Value> a) {
               return Value(arith::DivFOp::create(bb, l, a[0], a[1]));
             })
            ->getResult(0);
  }
  n.setOutput(0, narrowFromF32(n, total, outKind), outKind);
  return success();
}

LogicalResult convertLoss(NodeImporter &n, StringRef op) {
  if (!isFloatKind(n.in(0).kind))
    return n.error() << "expects a float input";
  // float16/bfloat16 scores and weights are widened once: the log-softmax,
  // the pick and the reduction run in f32 and each output is rounded once
  // (a narrow sum of 16 losses or of 1000 exponentials drifts by whole
  // units; test/Import/loss-half-bf16.test).
  FailureOr<ElemKind> outKind = widenHalfInputs(n, {2});
  if (failed(outKind))
    return failure();
  const Val &x = n.in(0);
  if (x.rank() < 2)
    return n.error() << "expects an input of rank 2 or more [N, C, d...]";
  const Val *weight = n.hasInput(2) ? &n.in(2) : nullptr;
  if (weight && (weight->rank() != 1 || weight->shape[0] != x.shape[1]))
    return n.error() << "weight must have one value per class";
  Value logp = n.materialize(x);
  if (op == "SoftmaxCrossEntropyLoss") {
    logp = buildLogSoftmax(n, logp, x.shape, x.kind, 1);
    const onnx::NodeProto &node = n.getNode();
    if (node.output_size() > 1 && !node.output(1).empty())
      n.setOutput(1, narrowFromF32(n, logp, *outKind), *outKind);
  }
  return nllLoss(n, logp, x.shape, x.kind, *outKind, n.in(1), weight);
}

/// Loops over `shape` with every loop's index as an operand (after `ins`).
SmallVector<GenericInput> withLoopIndices(NodeImporter &n,
                                          ArrayRef<GenericInput> ins,
                                          ArrayRef<int64_t> shape) {
  SmallVector<GenericInput> all(ins.begin(), ins.end());
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    all.push_back(loopIndex(n, d, shape[d], shape.size()));
  return all;
}

Value parallelGeneric(NodeImporter &n, ArrayRef<GenericInput> ins,
                      ArrayRef<int64_t> shape, ElemKind kind,
                      const NodeImporter::BodyFn &body) {
  int64_t rank = shape.size();
  return n
      .buildGeneric(ins, shape, kind,
                    SmallVector<IteratorType>(rank, IteratorType::parallel),
                    Value(), n.getBuilder().getMultiDimIdentityMap(rank), body)
      ->getResult(0);
}

/// A possibly negative index into a dim of `size`, as `index`.
Value wrapIndex(OpBuilder &b, Location l, Value v, int64_t size) {
  Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(v.getType(), 0));
  Value sz =
      arith::ConstantOp::create(b, l, b.getIntegerAttr(v.getType(), size));
  Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, v, zero);
  return toIndex(b, l,
                 arith::SelectOp::create(b, l, neg,
                                         arith::AddIOp::create(b, l, v, sz), v));
}

/// GatherElements: out[p] = data[p with p[axis] = indices[p]].
LogicalResult convertGatherElements(NodeImporter &n, StringRef) {
  const Val &x = n.in(0), &idx = n.in(1);
  if (isFloatKind(idx.kind) || idx.kind == ElemKind::Bool)
    return n.error() << "expects integer indices";
  if (idx.rank() != x.rank())
    return n.error() << "indices must have the data's rank";
  int64_t axis = n.attrInt("axis", 0);
  if (failed(n.normalizeAxis(axis, x.rank())))
    return failure();
  Value data = n.materialize(x);
  int64_t rank = x.rank();
  AffineMap id = n.getBuilder().getMultiDimIdentityMap(rank);
  Value r = parallelGeneric(
      n,
      withLoopIndices(n, {GenericInput{n.materialize(idx), id, std::nullopt}},
                      idx.shape),
      idx.shape, x.kind, [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d)
          at.push_back(d == axis ? wrapIndex(b, l, a[0], x.shape[axis])
                                 : toIndex(b, l, a[1 + d]));
        return Value(tensor::ExtractOp::create(b, l, data, at));
      });
  n.setOutput(0, r, x.kind);
  return success();
}

/// The element of integer `idx` at `at` (extracted in a generic body), as
/// an index into a dim of `size` (negative counts from the end).
Value readIndex(OpBuilder &b, Location l, Value idx, ArrayRef<Value> at,
                int64_t size) {
  Value v = tensor::ExtractOp::create(b, l, idx, at);
  if (v.getType() != b.getI64Type())
    v = arith::ExtSIOp::create(b, l, b.getI64Type(), v);
  return wrapIndex(b, l, v, size);
}

Value indexConst(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantIndexOp::create(b, l, v);
}

/// GatherND: out[i..., r...] = data[i[:b]..., indices[i...], r...] with the
/// indices' last dim (k) naming k data dims after the b batch dims.
LogicalResult convertGatherND(NodeImporter &n, StringRef) {
  const Val &x = n.in(0), &idx = n.in(1);
  if (isFloatKind(idx.kind) || idx.kind == ElemKind::Bool)
    return n.error() << "expects integer indices";
  int64_t b = n.attrInt("batch_dims", 0), q = idx.rank();
  if (q < 1 || b < 0 || b >= q || b > x.rank())
    return n.error() << "batch_dims " << b << " does not fit indices of rank "
                     << q;
  int64_t k = idx.shape[q - 1];
  if (b + k > x.rank())
    return n.error() << "indices name " << k << " dims after " << b
                     << " batch dims of a rank-" << x.rank() << " input";
  for (int64_t d = 0; d < b; ++d)
    if (idx.shape[d] != x.shape[d])
      return n.error() << "batch dim " << d << " differs between data and "
                       << "indices";
  std::vector<int64_t> out(idx.shape.begin(), idx.shape.end() - 1);
  out.insert(out.end(), x.shape.begin() + b + k, x.shape.end());
  Value data = n.materialize(x), ind = n.materialize(idx);
  Value r = parallelGeneric(
      n, withLoopIndices(n, {}, out), out, x.kind,
      [&](OpBuilder &bb, Location l, ArrayRef<Value> a) {
        SmallVector<Value> lead, at;
        for (int64_t d = 0; d < q - 1; ++d)
          lead.push_back(toIndex(bb, l, a[d]));
        at.append(lead.begin(), lead.begin() + b);
        for (int64_t c = 0; c < k; ++c) {
          SmallVector<Value> ia(lead);
          ia.push_back(indexConst(bb, l, c));
          at.push_back(readIndex(bb, l, ind, ia, x.shape[b + c]));
        }
        for (int64_t d = q - 1; d < static_cast<int64_t>(out.size()); ++d)
          at.push_back(toIndex(bb, l, a[d]));
        return Value(tensor::ExtractOp::create(bb, l, data, at));
      });
  n.setOutput(0, r, x.kind);
  return success();
}

/// `acc` combined with an update `u` as `reduction` says.
Value combine(OpBuilder &b, Location l, StringRef reduction, Value acc,
              Value u) {
  if (reduction == "add")
    return floatOrInt<arith::AddFOp, arith::AddIOp>(b, l, acc, u);
  if (reduction == "mul")
    return floatOrInt<arith::MulFOp, arith::MulIOp>(b, l, acc, u);
  if (reduction == "max")
    return floatOrInt<arith::MaximumFOp, arith::MaxSIOp>(b, l, acc, u);
  if (reduction == "min")
    return floatOrInt<arith::MinimumFOp, arith::MinSIOp>(b, l, acc, u);
  return u;
}

FailureOr<std::string> scatterReduction(NodeImporter &n) {
  std::string r = "none";
  if (const onnx::AttributeProto *a = n.attr("reduction"))
    r = a->s();
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    return n.error() << "reduction '" << r << "' is not one of none, add, "
                     << "mul, max, min",
           failure();
  return r;
}

/// A scatter as a generic over the output (initialized with the data) and
/// one reduction loop over the `count` updates, visited in order so that a
/// repeated index keeps the last update (reduction none) as ONNX does.
/// `update(b, l, p, m)`: (hit, value) of update m for output position p.
using UpdateFn = std::function<std::pair<Value, Value>(
    OpBuilder &, Location, ArrayRef<Value>, Value)>;
Value scatterGeneric(NodeImporter &n, const Val &x, int64_t count,
                     StringRef reduction, const UpdateFn &update) {
  OpBuilder &b = n.getBuilder();
  MLIRContext *ctx = b.getContext();
  int64_t rank = x.rank();
  SmallVector<GenericInput> ins;
  for (int64_t d = 0; d < rank; ++d)
    ins.push_back(loopIndex(n, d, x.shape[d], rank + 1));
  ins.push_back(loopIndex(n, rank, count, rank + 1));
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  iters.push_back(IteratorType::reduction);
  // The data copied into a fresh tensor: the accumulator starts from it.
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  Value init = parallelGeneric(
      n, {GenericInput{n.materialize(x), id, std::nullopt}}, x.shape, x.kind,
      [](OpBuilder &, Location, ArrayRef<Value> a) { return a[0]; });
  return n
      .buildGeneric(ins, x.shape, x.kind, iters, init,
                    AffineMap::getMultiDimIdentityMap(rank + 1, ctx)
                        .getMajorSubMap(rank),
                    [&](OpBuilder &bb, Location l, ArrayRef<Value> a) {
                      SmallVector<Value> p;
                      for (int64_t d = 0; d < rank; ++d)
                        p.push_back(toIndex(bb, l, a[d]));
                      auto [hit, u] = update(bb, l, p, a[rank]);
                      Value acc = a.back();
                      return Value(arith::SelectOp::create(
                          bb, l, hit, combine(bb, l, reduction, acc, u), acc));
                    })
      ->getResult(0);
}

/// ScatterElements: out = data; out[q with q[axis] = indices[q]] = updates[q].
LogicalResult convertScatterElements(NodeImporter &n, StringRef) {
  const Val &x = n.in(0), &idx = n.in(1), &upd = n.in(2);
  if (isFloatKind(idx.kind) || idx.kind == ElemKind::Bool)
    return n.error() << "expects integer indices";
  if (idx.rank() != x.rank() || upd.shape != idx.shape)
    return n.error() << "indices and updates must have one shape, of the "
                     << "data's rank";
  int64_t axis = n.attrInt("axis", 0), rank = x.rank();
  if (failed(n.normalizeAxis(axis, rank)))
    return failure();
  for (int64_t d = 0; d < rank; ++d)
    if (idx.shape[d] > x.shape[d])
      return n.error() << "indices dim " << d << " is larger than the data's";
  FailureOr<std::string> red = scatterReduction(n);
  if (failed(red))
    return failure();
  Value ind = n.materialize(idx), u = n.materialize(upd);
  Value r = scatterGeneric(
      n, x, idx.shape[axis], *red,
      [&](OpBuilder &b, Location l, ArrayRef<Value> p, Value m) {
        // Update q = p with q[axis] = m; it exists where p is inside the
        // indices' shape on the other dims (else read q = 0, not hit).
        Value inside = arith::ConstantOp::create(b, l, b.getBoolAttr(true));
        SmallVector<Value> q;
        Value zero = indexConst(b, l, 0);
        for (int64_t d = 0; d < rank; ++d) {
          if (d == axis) {
            q.push_back(toIndex(b, l, m));
            continue;
          }
          Value ok = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                           p[d],
                                           indexConst(b, l, idx.shape[d]));
          inside = arith::AndIOp::create(b, l, inside, ok);
          q.push_back(arith::SelectOp::create(b, l, ok, p[d], zero));
        }
        Value target = readIndex(b, l, ind, q, x.shape[axis]);
        Value hit = arith::AndIOp::create(
            b, l, inside,
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, target,
                                  p[axis]));
        return std::make_pair(hit,
                              Value(tensor::ExtractOp::create(b, l, u, q)));
      });
  n.setOutput(0, r, x.kind);
  return success();
}

/// ScatterND: out = data; out[indices[i], r...] = updates[i, r...] for each
/// index tuple i (the indices' last dim, k, names the leading data dims).
LogicalResult convertScatterND(NodeImporter &n, StringRef) {
  const Val &x = n.in(0), &idx = n.in(1), &upd = n.in(2);
  if (isFloatKind(idx.kind) || idx.kind == ElemKind::Bool)
    return n.error() << "expects integer indices";
  int64_t q = idx.rank(), k = q ? idx.shape[q - 1] : 0, rank = x.rank();
  if (q < 1 || k < 1 || k > rank)
    return n.error() << "indices' last dim must name 1 to " << rank
                     << " data dims";
  std::vector<int64_t> want(idx.shape.begin(), idx.shape.end() - 1);
  want.insert(want.end(), x.shape.begin() + k, x.shape.end());
  if (upd.shape != want)
    return n.error() << "updates must have shape indices.shape[:-1] + "
                     << "data.shape[k:]";
  FailureOr<std::string> red = scatterReduction(n);
  if (failed(red))
    return failure();
  int64_t count = 1;
  for (int64_t d = 0; d + 1 < q; ++d)
    count *= idx.shape[d];
  Value ind = n.materialize(idx), u = n.materialize(upd);
  Value r = scatterGeneric(
      n, x, count, *red,
      [&](OpBuilder &b, Location l, ArrayRef<Value> p, Value m) {
        // Tuple m's position in the indices' leading dims, row-major.
        SmallVector<Value> lead(q - 1);
        Value rest = toIndex(b, l, m);
        for (int64_t d = q - 2; d >= 0; --d) {
          Value sz = indexConst(b, l, idx.shape[d]);
          lead[d] = arith::RemUIOp::create(b, l, rest, sz);
          rest = arith::DivUIOp::create(b, l, rest, sz);
        }
        Value hit = arith::ConstantOp::create(b, l, b.getBoolAttr(true));
        for (int64_t c = 0; c < k; ++c) {
          SmallVector<Value> at(lead);
          at.push_back(indexConst(b, l, c));
          Value t = readIndex(b, l, ind, at, x.shape[c]);
          hit = arith::AndIOp::create(
              b, l, hit,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, t, p[c]));
        }
        SmallVector<Value> at(lead);
        at.append(p.begin() + k, p.end());
        return std::make_pair(hit,
                              Value(tensor::ExtractOp::create(b, l, u, at)));
      });
  n.setOutput(0, r, x.kind);
  return success();
}

/// Tile: out[p] = x[p mod shape].
LogicalResult convertTile(NodeImporter &n, StringRef) {
  const Val &x = n.in(0);
  FailureOr<std::vector<int64_t>> reps = n.constInts(1, "the repeats");
  if (failed(reps))
    return failure();
  if (static_cast<int64_t>(reps->size()) != x.rank())
    return n.error() << "repeats must have one entry per input dim";
  std::vector<int64_t> out;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if ((*reps)[d] < 0)
      return n.error() << "repeats must not be negative";
    out.push_back(x.shape[d] * (*reps)[d]);
  }
  Value data = n.materialize(x);
  Value r = parallelGeneric(
      n, withLoopIndices(n, {}, out), out, x.kind,
      [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
        SmallVector<Value> at;
        for (int64_t d = 0; d < x.rank(); ++d) {
          Value sz = arith::ConstantOp::create(
              b, l, b.getI64IntegerAttr(std::max<int64_t>(x.shape[d], 1)));
          at.push_back(toIndex(b, l, arith::RemSIOp::create(b, l, a[d], sz)));
        }
        return Value(tensor::ExtractOp::create(b, l, data, at));
      });
  n.setOutput(0, r, x.kind);
  return success();
}

/// Trilu: keep x where col - row >= k (upper) or <= k (lower), else 0.
LogicalResult convertTrilu(NodeImporter &n, StringRef) {
  const Val &x = n.in(0);
  if (x.rank() < 2)
    return n.error() << "expects an input of rank 2 or more";
  int64_t k = 0;
  if (n.hasInput(1)) {
    FailureOr<std::vector<int64_t>> kv = n.constInts(1, "k");
    if (failed(kv))
      return failure();
    if (kv->size() != 1)
      return n.error() << "k must hold one value";
    k = (*kv)[0];
  }
  bool upper = n.attrInt("upper", 1);
  int64_t rank = x.rank();
  AffineMap id = n.getBuilder().getMultiDimIdentityMap(rank);
  MLIRContext *ctx = n.getBuilder().getContext();
  Value r = parallelGeneric(
      n,
      {GenericInput{n.materialize(x), id, std::nullopt},
       loopIndex(n, rank - 2, x.shape[rank - 2], rank),
       loopIndex(n, rank - 1, x.shape[rank - 1], rank)},
      x.shape, x.kind, [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
        Value diff = arith::SubIOp::create(b, l, a[2], a[1]);
        Value kc = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(k));
        Value keep = arith::CmpIOp::create(
            b, l, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
            diff, kc);
        Type t = a[3].getType();
        Value zero = isa<FloatType>(t)
                         ? Value(arith::ConstantOp::create(
                               b, l, b.getFloatAttr(t, 0.0)))
                         : Value(arith::ConstantOp::create(
                               b, l, b.getIntegerAttr(t, 0)));
        return Value(arith::SelectOp::create(b, l, keep, a[0], zero));
      });
  (void)ctx;
  n.setOutput(0, r, x.kind);
  return success();
}

/// OneHot: values[1] where the class index (axis) equals indices, else
/// values[0].
LogicalResult convertOneHot(NodeImporter &n, StringRef) {
  const Val &idx = n.in(0);
  FailureOr<std::vector<int64_t>> depthV = n.constInts(1, "depth");
  if (failed(depthV))
    return failure();
  if (depthV->size() != 1 || (*depthV)[0] <= 0)
    return n.error() << "depth must be one positive value";
  if (!n.hasInput(2) || !n.in(2).isConstant() ||
      n.in(2).constant->numel() != 2)
    return n.error() << "values (input #2) must be a constant [off, on]";
  int64_t depth = (*depthV)[0];
  const HostTensor &vals = *n.in(2).constant;
  int64_t rank = idx.rank() + 1;
  int64_t axis = n.attrInt("axis", -1);
  if (failed(n.normalizeAxis(axis, rank)))
    return failure();
  std::vector<int64_t> out(idx.shape.begin(), idx.shape.end());
  out.insert(out.begin() + axis, depth);
  MLIRContext *ctx = n.getBuilder().getContext();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      exprs.push_back(getAffineDimExpr(d, ctx));
  Value r = parallelGeneric(
      n,
      {GenericInput{n.materialize(idx), AffineMap::get(rank, 0, exprs, ctx),
                    std::nullopt},
       loopIndex(n, axis, depth, rank)},
      out, vals.kind, [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
        Value iv = a[0];
        if (isFloatKind(idx.kind))
          iv = arith::FPToSIOp::create(b, l, b.getI64Type(), iv);
        else if (iv.getType() != b.getI64Type())
          iv = arith::ExtSIOp::create(b, l, b.getI64Type(), iv);
        Value d = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(depth));
        Value zero = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0));
        iv = arith::SelectOp::create(
            b, l,
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, iv, zero),
            arith::AddIOp::create(b, l, iv, d), iv);
        Value hit =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, iv, a[1]);
        return Value(arith::SelectOp::create(
            b, l, hit, n.scalarConstant(b, vals.getF(1), vals.kind),
            n.scalarConstant(b, vals.getF(0), vals.kind)));
      });
  n.setOutput(0, r, vals.kind);
  return success();
}

/// Range folds when its inputs are known (OnnxFolding.cpp); here one is not:
/// its shape would depend on run-time values.
LogicalResult convertRange(NodeImporter &n, StringRef) {
  static const char *kWhat[] = {"start", "limit", "delta"};
  for (int64_t i = 0; i < 3; ++i)
    if (failed(n.constInts(i, kWhat[i])))
      return failure();
  return n.error() << "could not be folded";
}

} // namespace

void autoshard::onnx_import::registerIndexOps(OpTable &t) {
  t["Range"] = convertRange;
  t["GatherElements"] = convertGatherElements;
  t["GatherND"] = convertGatherND;
  t["ScatterElements"] = convertScatterElements;
  t["ScatterND"] = convertScatterND;
  t["Tile"] = convertTile;
  t["Trilu"] = convertTrilu;
  t["OneHot"] = convertOneHot;
  t["Size"] = convertSize;
  t["NegativeLogLikelihoodLoss"] = convertLoss;
  t["SoftmaxCrossEntropyLoss"] = convertLoss;
}
