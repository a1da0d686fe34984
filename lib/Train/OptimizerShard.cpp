//===- OptimizerShard.cpp - Optimizer state split over the data axis ------===//
//
// Optimizer parallel (MindSpore) / ZeRO-1: every parameter of `threshold`
// bytes or more keeps its optimizer state and computes its update split over
// the data axis. Nothing is rewritten by hand: the pass pins layouts with
// `dist.annotate` and propagation derives the collectives.
//
//   state argument     annotated P + data axis on one dim (the shard each
//                      rank keeps between steps)
//   updated state      the same (tied to that argument: no reshard)
//   updated parameter  the same: each rank updates its slice
//   parameter argument untouched: P, not split over the data axis (where
//                      nothing annotates it, propagation's choice)
//
// where P is the parameter's own layout (its forward `dist.annotate`, else
// replicated). The gradient of a batch-split step is a partial sum over the
// data axis; the update now reads it split, so its all-reduce becomes a
// reduce-scatter, and the updated parameter, tied to an argument replicated
// over the data axis, is all-gathered (TiedResults). Shared state (Adam's
// step count), scalar parameters and parameters already split over the data
// axis are left alone.
//
// The data axis goes on the major-most dim that divides by it times that
// dim's existing split, as the minor-most axis of that dim (so the
// reduce-scatter and the all-gather are single steps).
//
// A parameter with no such dim gets an uneven split of its rows, stored
// padded (ZeRO's padded partitions): its optimizer state has the padded
// type (`shardedStateType`: one dim rounded up to a multiple of its split
// times the data axis, the extra rows zero), the step pads the parameter and
// its gradient to that type for the update and slices the updated parameter
// back (TrainingStep.cpp), and the padded values are split evenly. Each rank
// keeps ceil(rows / shards) rows of state; the real rows split unevenly
// (10 rows on 4 ranks: 3, 3, 3, 1). The runtime plans static shapes only,
// which is why the split is padded rather than a dynamic `sizes(...)`
// layout. A zero pad passes the gradient's pending partial sum through
// (RulesTensor.cpp), so the padded gradient is reduce-scattered like an
// evenly split one, moving the padded shape's bytes.
//
// With micro-batches, the gradient accumulated over them lives split too
// (MindSpore's `gradient_accumulation_shard`: "the cumulative gradient
// variable will be sharded on the data parallelism", at the price of one
// reduce-scatter per micro-batch): every accumulation add of a split
// parameter (`kAccumulatesAttr`, TrainingStep.cpp) and the first
// micro-batch's gradient are pinned to the split layout.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Train/OptimizerShard.h"

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "autoshard/Dialect/Dist/IR/DistOps.h"
#include "autoshard/Train/Optimizer.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace autoshard;

