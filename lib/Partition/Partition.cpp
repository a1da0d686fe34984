//===- Partition.cpp - Global annotated program -> per-device SPMD --------===//
//
// --dist-partition walks every function once, in order. Every tensor value
// keeps its global type and layout in side tables while its IR type becomes
// the local shard type: ops are localised in place (or rebuilt when a static
// attribute names a global size), dist.reshard becomes the planner's steps,
// dist.annotate disappears. See docs/design.md "Partitioning".
//
//===----------------------------------------------------------------------===//

#include "autoshard/Partition/Passes.h"

#include "autoshard/Analysis/CostModel.h"
#include "autoshard/Analysis/ModulePlannerOptions.h"
#include "autoshard/Analysis/ReshardPlanner.h"
#include "autoshard/Dialect/Dist/IR/DistOps.h"
#include "autoshard/Partition/Halo.h"
#include "autoshard/Partition/SpmdBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace autoshard {
#define GEN_PASS_DEF_DISTPARTITION
#include "autoshard/Partition/Passes.h.inc"
} // namespace autoshard

using namespace mlir;
using namespace autoshard;
using dist::LayoutAttr;
using dist::MeshAttr;
using dist::StrategyAttr;

namespace {

int64_t elementBytes(Type t) {
  if (t.isIntOrFloat())
    return (t.getIntOrFloatBitWidth() + 7) / 8;
  return 8; // index
}

/// Does `v` hold the identity of `kind` everywhere (so that every device may
/// hold it as its term of a pending reduction)? Max/min are idempotent.
bool holdsIdentityOf(Value v, ReductionKind kind) {
  if (kind == ReductionKind::Max || kind == ReductionKind::Min)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<tensor::EmptyOp>(def))
    return true; // undefined contents: every term is as good as another
  Attribute value;
  if (auto fill = dyn_cast<linalg::FillOp>(def))
    matchPattern(fill.getInputs()[0], m_Constant(&value));
  else if (auto cst = dyn_cast<arith::ConstantOp>(def))
    value = cst.getValue();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(value))
    value = dense.isSplat() ? dense.getSplatValue<Attribute>() : Attribute();
  bool one = kind == ReductionKind::Product;
  if (auto f = dyn_cast_or_null<FloatAttr>(value))
    return f.getValue().isExactlyValue(one ? 1.0 : 0.0) &&
           !f.getValue().isNegative();
  if (auto i = dyn_cast_or_null<IntegerAttr>(value))
    return i.getValue() == (one ? 1 : 0);
  return false;
}

class FuncPartitioner {
public:
  FuncPartitioner(const SpmdBuilder &spmd, MeshAttr meshAttr,
                  const CostModel &model, const PlannerOptions &options,
                  double &predictedBytes, int64_t &numReshards)
      : spmd(spmd), meshAttr(meshAttr), model(model), options(options),
        predictedBytes(predictedBytes), numReshards(numReshards) {}

  LogicalResult run(func::FuncOp func);

private:
  const DeviceMesh &mesh() const { return spmd.getMesh(); }
  std::string str(const TensorLayout &l) const { return l.str(mesh()); }

  LogicalResult partitionOp(Operation *op);
  LogicalResult partitionReshard(dist::ReshardOp op);
  LogicalResult checkOperands(Operation *op, StrategyAttr strategy,
                              ArrayRef<TensorLayout> resultLayouts);
  LogicalResult checkCaptures(Operation *op);
  LogicalResult localise(Operation *op, ArrayRef<TensorLayout> resultLayouts);
  LogicalResult setLocalResultTypes(Operation *op,
                                    ArrayRef<TensorLayout> resultLayouts);
  LogicalResult localiseEmpty(tensor::EmptyOp op, const TensorLayout &layout);
  LogicalResult localiseConstant(arith::ConstantOp op,
                                 const TensorLayout &layout);
  LogicalResult localiseLinalgIndex(linalg::LinalgOp op);
  LogicalResult localiseReshape(Operation *op, const TensorLayout &layout);
  LogicalResult localiseExtractSlice(tensor::ExtractSliceOp op,
                                     const TensorLayout &layout);
  LogicalResult localiseInsertSlice(tensor::InsertSliceOp op,
                                    const TensorLayout &layout);
  LogicalResult localisePad(tensor::PadOp op);
  LogicalResult localiseConcat(tensor::ConcatOp op);
  LogicalResult localiseGather(tensor::GatherOp op, const TensorLayout &layout);
  /// A locally computed value whose layout is a pending reduction must hold
  /// only one term: mask it with dist.make_partial unless it already holds
  /// the identity.
  void maskPartialConstant(Value result, const TensorLayout &layout);

  RankedTensorType globalType(Value v) const { return globalTypes.lookup(v); }
  RankedTensorType localType(Value v) const {
    return spmd.getLocalType(globalType(v), layouts.lookup(v));
  }
  void record(Value v, RankedTensorType global, const TensorLayout &layout) {
    globalTypes[v] = global;
    layouts[v] = layout;
  }
  /// Global offset / local size of `v`'s dim `d` on this device.
  Value offsetOf(OpBuilder &b, Location loc, Value v, int64_t d) const {
    return spmd.buildShardOffset(b, loc, layouts.lookup(v), d,
                                 globalType(v).getDimSize(d));
  }

  const SpmdBuilder &spmd;
  MeshAttr meshAttr;
  const CostModel &model;
  const PlannerOptions &options;
  double &predictedBytes;
  int64_t &numReshards;
  /// Global type and layout of every tensor value seen so far.
  DenseMap<Value, RankedTensorType> globalTypes;
  DenseMap<Value, TensorLayout> layouts;
};

} // namespace

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

