//===- SpmdBuilder.cpp - Local types, shard offsets, collective ops -------===//

#include "autoshard/Partition/SpmdBuilder.h"

#include "autoshard/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace autoshard;

RankedTensorType SpmdBuilder::getLocalType(RankedTensorType global,
                                           const TensorLayout &layout) const {
  SmallVector<int64_t> shape(global.getShape());
  for (int64_t d = 0; d < global.getRank(); ++d) {
    if (layout.dimAxes[d].empty() || ShapedType::isDynamic(shape[d]))
      continue;
    if (layout.hasUnevenDim(d)) {
      const std::vector<int64_t> &sizes = layout.unevenSizes[d];
      shape[d] = llvm::all_equal(sizes) ? sizes.front() : ShapedType::kDynamic;
      continue;
    }
    shape[d] /= layout.getNumShards(mesh, d);
  }
  return RankedTensorType::get(shape, global.getElementType(),
                               global.getEncoding());
}

static Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value SpmdBuilder::buildGroupIndex(OpBuilder &b, Location loc,
                                   ArrayRef<int64_t> axes) const {
  if (axes.empty())
    return indexConst(b, loc, 0);
  SmallVector<int16_t> gridAxes(axes.begin(), axes.end());
  SmallVector<Type> types(axes.size(), b.getIndexType());
  auto coords = shard::ProcessMultiIndexOp::create(b, loc, types, gridName,
                                                   gridAxes);
  // Row-major over the listed axes, like DeviceMesh::getIndexInGroup.
  Value idx = coords->getResult(0);
  for (size_t i = 1; i < axes.size(); ++i) {
    Value scaled = arith::MulIOp::create(
        b, loc, idx, indexConst(b, loc, mesh.getAxisSize(axes[i])));
    idx = arith::AddIOp::create(b, loc, scaled, coords->getResult(i));
  }
  return idx;
}

Value SpmdBuilder::buildShardIndex(OpBuilder &b, Location loc,
                                   const TensorLayout &layout,
                                   int64_t dim) const {
  return buildGroupIndex(b, loc, layout.dimAxes[dim]);
}

/// `table[idx]` for a small table of constants, as a chain of selects: plain
/// scalar arith that every backend runs.
static Value selectFromTable(OpBuilder &b, Location loc, Value idx,
                             ArrayRef<int64_t> table) {
  Value result = indexConst(b, loc, table.front());
  for (size_t i = 1; i < table.size(); ++i) {
    if (table[i] == table.front())
      continue;
    Value isI = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, idx,
                                      indexConst(b, loc, i));
    result = arith::SelectOp::create(b, loc, isI,
                                     indexConst(b, loc, table[i]), result);
  }
  return result;
}

Value SpmdBuilder::buildShardOffset(OpBuilder &b, Location loc,
                                    const TensorLayout &layout, int64_t dim,
                                    int64_t extent) const {
  if (layout.dimAxes[dim].empty())
    return indexConst(b, loc, 0);
  Value idx = buildShardIndex(b, loc, layout, dim);
  int64_t n = layout.getNumShards(mesh, dim);
  if (!layout.hasUnevenDim(dim))
    return arith::MulIOp::create(b, loc, idx, indexConst(b, loc, extent / n));
  SmallVector<int64_t> offsets;
  for (int64_t s = 0; s < n; ++s)
    offsets.push_back(layout.getShardOffset(mesh, dim, extent, s));
  return selectFromTable(b, loc, idx, offsets);
}

Value SpmdBuilder::buildShardSize(OpBuilder &b, Location loc,
                                  const TensorLayout &layout, int64_t dim,
                                  int64_t extent) const {
  if (layout.dimAxes[dim].empty())
    return indexConst(b, loc, extent);
  int64_t n = layout.getNumShards(mesh, dim);
  if (!layout.hasUnevenDim(dim) || llvm::all_equal(layout.unevenSizes[dim]))
    return indexConst(b, loc, layout.getShardSize(mesh, dim, extent, 0));
  Value idx = buildShardIndex(b, loc, layout, dim);
  SmallVector<int64_t> sizes;
  for (int64_t s = 0; s < n; ++s)
    sizes.push_back(layout.getShardSize(mesh, dim, extent, s));
  return selectFromTable(b, loc, idx, sizes);
}