namespace {

StringRef nameOf(func::FuncOp f, unsigned i) {
  if (auto n = f.getArgAttrOfType<StringAttr>(i, "dist.name"))
    return n.getValue();
  return "";
}

bool isParam(func::FuncOp f, unsigned i) {
  return f.getArgAttr(i, "dist.weight") || f.getArgAttr(i, "dist.param");
}

/// The suffixes of per-parameter optimizer state (".exp_avg", ...), as
/// Optimizer.cpp names them, for every optimizer.
SmallVector<std::string> stateSuffixes(Type paramType) {
  SmallVector<std::string> suffixes;
  for (const char *kind : {"sgd", "momentum", "adam", "adamw"}) {
    train::OptimizerConfig c;
    c.kind = kind;
    for (const train::StateSlot &slot : train::optimizerState(c, {paramType}))
      if (slot.param >= 0 && !llvm::is_contained(suffixes, slot.suffix))
        suffixes.push_back(slot.suffix);
  }
  return suffixes;
}

int64_t bytesOf(RankedTensorType type) {
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

/// The layout the forward pins parameter `arg` to (the highest-priority
/// `dist.annotate` of it), without partial axes; replicated when none.
TensorLayout paramLayout(BlockArgument arg) {
  auto type = cast<RankedTensorType>(arg.getType());
  dist::AnnotateOp best;
  for (Operation *user : arg.getUsers())
    if (auto a = dyn_cast<dist::AnnotateOp>(user))
      if (!best || a.getPriority() > best.getPriority())
        best = a;
  if (!best)
    return TensorLayout::replicated(type.getRank());
  TensorLayout l = best.getLayout().toTensorLayout();
  l.partialAxes.clear();
  return l;
}

/// `param` plus the data axis `axis` as the minor-most axis of the
/// major-most dim that divides by it; failure when none does.
FailureOr<TensorLayout> splitOverData(const TensorLayout &param,
                                      RankedTensorType type,
                                      const DeviceMesh &mesh, int64_t axis) {
  int64_t size = mesh.getAxisSize(axis);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (param.hasUnevenDim(d))
      continue;
    int64_t shards = param.getNumShards(mesh, d) * size;
    if (type.getDimSize(d) % shards != 0)
      continue;
    TensorLayout l = param;
    l.dimAxes[d].push_back(axis);
    return l;
  }
  return failure();
}

/// The padded type of a parameter with no dim that divides over the data
/// axis: the major-most dim its own layout does not split (else the
/// major-most evenly split one), rounded up to a multiple of its shards
/// times the data axis.
FailureOr<RankedTensorType> paddedType(const TensorLayout &param,
                                       RankedTensorType type,
                                       const DeviceMesh &mesh, int64_t axis) {
  std::optional<int64_t> dim;
  for (int64_t d = 0; d < type.getRank() && !dim; ++d)
    if (!param.hasUnevenDim(d) && param.getNumShards(mesh, d) == 1)
      dim = d;
  for (int64_t d = 0; d < type.getRank() && !dim; ++d)
    if (!param.hasUnevenDim(d))
      dim = d;
  if (!dim)
    return failure();
  int64_t shards = param.getNumShards(mesh, *dim) * mesh.getAxisSize(axis);
  SmallVector<int64_t> shape(type.getShape());
  shape[*dim] = llvm::divideCeil(shape[*dim], shards) * shards;
  return type.clone(shape);
}

/// What optimizer shard does with one parameter.
struct ParamShard {
  bool split = false;     // state and update split over the data axis
  TensorLayout layout;    // of the (padded) state and update
  RankedTensorType state; // the state's type: the parameter's, or padded
};

/// The decision for parameter `arg` (its layout from its forward
/// `dist.annotate`): failure only for a parameter that neither divides nor
/// pads (every dim unevenly split already).
FailureOr<ParamShard> planParam(BlockArgument arg, const DeviceMesh &mesh,
                                int64_t axis, int64_t threshold) {
  auto type = cast<RankedTensorType>(arg.getType());
  ParamShard plan;
  plan.state = type;
  // A scalar has nothing to split (no layout spreads it), and a dynamic
  // shape no size to weigh: both stay as propagation lays them out.
  if (type.getRank() == 0 || !type.hasStaticShape() ||
      bytesOf(type) < threshold || mesh.getAxisSize(axis) == 1)
    return plan;
  TensorLayout own = paramLayout(arg);
  // Already split over the data axis: its state follows it as it is.
  if (own.getDimOfAxis(axis))
    return plan;
  FailureOr<TensorLayout> split = splitOverData(own, type, mesh, axis);
  if (failed(split)) {
    FailureOr<RankedTensorType> padded = paddedType(own, type, mesh, axis);
    if (failed(padded))
      return failure();
    plan.state = *padded;
    split = splitOverData(own, *padded, mesh, axis);
  }
  plan.split = true;
  plan.layout = *split;
  return plan;
}

/// Pins `v` to `layout` with a `dist.annotate` at `b`'s insertion point
/// that every other use reads.
void annotate(OpBuilder &b, Value v, dist::LayoutAttr layout) {
  auto pinned = dist::AnnotateOp::create(b, v.getLoc(), v, layout, 0);
  v.replaceAllUsesExcept(pinned.getResult(), pinned);
}

} // namespace

RankedTensorType autoshard::train::shardedStateType(func::FuncOp f,
                                                    unsigned arg,
                                                    StringRef dataAxis,
                                                    int64_t threshold) {
  auto type = cast<RankedTensorType>(f.getArgumentTypes()[arg]);
  auto meshAttr = f->getParentOfType<ModuleOp>()->getAttrOfType<dist::MeshAttr>(
      dist::DistDialect::kMeshAttrName);
  if (!meshAttr)
    return type;
  DeviceMesh mesh = meshAttr.toDeviceMesh();
  std::optional<int64_t> axis = mesh.getAxisIndex(dataAxis.str());
  if (!axis || threshold < 0)
    return type;
  FailureOr<ParamShard> plan =
      planParam(f.getArgument(arg), mesh, *axis, threshold);
  return succeeded(plan) ? plan->state : type;
}