LogicalResult FuncPartitioner::run(func::FuncOp func) {
  if (func.isExternal())
    return success();
  if (!func.getBody().hasOneBlock())
    return func.emitError("--dist-partition supports single-block functions "
                          "only; this one has ")
           << func.getBody().getBlocks().size() << " blocks";
  Block &body = func.getBody().front();
  MLIRContext *ctx = func.getContext();

  // Arguments: global type and layout from the signature, local type in IR.
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    auto layout = func.getArgAttrOfType<LayoutAttr>(arg.getArgNumber(),
                                                    kLayoutAttrName);
    if (!layout)
      return func.emitError() << "argument #" << arg.getArgNumber()
                              << " has no '" << kLayoutAttrName
                              << "' attribute; run --dist-propagate first";
    if (!type.hasStaticShape())
      return func.emitError() << "argument #" << arg.getArgNumber()
                              << " has dynamic shape " << type
                              << ", which --dist-partition cannot split";
    if (layout.getMesh() != meshAttr)
      return func.emitError() << "argument #" << arg.getArgNumber()
                              << " is laid out on another mesh";
    record(arg, type, layout.toTensorLayout());
    arg.setType(localType(arg));
    func.setArgAttr(arg.getArgNumber(), kGlobalTypeAttrName,
                    TypeAttr::get(type));
  }

  for (Operation &op : llvm::make_early_inc_range(body.getOperations()))
    if (failed(partitionOp(&op)))
      return failure();

  // Results: the returned values must already have the promised layouts.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (!isa<RankedTensorType>(v.getType()))
      continue;
    auto layout = func.getResultAttrOfType<LayoutAttr>(i, kLayoutAttrName);
    if (!layout)
      return func.emitError() << "result #" << i << " has no '"
                              << kLayoutAttrName
                              << "' attribute; run --dist-propagate first";
    if (layout.toTensorLayout() != layouts.lookup(v))
      return ret.emitError() << "result #" << i << " has layout "
                             << str(layouts.lookup(v))
                             << " but the function returns it as "
                             << str(layout.toTensorLayout())
                             << " (a dist.reshard is missing)";
    func.setResultAttr(i, kGlobalTypeAttrName, TypeAttr::get(globalType(v)));
  }
  func.setType(FunctionType::get(ctx, body.getArgumentTypes(),
                                 ret.getOperandTypes()));
  return success();
}

static bool hasTensors(Operation *op) {
  auto isTensor = [](Type t) { return isa<TensorType>(t); };
  return llvm::any_of(op->getOperandTypes(), isTensor) ||
         llvm::any_of(op->getResultTypes(), isTensor);
}

LogicalResult FuncPartitioner::partitionOp(Operation *op) {
  if (auto annotate = dyn_cast<dist::AnnotateOp>(op)) {
    Value in = annotate.getInput();
    TensorLayout pinned = annotate.getLayout().toTensorLayout();
    if (layouts.lookup(in) != pinned)
      return op->emitError() << "pins layout " << str(pinned)
                             << " but the value has layout "
                             << str(layouts.lookup(in))
                             << " (a dist.reshard is missing)";
    annotate.getResult().replaceAllUsesWith(in);
    op->erase();
    return success();
  }
  if (auto reshard = dyn_cast<dist::ReshardOp>(op))
    return partitionReshard(reshard);
  if (isa<func::ReturnOp>(op)) {
    // Propagation may leave the layouts it wants returned on the return;
    // the function's result attributes carry them from here on.
    op->removeAttr(dist::DistDialect::kStrategyAttrName);
    return success();
  }
  if (!hasTensors(op))
    return success();

  // Operands are already local (possibly dynamic for uneven shards): check
  // their global types.
  SmallVector<Type> globals(op->getResultTypes());
  for (Value v : op->getOperands())
    globals.push_back(globalTypes.count(v) ? Type(globalType(v)) : v.getType());
  for (Type t : globals)
    if (auto tt = dyn_cast<TensorType>(t); tt && !tt.hasStaticShape())
      return op->emitError() << "has a dynamic or unranked tensor type " << t
                             << "; --dist-partition needs static shapes";

  auto strategy =
      op->getAttrOfType<StrategyAttr>(dist::DistDialect::kStrategyAttrName);
  // A destination-style op reading no tensor but its inits (linalg.fill)
  // follows its inits; a strategy could not even name its scalar operands.
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  if (!strategy && dps &&
      llvm::none_of(dps.getDpsInputs(),
                    [](Value v) { return isa<TensorType>(v.getType()); })) {
    SmallVector<LayoutAttr> outs;
    for (OpOperand &init : dps.getDpsInitsMutable()) {
      if (!layouts.count(init.get()))
        return op->emitError() << "init operand #" << init.getOperandNumber()
                               << " has no layout";
      outs.push_back(LayoutAttr::get(meshAttr, layouts.lookup(init.get())));
    }
    strategy = StrategyAttr::get(op->getContext(), meshAttr, {}, outs);
  }
  if (!strategy)
    return op->emitError()
           << "has no dist.strategy; run --dist-propagate first";
  if (strategy.getMesh() != meshAttr)
    return op->emitError() << "has a dist.strategy on another mesh";
  if (strategy.getResults().size() != op->getNumResults())
    return op->emitError()
           << "has a dist.strategy without result layouts (it must be "
              "complete after --dist-propagate)";

  SmallVector<TensorLayout, 1> resultLayouts;
  for (LayoutAttr l : strategy.getResults())
    resultLayouts.push_back(l.toTensorLayout());
  if (failed(checkOperands(op, strategy, resultLayouts)) ||
      failed(checkCaptures(op)))
    return failure();
  for (auto [r, l] : llvm::zip(op->getResults(), resultLayouts))
    record(r, cast<RankedTensorType>(r.getType()), l);
  op->removeAttr(dist::DistDialect::kStrategyAttrName);
  return localise(op, resultLayouts);
}