static shard::ReductionKind toShard(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return shard::ReductionKind::Sum;
  case ReductionKind::Max:
    return shard::ReductionKind::Max;
  case ReductionKind::Min:
    return shard::ReductionKind::Min;
  case ReductionKind::Product:
    return shard::ReductionKind::Product;
  }
  return shard::ReductionKind::Sum;
}

std::optional<Value> SpmdBuilder::emitStep(OpBuilder &b, Location loc,
                                           Value input,
                                           RankedTensorType global,
                                           const CollectiveStep &step,
                                           std::string &error) const {
  auto inType = cast<RankedTensorType>(input.getType());
  RankedTensorType outType = getLocalType(global, step.after);
  SmallVector<int16_t> axes(step.axes.begin(), step.axes.end());
  auto unevenOn = [](const TensorLayout &l, int64_t d) {
    return d >= 0 && l.hasUnevenDim(d);
  };
  auto stepName = [&] { return step.str(mesh); };
  // An uneven dim may only be gathered or sliced as a whole: the group is
  // then exactly the dim's shards, so the group index is the shard index.
  auto wholeDim = [&](const TensorLayout &l) {
    return l.dimAxes[step.dim] == step.axes;
  };
  auto rejectUneven = [&]() -> bool {
    for (int64_t d : {step.dim, step.srcDim})
      if (unevenOn(step.before, d) || unevenOn(step.after, d)) {
        error = "uneven shards are not supported by the step " + stepName();
        return true;
      }
    return false;
  };

  switch (step.kind) {
  case CollectiveKind::AllGather: {
    if (unevenOn(step.before, step.dim)) {
      if (!wholeDim(step.before) || unevenOn(step.after, step.dim)) {
        error = "an uneven dim can only be gathered as a whole, not by " +
                stepName();
        return std::nullopt;
      }
      return dist::AllGatherUnevenOp::create(
                 b, loc, outType, input, gridName, axes,
                 APInt(64, step.dim), step.before.unevenSizes[step.dim])
          .getResult();
    }
    if (rejectUneven())
      return std::nullopt;
    return shard::AllGatherOp::create(b, loc, outType, gridName, axes, input,
                                      APInt(64, step.dim))
        .getResult();
  }
  case CollectiveKind::AllSlice: {
    if (unevenOn(step.after, step.dim)) {
      if (!wholeDim(step.after) || unevenOn(step.before, step.dim)) {
        error = "an uneven dim can only be sliced as a whole, not by " +
                stepName();
        return std::nullopt;
      }
      return dist::AllSliceUnevenOp::create(
                 b, loc, outType, input, gridName, axes,
                 APInt(64, step.dim), step.after.unevenSizes[step.dim])
          .getResult();
    }
    if (rejectUneven())
      return std::nullopt;
    return shard::AllSliceOp::create(b, loc, outType, input, gridName, axes,
                                     step.dim)
        .getResult();
  }
  case CollectiveKind::AllReduce:
    return shard::AllReduceOp::create(b, loc, outType, gridName, axes, input,
                                      toShard(step.reduction))
        .getResult();
  case CollectiveKind::ReduceScatter:
    if (rejectUneven())
      return std::nullopt;
    return shard::ReduceScatterOp::create(b, loc, outType, gridName, axes,
                                          input, toShard(step.reduction),
                                          APInt(64, step.dim))
        .getResult();
  case CollectiveKind::AllToAll:
    if (rejectUneven())
      return std::nullopt;
    return shard::AllToAllOp::create(b, loc, outType, gridName, axes, input,
                                     APInt(64, step.dim),
                                     APInt(64, step.srcDim))
        .getResult();
  case CollectiveKind::Permute: {
    if (inType != outType) {
      error = "a permute must keep the local shape, but " + stepName() +
              " changes it";
      return std::nullopt;
    }
    SmallVector<int64_t> sources, targets;
    for (auto [s, t] : step.pairs) {
      sources.push_back(s);
      targets.push_back(t);
    }
    return dist::PermuteOp::create(b, loc, input, gridName, sources, targets)
        .getResult();
  }
  case CollectiveKind::MakePartial:
    return dist::MakePartialOp::create(b, loc, input, gridName, axes,
                                       toShard(step.reduction))
        .getResult();
  }
  error = "unknown collective step";
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Counting the emitted communication
//===----------------------------------------------------------------------===//

/// Bytes of a local tensor; dynamic (uneven) extents count as 0 elements,
/// which is why uneven gathers are counted on their static result.
static double tensorBytes(Type type) {
  auto t = cast<ShapedType>(type);
  if (!t.hasStaticShape())
    return 0.0;
  // Index elements have no bit width of their own: the runtime stores them
  // as 64-bit integers (a training step gathers index-typed labels).
  Type elem = t.getElementType();
  int64_t bits = elem.isIndex() ? 64 : elem.getIntOrFloatBitWidth();
  return static_cast<double>(t.getNumElements()) *
         static_cast<double>((bits + 7) / 8);
}

CommStats autoshard::countCollectives(Operation *module) {
  CommStats stats;
  SymbolTableCollection tables;
  auto groupSize = [&](Operation *op, FlatSymbolRefAttr gridName,
                       ArrayRef<int16_t> axes) -> int64_t {
    auto grid =
        tables.lookupNearestSymbolFrom<shard::GridOp>(op, gridName.getAttr());
    if (!grid)
      return 1;
    int64_t n = 1;
    if (axes.empty()) // upstream: empty grid_axes = every axis
      for (int64_t s : grid.getShape())
        n *= s;
    for (int16_t a : axes)
      if (a >= 0 && a < grid.getRank())
        n *= grid.getShape()[a];
    return n;
  };
  auto add = [&](CollectiveKind kind, double bytes) {
    ++stats.collectives[std::string(stringifyCollectiveKind(kind))];
    stats.commBytesPerDevice += bytes;
  };
  auto frac = [](int64_t n) {
    return n > 0 ? static_cast<double>(n - 1) / static_cast<double>(n) : 0.0;
  };
  module->walk([&](Operation *op) {
    if (auto o = dyn_cast<shard::AllReduceOp>(op))
      add(CollectiveKind::AllReduce,
          2.0 * frac(groupSize(op, o.getGridAttr(), o.getGridAxes())) *
              tensorBytes(o.getInput().getType()));
    else if (auto o = dyn_cast<shard::AllGatherOp>(op))
      add(CollectiveKind::AllGather,
          frac(groupSize(op, o.getGridAttr(), o.getGridAxes())) *
              tensorBytes(o.getResult().getType()));
    else if (auto o = dyn_cast<dist::AllGatherUnevenOp>(op))
      add(CollectiveKind::AllGather,
          frac(groupSize(op, o.getGridAttr(), o.getGridAxes())) *
              tensorBytes(o.getResult().getType()));
    else if (auto o = dyn_cast<shard::ReduceScatterOp>(op))
      add(CollectiveKind::ReduceScatter,
          frac(groupSize(op, o.getGridAttr(), o.getGridAxes())) *
              tensorBytes(o.getInput().getType()));
    else if (auto o = dyn_cast<shard::AllToAllOp>(op))
      add(CollectiveKind::AllToAll,
          frac(groupSize(op, o.getGridAttr(), o.getGridAxes())) *
              tensorBytes(o.getInput().getType()));
    else if (auto o = dyn_cast<dist::PermuteOp>(op))
      add(CollectiveKind::Permute, tensorBytes(o.getInput().getType()));
    else if (isa<shard::AllSliceOp, dist::AllSliceUnevenOp>(op))
      add(CollectiveKind::AllSlice, 0.0);
    else if (isa<dist::MakePartialOp>(op))
      add(CollectiveKind::MakePartial, 0.0);
  });
  return stats;
}