LogicalResult autoshard::train::shardOptimizer(func::FuncOp step,
                                               StringRef dataAxis,
                                               int64_t threshold) {
  auto meshAttr =
      step->getParentOfType<ModuleOp>()->getAttrOfType<dist::MeshAttr>(
          dist::DistDialect::kMeshAttrName);
  if (!meshAttr)
    return step.emitError("dist-training-step: optimizer-shard needs a mesh "
                          "(a dist.mesh module attribute)");
  DeviceMesh mesh = meshAttr.toDeviceMesh();
  std::optional<int64_t> axis = mesh.getAxisIndex(dataAxis.str());
  if (!axis)
    return step.emitError("dist-training-step: optimizer-shard: data-axis '")
           << dataAxis << "' is not an axis of the mesh " << mesh.str();
  int64_t axisSize = mesh.getAxisSize(*axis);
  if (threshold < 0)
    return step.emitError("dist-training-step: optimizer-shard-threshold "
                          "must be at least 0, got ")
           << threshold;
  if (axisSize == 1)
    return success();

  Block &body = step.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  // The value each argument becomes: the result tied to it.
  DenseMap<unsigned, Value> next;
  for (unsigned i = 0; i < step.getNumResults(); ++i)
    if (auto tied = step.getResultAttrOfType<IntegerAttr>(i, "dist.tied_arg"))
      next[tied.getInt()] = ret.getOperand(i);

  // The split layout of every parameter at or above the threshold, and of
  // its per-parameter state arguments ("<param>.exp_avg", ...).
  llvm::StringMap<std::pair<dist::LayoutAttr, Type>> splitByName;
  SmallVector<std::pair<unsigned, dist::LayoutAttr>> pinned;
  DenseSet<unsigned> padded;
  for (unsigned k = 0; k < step.getNumArguments(); ++k) {
    if (!isParam(step, k))
      continue;
    BlockArgument param = step.getArgument(k);
    FailureOr<ParamShard> plan = planParam(param, mesh, *axis, threshold);
    if (failed(plan))
      return emitError(param.getLoc())
             << "dist-training-step: optimizer-shard: parameter '"
             << nameOf(step, k) << "' (" << param.getType() << ", layout "
             << paramLayout(param).str(mesh)
             << ") is unevenly split on every dim; its optimizer state "
                "cannot be split again over data axis '"
             << dataAxis << "'. Raise optimizer-shard-threshold above "
             << bytesOf(cast<RankedTensorType>(param.getType()))
             << " bytes to keep it as it is";
    if (!plan->split)
      continue;
    auto layout = dist::LayoutAttr::get(meshAttr, plan->layout);
    pinned.push_back({k, layout});
    if (plan->state != param.getType())
      padded.insert(k);
    for (const std::string &suffix : stateSuffixes(param.getType()))
      splitByName[(nameOf(step, k) + suffix).str()] = {layout, plan->state};
  }
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    if (!step.getArgAttr(i, "dist.init"))
      continue;
    auto it = splitByName.find(nameOf(step, i));
    if (it != splitByName.end() &&
        it->second.second == step.getArgumentTypes()[i])
      pinned.push_back({i, it->second.first});
  }
  llvm::sort(pinned, llvm::less_first());

  // State arguments are pinned at the top of the body, in argument order;
  // updated values right after the optimizer op that computes them.
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  for (auto [arg, layout] : pinned)
    if (!isParam(step, arg))
      annotate(b, step.getArgument(arg), layout);
  for (auto [arg, layout] : pinned) {
    Value v = next.lookup(arg);
    // A padded parameter's update is sliced back to its type: the split
    // layout is the padded update's.
    if (padded.contains(arg))
      if (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>())
        v = slice.getSource();
    Operation *def = v ? v.getDefiningOp() : nullptr;
    auto phase = def ? def->getAttrOfType<StringAttr>("dist.phase") : nullptr;
    if (!phase || phase.getValue() != "optimizer")
      continue;
    b.setInsertionPointAfter(def);
    annotate(b, v, layout);
  }

  // The accumulated gradient of a split parameter: the first micro-batch's
  // gradient and every sum after it (a padded parameter's are padded
  // before they are summed, TrainingStep.cpp, and a zero pad passes the
  // partial sum through: each micro-batch's padded gradient is
  // reduce-scattered too).
  for (auto [arg, layout] : pinned) {
    if (!isParam(step, arg))
      continue;
    SmallVector<Operation *> sums;
    for (Operation &op : body)
      if (auto of = op.getAttrOfType<IntegerAttr>(kAccumulatesAttr))
        if (of.getInt() == arg && op.getNumResults() == 1)
          sums.push_back(&op);
    if (sums.empty())
      continue;
    Value first = sums.front()->getOperand(0);
    b.setInsertionPointAfterValue(first);
    annotate(b, first, layout);
    for (Operation *sum : sums) {
      b.setInsertionPointAfter(sum);
      annotate(b, sum->getResult(0), layout);
    }
  }
  return success();
}