LogicalResult FuncPartitioner::checkOperands(Operation *op,
                                             StrategyAttr strategy,
                                             ArrayRef<TensorLayout> results) {
  ArrayRef<LayoutAttr> ins = strategy.getOperands();
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    if (!isa<RankedTensorType>(operand.getType()))
      continue;
    auto it = layouts.find(operand);
    if (it == layouts.end())
      return op->emitError() << "operand #" << i
                             << " is defined outside the function body or "
                                "by an op without a layout";
    const TensorLayout &have = it->second;
    if (i < ins.size()) {
      TensorLayout want = ins[i].toTensorLayout();
      if (have != want)
        return op->emitError()
               << "operand #" << i << " has layout " << str(have)
               << " but the op's dist.strategy expects " << str(want)
               << " (a dist.reshard is missing)";
      continue;
    }
    // An init the strategy leaves out follows its tied result. A result
    // that is a pending reduction may start from a non-partial init only if
    // every device may hold it as its term (zeros for a sum).
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    OpResult tied = dps ? dps.getTiedOpResult(&op->getOpOperand(i)) : nullptr;
    if (!tied)
      return op->emitError() << "operand #" << i
                             << " has no layout in the op's dist.strategy";
    const TensorLayout &want = results[tied.getResultNumber()];
    if (have == want)
      continue;
    TensorLayout unreduced = want;
    unreduced.partialAxes.clear();
    if (!have.isPartial() && want.isPartial() && have == unreduced &&
        holdsIdentityOf(operand, want.partialKind))
      continue;
    return op->emitError() << "init operand #" << i << " has layout "
                           << str(have) << " but its result has layout "
                           << str(want) << " (a dist.reshard is missing)";
  }
  return success();
}

/// A tensor read inside `op`'s regions but defined outside them (a capture:
/// tensor.extract in a linalg body) is indexed by the body with global
/// indices, and localising the op leaves those indices global: a split
/// capture would be read at global positions of its local shard (a wrong
/// value, or out of bounds). Propagation puts a replicated dist.annotate in
/// front of each capture (Captures.cpp); a hand-written program must too.
LogicalResult FuncPartitioner::checkCaptures(Operation *op) {
  if (op->getNumRegions() == 0)
    return success();
  WalkResult walk = op->walk([&](Operation *inner) {
    if (inner == op)
      return WalkResult::advance();
    for (auto [i, v] : llvm::enumerate(inner->getOperands())) {
      // Only tensors of the function's body have a layout.
      auto it = layouts.find(v);
      if (!isa<RankedTensorType>(v.getType()) || it == layouts.end() ||
          it->second.isReplicated())
        continue;
      InFlightDiagnostic diag =
          inner->emitError()
          << "operand #" << i << " is a tensor captured from outside the "
          << "region of '" << op->getName() << "' with layout "
          << str(it->second)
          << "; a captured tensor must be replicated (a dist.reshard to "
          << str(TensorLayout::replicated(it->second.getRank()))
          << " is missing)";
      diag.attachNote(op->getLoc()) << "captured by this op";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// Reshards
//===----------------------------------------------------------------------===//

LogicalResult FuncPartitioner::partitionReshard(dist::ReshardOp op) {
  Value in = op.getInput();
  TensorLayout from = op.getSource().toTensorLayout();
  TensorLayout to = op.getTarget().toTensorLayout();
  if (op.getSource().getMesh() != meshAttr)
    return op.emitError("reshards on another mesh than the module's");
  if (layouts.lookup(in) != from)
    return op.emitError() << "reshards from " << str(from)
                          << " but its input has layout "
                          << str(layouts.lookup(in));
  RankedTensorType global = globalType(in);
  if (!global.hasStaticShape())
    return op.emitError("cannot reshard a tensor of dynamic shape");
  std::vector<int64_t> shape(global.getShape().begin(),
                             global.getShape().end());
  std::string error;
  std::optional<ReshardPlan> plan =
      planReshard(model, shape, elementBytes(global.getElementType()), from,
                  to, options, error);
  if (!plan)
    return op.emitError() << "no collective sequence turns " << str(from)
                          << " into " << str(to) << ": " << error;
  ++numReshards;
  predictedBytes += plan->bytesPerDevice;

  OpBuilder b(op);
  Value v = in;
  for (const CollectiveStep &step : plan->steps) {
    std::optional<Value> next =
        spmd.emitStep(b, op.getLoc(), v, global, step, error);
    if (!next)
      return op.emitError() << "cannot emit " << step.str(mesh()) << ": "
                            << error;
    v = *next;
  }
  if (cast<RankedTensorType>(v.getType()) != spmd.getLocalType(global, to))
    return op.emitError() << "the planned steps end with local type "
                          << v.getType() << " instead of "
                          << spmd.getLocalType(global, to);
  op.getResult().replaceAllUsesWith(v);
  record(v, global, to);
  op.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Localising ops
//===----------------------------------------------------------------------===//

LogicalResult
FuncPartitioner::setLocalResultTypes(Operation *op,
                                     ArrayRef<TensorLayout> resultLayouts) {
  for (auto [r, l] : llvm::zip(op->getResults(), resultLayouts)) {
    auto global = cast<RankedTensorType>(r.getType());
    r.setType(spmd.getLocalType(global, l));
  }
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    for (OpOperand &init : dps.getDpsInitsMutable())
      if (OpResult r = dps.getTiedOpResult(&init);
          r && r.getType() != init.get().getType())
        return op->emitError() << "result #" << r.getResultNumber()
                               << " would have local type " << r.getType()
                               << " but its init has " << init.get().getType();
  return success();
}

static bool allReplicated(ArrayRef<TensorLayout> ls) {
  return llvm::all_of(ls, [](const TensorLayout &l) { return l.isReplicated(); });
}

LogicalResult FuncPartitioner::localise(Operation *op,
                                        ArrayRef<TensorLayout> results) {
  const TensorLayout *res0 = results.empty() ? nullptr : &results.front();
  LogicalResult result = success();
  if (auto o = dyn_cast<tensor::EmptyOp>(op))
    return localiseEmpty(o, *res0);
  if (auto o = dyn_cast<arith::ConstantOp>(op))
    return localiseConstant(o, *res0);
  if (auto o = dyn_cast<tensor::GatherOp>(op))
    return localiseGather(o, *res0);
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ReshapeOp>(
          op))
    return localiseReshape(op, *res0);
  if (auto o = dyn_cast<tensor::ExtractSliceOp>(op))
    return localiseExtractSlice(o, *res0);
  if (auto o = dyn_cast<tensor::InsertSliceOp>(op))
    return localiseInsertSlice(o, *res0);
  if (auto o = dyn_cast<tensor::PadOp>(op))
    result = localisePad(o);
  else if (auto o = dyn_cast<tensor::ConcatOp>(op))
    result = localiseConcat(o);
  else if (res0 && isSpatiallySplitWindow(op, *res0))
    result = localiseSpatialWindow(cast<linalg::LinalgOp>(op), *res0, spmd);
  else if (auto o = dyn_cast<linalg::LinalgOp>(op))
    result = localiseLinalgIndex(o);
  else if (!isa<DestinationStyleOpInterface>(op) &&
           !op->hasTrait<OpTrait::Elementwise>()) {
    SmallVector<TensorLayout, 1> all(results.begin(), results.end());
    for (Value v : op->getOperands())
      if (isa<RankedTensorType>(v.getType()))
        all.push_back(layouts.lookup(v));
    if (!allReplicated(all))
      return op->emitError()
             << "'" << op->getName()
             << "' with a split or partial layout is not supported by "
                "--dist-partition";
    return success(); // replicated everywhere: global == local
  }
  if (failed(result) || failed(setLocalResultTypes(op, results)))
    return failure();
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    maskPartialConstant(fill.getResult(0), *res0);
  return success();
}

void FuncPartitioner::maskPartialConstant(Value result,
                                          const TensorLayout &layout) {
  if (!layout.isPartial() || holdsIdentityOf(result, layout.partialKind))
    return;
  OpBuilder b(result.getContext());
  b.setInsertionPointAfterValue(result);
  CollectiveStep step;
  step.kind = CollectiveKind::MakePartial;
  step.axes.assign(layout.partialAxes.begin(), layout.partialAxes.end());
  step.reduction = layout.partialKind;
  step.before = layout;
  step.before.partialAxes.clear();
  step.after = layout;
  std::string error;
  std::optional<Value> masked = spmd.emitStep(
      b, result.getLoc(), result, globalType(result), step, error);
  result.replaceAllUsesExcept(*masked, masked->getDefiningOp());
  record(*masked, globalType(result), layout);
}

LogicalResult FuncPartitioner::localiseEmpty(tensor::EmptyOp op,
                                             const TensorLayout &layout) {
  RankedTensorType global = op.getType();
  RankedTensorType local = spmd.getLocalType(global, layout);
  OpBuilder b(op);
  SmallVector<Value> dynSizes;
  for (int64_t d = 0; d < local.getRank(); ++d)
    if (local.isDynamicDim(d))
      dynSizes.push_back(spmd.buildShardSize(b, op.getLoc(), layout, d,
                                             global.getDimSize(d)));
  auto empty = tensor::EmptyOp::create(b, op.getLoc(), local, dynSizes);
  op.getResult().replaceAllUsesWith(empty.getResult());
  record(empty, global, layout);
  op.erase();
  return success();
}

LogicalResult FuncPartitioner::localiseConstant(arith::ConstantOp op,
                                                const TensorLayout &layout) {
  auto global = cast<RankedTensorType>(op.getType());
  RankedTensorType local = spmd.getLocalType(global, layout);
  Value result = op.getResult();
  if (local != global) {
    OpBuilder b(op);
    b.setInsertionPointAfter(op);
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (dense && dense.isSplat() && local.hasStaticShape()) {
      // A splat is the same on every device: a local splat.
      auto cst = arith::ConstantOp::create(
          b, op.getLoc(), local,
          DenseElementsAttr::get(local, dense.getSplatValue<Attribute>()));
      op.getResult().replaceAllUsesWith(cst.getResult());
      op.erase();
      result = cst;
    } else {
      // Keep the full constant and slice this device's piece.
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (int64_t d = 0; d < global.getRank(); ++d) {
        offsets.push_back(spmd.buildShardOffset(b, op.getLoc(), layout, d,
                                                global.getDimSize(d)));
        if (local.isDynamicDim(d))
          sizes.push_back(spmd.buildShardSize(b, op.getLoc(), layout, d,
                                              global.getDimSize(d)));
        else
          sizes.push_back(b.getIndexAttr(local.getDimSize(d)));
        strides.push_back(b.getIndexAttr(1));
      }
      auto slice = tensor::ExtractSliceOp::create(
          b, op.getLoc(), local, op.getResult(), offsets, sizes, strides);
      op.getResult().replaceAllUsesExcept(slice.getResult(), slice);
      result = slice;
    }
  }
  record(result, global, layout);
  maskPartialConstant(result, layout);
  return success();
}

LogicalResult FuncPartitioner::localiseLinalgIndex(linalg::LinalgOp op) {
  // linalg.index yields local loop indices; a split loop dim needs the
  // shard's global offset added. The offset comes from the first operand
  // whose indexing map reads that loop dim directly and splits it.
  SmallVector<linalg::IndexOp> indices;
  op->walk([&](linalg::IndexOp idx) { indices.push_back(idx); });
  for (linalg::IndexOp idx : indices) {
    int64_t loopDim = idx.getDim();
    Value offset;
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      if (!isa<RankedTensorType>(v.getType()))
        continue;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (auto [k, expr] : llvm::enumerate(map.getResults())) {
        auto dimExpr = dyn_cast<AffineDimExpr>(expr);
        if (!dimExpr || dimExpr.getPosition() != loopDim ||
            layouts.lookup(v).dimAxes[k].empty())
          continue;
        OpBuilder b(op);
        offset = offsetOf(b, op.getLoc(), v, k);
        break;
      }
      if (offset)
        break;
    }
    if (!offset)
      continue;
    OpBuilder b(idx);
    b.setInsertionPointAfter(idx);
    auto global = arith::AddIOp::create(b, idx.getLoc(), idx, offset);
    idx.getResult().replaceAllUsesExcept(global, global);
  }
  return success();
}

/// For a reshape between `collapsed` and `expanded` with reassociation
/// groups, mirroring ShardingRule::getLayouts on a compound dim: a collapsed
/// dim's axes are the concatenation of its group's expanded dims' axes, major
/// dim first, and a dim may be split only when every more major dim of its
/// group is left with a single element per device (unit dims, or dims split
/// down to size 1). Then each device's block of the collapsed dim is one
/// contiguous run of elements, and the local reshape is the global one on
/// local shapes; anything else would cut a shard across non-contiguous
/// elements.
static std::string checkReassociation(const DeviceMesh &mesh,
                                      ArrayRef<ReassociationIndices> groups,
                                      const TensorLayout &collapsed,
                                      const TensorLayout &expanded,
                                      ArrayRef<int64_t> expandedShape) {
  for (auto [c, group] : llvm::enumerate(groups)) {
    if (collapsed.hasUnevenDim(c))
      return "uneven splits cannot pass a reshape";
    std::vector<int64_t> axes;
    // The first dim of the group whose local size is not 1 so far; a split
    // of any dim after it would not be contiguous.
    std::optional<int64_t> wideMajor;
    for (int64_t d : group) {
      if (expanded.hasUnevenDim(d))
        return "uneven splits cannot pass a reshape";
      const LayoutAxes &dAxes = expanded.dimAxes[d];
      if (!dAxes.empty() && wideMajor)
        return "dim " + std::to_string(d) +
               " of the expanded shape is split but its more major dim " +
               std::to_string(*wideMajor) +
               " is not split into single elements, so the shards of "
               "collapsed dim " +
               std::to_string(c) + " would not be contiguous";
      axes.insert(axes.end(), dAxes.begin(), dAxes.end());
      if (!wideMajor && expandedShape[d] / expanded.getNumShards(mesh, d) != 1)
        wideMajor = d;
    }
    if (axes != collapsed.dimAxes[c])
      return "collapsed dim " + std::to_string(c) +
             " is split differently from the concatenation (major dim "
             "first) of its expanded dims' splits";
  }
  if (collapsed.partialAxes != expanded.partialAxes)
    return "a reshape cannot change the partial axes";
  return "";
}

LogicalResult FuncPartitioner::localiseReshape(Operation *op,
                                               const TensorLayout &layout) {
  Value src = op->getOperand(0);
  RankedTensorType global = cast<RankedTensorType>(op->getResult(0).getType());
  RankedTensorType local = spmd.getLocalType(global, layout);
  const TensorLayout &srcLayout = layouts.lookup(src);
  OpBuilder b(op);
  Value result;
  std::string err;
  if (auto e = dyn_cast<tensor::ExpandShapeOp>(op)) {
    auto groups = e.getReassociationIndices();
    err = checkReassociation(mesh(), groups, srcLayout, layout,
                             global.getShape());
    if (err.empty())
      result = tensor::ExpandShapeOp::create(b, op->getLoc(), local, src,
                                             groups);
  } else if (auto c = dyn_cast<tensor::CollapseShapeOp>(op)) {
    auto groups = c.getReassociationIndices();
    err = checkReassociation(mesh(), groups, layout, srcLayout,
                             globalType(src).getShape());
    if (err.empty())
      result = tensor::CollapseShapeOp::create(b, op->getLoc(), local, src,
                                               groups);
  } else {
    auto r = cast<tensor::ReshapeOp>(op);
    // No reassociation to check against: only a split of the leading dim
    // that both shapes agree on passes (the common [B, ...] case).
    RankedTensorType srcGlobal = globalType(src);
    bool ok = !srcLayout.isPartial() && !layout.isPartial();
    for (int64_t d = 0; d < global.getRank() && ok; ++d)
      ok = layout.dimAxes[d].empty() ||
           (d == 0 && srcLayout.dimAxes[0] == layout.dimAxes[0] &&
            srcGlobal.getDimSize(0) == global.getDimSize(0) &&
            !layout.hasUnevenDim(0));
    for (int64_t d = 1; d < srcGlobal.getRank() && ok; ++d)
      ok = srcLayout.dimAxes[d].empty();
    if (!ok) {
      err = "tensor.reshape passes only a split of a leading dim both shapes "
            "share; use expand_shape/collapse_shape";
    } else {
      auto shapeType = cast<RankedTensorType>(r.getShape().getType());
      SmallVector<Attribute> dims;
      for (int64_t s : local.getShape())
        dims.push_back(IntegerAttr::get(shapeType.getElementType(), s));
      Value shape = arith::ConstantOp::create(
          b, op->getLoc(), shapeType, DenseElementsAttr::get(shapeType, dims));
      result = tensor::ReshapeOp::create(b, op->getLoc(), local, src, shape);
    }
  }
  if (!err.empty())
    return op->emitError() << "cannot pass layout " << str(srcLayout)
                           << " to " << str(layout) << ": " << err;
  op->getResult(0).replaceAllUsesWith(result);
  record(result, global, layout);
  op->erase();
  return success();
}

/// Split dims must be taken whole by a slice: offset 0, full size, stride 1.
static bool takesWholeDim(OffsetSizeAndStrideOpInterface op, int64_t d,
                          int64_t extent) {
  return op.isDynamicOffset(d) == false && op.getStaticOffset(d) == 0 &&
         !op.isDynamicSize(d) && op.getStaticSize(d) == extent &&
         !op.isDynamicStride(d) && op.getStaticStride(d) == 1;
}

LogicalResult
FuncPartitioner::localiseExtractSlice(tensor::ExtractSliceOp op,
                                      const TensorLayout &layout) {
  Value src = op.getSource();
  RankedTensorType srcGlobal = globalType(src);
  const TensorLayout &srcLayout = layouts.lookup(src);
  RankedTensorType global = op.getType();
  RankedTensorType local = spmd.getLocalType(global, layout);
  OpBuilder b(op);
  SmallVector<OpFoldResult> sizes = op.getMixedSizes();
  for (int64_t d = 0; d < srcGlobal.getRank(); ++d) {
    if (srcLayout.dimAxes[d].empty())
      continue;
    if (!takesWholeDim(op, d, srcGlobal.getDimSize(d)))
      return op.emitError() << "slices dim " << d
                            << ", which is split by layout " << str(srcLayout)
                            << "; only unsplit dims may be sliced";
    if (srcLayout.hasUnevenDim(d))
      sizes[d] = spmd.buildShardSize(b, op.getLoc(), srcLayout, d,
                                     srcGlobal.getDimSize(d));
    else
      sizes[d] = b.getIndexAttr(srcGlobal.getDimSize(d) /
                                srcLayout.getNumShards(mesh(), d));
  }
  auto slice = tensor::ExtractSliceOp::create(b, op.getLoc(), local, src,
                                              op.getMixedOffsets(), sizes,
                                              op.getMixedStrides());
  op.getResult().replaceAllUsesWith(slice.getResult());
  record(slice, global, layout);
  op.erase();
  return success();
}

LogicalResult FuncPartitioner::localiseInsertSlice(tensor::InsertSliceOp op,
                                                   const TensorLayout &layout) {
  Value dest = op.getDest();
  RankedTensorType destGlobal = globalType(dest);
  const TensorLayout &destLayout = layouts.lookup(dest);
  OpBuilder b(op);
  SmallVector<OpFoldResult> sizes = op.getMixedSizes();
  for (int64_t d = 0; d < destGlobal.getRank(); ++d) {
    if (destLayout.dimAxes[d].empty())
      continue;
    if (!takesWholeDim(op, d, destGlobal.getDimSize(d)))
      return op.emitError() << "inserts into dim " << d
                            << ", which is split by layout "
                            << str(destLayout)
                            << "; only unsplit dims may be sliced";
    if (destLayout.hasUnevenDim(d))
      sizes[d] = spmd.buildShardSize(b, op.getLoc(), destLayout, d,
                                     destGlobal.getDimSize(d));
    else
      sizes[d] = b.getIndexAttr(destGlobal.getDimSize(d) /
                                destLayout.getNumShards(mesh(), d));
  }
  auto insert = tensor::InsertSliceOp::create(
      b, op.getLoc(), op.getSource(), dest, op.getMixedOffsets(), sizes,
      op.getMixedStrides());
  op.getResult().replaceAllUsesWith(insert.getResult());
  record(insert, op.getType(), layout);
  op.erase();
  return success();
}

LogicalResult FuncPartitioner::localisePad(tensor::PadOp op) {
  const TensorLayout &srcLayout = layouts.lookup(op.getSource());
  // Each device pads its term of a pending reduction: right only when every
  // device adds the identity there (the pad rule offers a partial sum only
  // for a zero pad; an op of the same class may pad with something else).
  if (srcLayout.isPartial()) {
    Value value = op.getConstantPaddingValue();
    if (!value || !holdsIdentityOf(value, srcLayout.partialKind))
      return op.emitError() << "pads a pending partial value (layout "
                            << str(srcLayout)
                            << ") with something other than the identity "
                               "of its reduction";
  }
  for (int64_t d = 0; d < static_cast<int64_t>(srcLayout.dimAxes.size()); ++d) {
    if (srcLayout.dimAxes[d].empty())
      continue;
    std::optional<int64_t> lo = getConstantIntValue(op.getMixedLowPad()[d]);
    std::optional<int64_t> hi = getConstantIntValue(op.getMixedHighPad()[d]);
    if (lo != 0 || hi != 0)
      return op.emitError() << "pads dim " << d
                            << ", which is split by layout " << str(srcLayout)
                            << "; only unsplit dims may be padded";
  }
  return success();
}

LogicalResult FuncPartitioner::localiseConcat(tensor::ConcatOp op) {
  int64_t dim = op.getDim();
  for (Value v : op.getInputs())
    if (!layouts.lookup(v).dimAxes[dim].empty())
      return op.emitError() << "concatenates along dim " << dim
                            << ", which is split by layout "
                            << str(layouts.lookup(v))
                            << "; only unsplit dims may be concatenated";
  return success();
}

LogicalResult FuncPartitioner::localiseGather(tensor::GatherOp op,
                                              const TensorLayout &layout) {
  Value src = op.getSource(), idx = op.getIndices();
  const TensorLayout &srcLayout = layouts.lookup(src);
  const TensorLayout &idxLayout = layouts.lookup(idx);
  RankedTensorType global = op.getResultType();
  RankedTensorType local = spmd.getLocalType(global, layout);
  ArrayRef<int64_t> gatherDims = op.getGatherDims();
  if (!idxLayout.dimAxes.back().empty())
    return op.emitError("the coordinate dim of the indices must not be split");
  SmallVector<int64_t> splitDims;
  for (int64_t g : gatherDims)
    if (!srcLayout.dimAxes[g].empty())
      splitDims.push_back(g);
  if (splitDims.empty()) {
    op.getResult().setType(local);
    return success();
  }
  if (gatherDims.size() != 1)
    return op.emitError("a split gathered dim is supported only when one dim "
                        "is gathered");
  int64_t g = gatherDims.front();
  if (srcLayout.isPartial())
    return op.emitError("cannot gather from a partial table");
  for (int64_t a : srcLayout.dimAxes[g])
    if (!llvm::is_contained(layout.partialAxes, a) ||
        layout.partialKind != ReductionKind::Sum)
      return op.emitError()
             << "gathers from a table split over '" << mesh().getAxis(a).name
             << "' on the gathered dim; its result must be a partial sum over "
                "that axis, not "
             << str(layout);

  // Masked local lookup: rows this device holds are looked up at
  // (index - offset); the others read row 0 and are zeroed, so the sum over
  // the vocabulary axes is the global gather.
  Location loc = op.getLoc();
  OpBuilder b(op);
  auto idxType = cast<RankedTensorType>(idx.getType());
  Type idxElem = idxType.getElementType();
  Value offset = offsetOf(b, loc, src, g);
  Value size = spmd.buildShardSize(b, loc, srcLayout, g,
                                   globalType(src).getDimSize(g));
  if (!idxElem.isIndex()) {
    offset = arith::IndexCastOp::create(b, loc, idxElem, offset);
    size = arith::IndexCastOp::create(b, loc, idxElem, size);
  }
  Value zeroIdx = arith::ConstantOp::create(b, loc, idxElem,
                                            b.getZeroAttr(idxElem));
  int64_t idxRank = idxType.getRank();
  auto parallel = [](int64_t n) {
    return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
  };
  Value emptyIdx =
      tensor::EmptyOp::create(b, loc, idxType.getShape(), idxElem);
  Value emptyMask =
      tensor::EmptyOp::create(b, loc, idxType.getShape(), b.getI1Type());
  AffineMap id = b.getMultiDimIdentityMap(idxRank);
  auto shifted = linalg::GenericOp::create(
      b, loc, TypeRange{idxType, emptyMask.getType()}, ValueRange{idx},
      ValueRange{emptyIdx, emptyMask}, SmallVector<AffineMap>(3, id),
      parallel(idxRank), [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value s = arith::SubIOp::create(nb, nl, args[0], offset);
        Value ge = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, s,
                                         zeroIdx);
        Value lt =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, s, size);
        Value valid = arith::AndIOp::create(nb, nl, ge, lt);
        Value li = arith::SelectOp::create(nb, nl, valid, s, zeroIdx);
        linalg::YieldOp::create(nb, nl, ValueRange{li, valid});
      });
  auto gathered =
      tensor::GatherOp::create(b, loc, local, src, shifted.getResult(0),
                               op.getGatherDimsAttr(), op.getUniqueAttr());
  // The mask without the coordinate dim: indices [b..., 1] -> [b...].
  int64_t batchRank = idxRank - 1;
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < batchRank; ++d)
    groups.push_back({d});
  if (batchRank > 0)
    groups.back().push_back(batchRank);
  Value mask = tensor::CollapseShapeOp::create(b, loc, shifted.getResult(1),
                                               groups);
  int64_t rank = local.getRank();
  AffineMap maskMap = AffineMap::get(
      rank, 0,
      llvm::to_vector(llvm::map_range(
          llvm::seq<int64_t>(0, batchRank),
          [&](int64_t d) -> AffineExpr { return b.getAffineDimExpr(d); })),
      b.getContext());
  Type elem = local.getElementType();
  Value zero = arith::ConstantOp::create(b, loc, elem, b.getZeroAttr(elem));
  Value init = tensor::EmptyOp::create(b, loc, local.getShape(), elem);
  AffineMap full = b.getMultiDimIdentityMap(rank);
  auto masked = linalg::GenericOp::create(
      b, loc, TypeRange{local}, ValueRange{gathered, mask}, ValueRange{init},
      SmallVector<AffineMap>{full, maskMap, full}, parallel(rank),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value v = arith::SelectOp::create(nb, nl, args[1], args[0], zero);
        linalg::YieldOp::create(nb, nl, v);
      });
  op.getResult().replaceAllUsesWith(masked.getResult(0));
  record(masked.getResult(0), global, layout);
  op.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct DistPartitionPass
    : public autoshard::impl::DistPartitionBase<DistPartitionPass> {
  using DistPartitionBase::DistPartitionBase;

  void runOnOperation() override;

  /// The one mesh every layout of the module is on (null when none is).
  FailureOr<MeshAttr> findMesh(ModuleOp module);
  LogicalResult writeReport(ModuleOp module, double predictedBytes,
                            int64_t numReshards);
};

} // namespace

FailureOr<MeshAttr> DistPartitionPass::findMesh(ModuleOp module) {
  MeshAttr mesh =
      module->getAttrOfType<MeshAttr>(dist::DistDialect::kMeshAttrName);
  Operation *meshSource = module;
  bool ok = true;
  auto see = [&](MeshAttr m, Operation *where) {
    if (!ok || !m)
      return;
    if (!mesh) {
      mesh = m;
      meshSource = where;
    } else if (m != mesh) {
      InFlightDiagnostic diag = where->emitError()
                                << "uses mesh " << m << " but the module is "
                                << "partitioned for mesh " << mesh;
      diag.attachNote(meshSource->getLoc()) << "first mesh seen here";
      ok = false;
    }
  };
  auto seeLayouts = [&](ArrayAttr dicts, Operation *where) {
    if (!dicts)
      return;
    for (Attribute d : dicts)
      if (auto dict = dyn_cast_or_null<DictionaryAttr>(d))
        if (auto l = dict.getAs<LayoutAttr>(kLayoutAttrName))
          see(l.getMesh(), where);
  };
  module.walk([&](Operation *op) {
    if (auto s = op->getAttrOfType<StrategyAttr>(
            dist::DistDialect::kStrategyAttrName))
      see(s.getMesh(), op);
    if (auto a = dyn_cast<dist::AnnotateOp>(op))
      see(a.getLayout().getMesh(), op);
    if (auto r = dyn_cast<dist::ReshardOp>(op))
      see(r.getSource().getMesh(), op);
    if (auto f = dyn_cast<func::FuncOp>(op)) {
      seeLayouts(f.getArgAttrsAttr(), op);
      seeLayouts(f.getResAttrsAttr(), op);
    }
  });
  if (!ok)
    return failure();
  return mesh;
}

void DistPartitionPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<MeshAttr> meshOr = findMesh(module);
  if (failed(meshOr))
    return signalPassFailure();
  MeshAttr meshAttr = *meshOr;
  if (!meshAttr)
    return; // nothing is laid out: the program runs as is on every device

  DeviceMesh mesh = meshAttr.toDeviceMesh();
  ClusterSpec cluster;
  if (!clusterFile.empty()) {
    std::string error;
    if (!ClusterSpec::fromFile(clusterFile, cluster, error)) {
      module.emitError() << "cannot read cluster file '" << clusterFile
                         << "': " << error;
      return signalPassFailure();
    }
  }
  CostModel model(mesh, cluster);
  // The planner options propagation priced with (ModulePlannerOptions.h).
  FailureOr<PlannerOptions> optionsOr = resolvePlannerOptions(
      module, enableAllToAll, enableAllToAll.hasValue(), "dist-partition");
  if (failed(optionsOr))
    return signalPassFailure();
  PlannerOptions options = *optionsOr;

  // The grid collectives name: same shape, axes in the mesh's order.
  SmallVector<int64_t> shape(meshAttr.getAxisSizes());
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, gridName)) {
    auto grid = dyn_cast<shard::GridOp>(existing);
    if (!grid || grid.getShape() != ArrayRef<int64_t>(shape)) {
      existing->emitError() << "symbol @" << gridName
                            << " is taken by something other than a "
                               "shard.grid of shape matching mesh "
                            << meshAttr << "; choose another with grid=NAME";
      return signalPassFailure();
    }
  } else {
    OpBuilder b(module.getBodyRegion());
    shard::GridOp::create(b, module.getLoc(), gridName, shape);
  }
  module->setAttr(dist::DistDialect::kMeshAttrName, meshAttr);

  SpmdBuilder spmd(mesh, gridName);
  double predictedBytes = 0.0;
  int64_t numReshards = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    FuncPartitioner partitioner(spmd, meshAttr, model, options, predictedBytes,
                                numReshards);
    if (failed(partitioner.run(func)))
      return signalPassFailure();
  }
  if (!reportFile.empty() &&
      failed(writeReport(module, predictedBytes, numReshards)))
    return signalPassFailure();
}

LogicalResult DistPartitionPass::writeReport(ModuleOp module,
                                             double predictedBytes,
                                             int64_t numReshards) {
  CommStats stats = countCollectives(module);
  llvm::json::Object kinds;
  for (const auto &[kind, count] : stats.collectives)
    kinds[kind] = count;
  llvm::json::Object report{
      {"pass", "dist-partition"},
      {"reshards", numReshards},
      {"collectives", std::move(kinds)},
      {"comm_bytes_per_device", stats.commBytesPerDevice},
      {"planned_comm_bytes_per_device", predictedBytes},
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
  if (reportFile == "-") {
    llvm::outs() << text;
    return success();
  }
  std::error_code ec;
  llvm::raw_fd_ostream file(reportFile, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return module.emitError() << "cannot write report '" << reportFile
                              << "': " << ec.message();
  file << text;
  return success();
}
