//===- TrainingStep.cpp - The --dist-training-step pass -------------------===//
//
// Builds @train_step from the forward @main in four phases, each in its own
// function below:
//
//   signature  params, optimizer state, inputs, labels -> loss, params',
//              state' (tied to the arguments they replace)
//   forward    @main's body cloned; with data-axis, inputs and labels are
//              annotated split on dim 0
//   backward   the loss and its gradient, then every active op's VJP rule in
//              reverse order, gradients of values with several uses summed
//   update     the optimizer's formulas on each parameter
//
// Forward values the backward reads stay live into it: they are the
// activations a training step keeps (the report counts them).
//
//===----------------------------------------------------------------------===//

#include "autoshard/Train/Passes.h"

#include "autoshard/Dialect/Dist/IR/DistOps.h"
#include "autoshard/Train/Loss.h"
#include "autoshard/Train/MicroBatches.h"
#include "autoshard/Train/Optimizer.h"
#include "autoshard/Train/OptimizerShard.h"
#include "autoshard/Train/Recompute.h"
#include "autoshard/Train/VjpOpInterface.h"
#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

namespace autoshard {
#define GEN_PASS_DEF_DISTTRAININGSTEP
#include "autoshard/Train/Passes.h.inc"
} // namespace autoshard

using namespace mlir;
using namespace autoshard;

namespace {

constexpr StringLiteral kPhaseAttr = "dist.phase";

/// Tags the ops built at the function's top level with the phase that built
/// them (ops inside their regions are left alone).
struct PhaseTagger : OpBuilder::Listener {
  Block *top = nullptr;
  StringAttr phase;
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint) override {
    if (phase && op->getBlock() == top)
      op->setAttr(kPhaseAttr, phase);
  }
};

/// Where each piece of @train_step's signature sits.
struct StepLayout {
  SmallVector<unsigned> params; // @main argument numbers, in order
  SmallVector<unsigned> inputs;
  std::vector<train::StateSlot> state;
  /// The type each parameter is updated at: its own, or padded where
  /// optimizer shard splits it unevenly (OptimizerShard.h).
  SmallVector<RankedTensorType> updateTypes;
  unsigned numParams() const { return params.size(); }
  unsigned stateBegin() const { return params.size(); }
  unsigned inputBegin() const { return params.size() + state.size(); }
  unsigned labelsArg() const { return inputBegin() + inputs.size(); }
};

/// Makes `arg`, and every value `base` maps to what `arg` stands for, map to
/// `to` in `into`: the forward's argument and the step's argument then read
/// the same annotated or micro-batch value.
void redirect(IRMapping &into, const IRMapping &base, Value arg, Value to) {
  Value current = base.lookupOrDefault(arg);
  SmallVector<Value> readers = {arg};
  for (auto [from, value] : base.getValueMap())
    if (value == current)
      readers.push_back(from);
  for (Value from : readers)
    into.map(from, to);
}

std::string argName(func::FuncOp f, unsigned i) {
  if (auto n = f.getArgAttrOfType<StringAttr>(i, "dist.name"))
    return n.str();
  return "arg" + std::to_string(i);
}

struct DistTrainingStepPass
    : autoshard::impl::DistTrainingStepBase<DistTrainingStepPass> {
  using DistTrainingStepBase::DistTrainingStepBase;

  void runOnOperation() override;

private:
  /// Optimizer shard: the option, or a strategy file's optimizer_shard
  /// (set at the start of runOnOperation).
  bool shardOn = false;
  int64_t shardThreshold = 0;

  train::OptimizerConfig config() const {
    return {optimizer, lr, momentum, beta1, beta2, eps, weightDecay};
  }
  /// The step's type of a forward input: the forward takes one
  /// micro-batch, the step all of them (dim 0 times micro-batches).
  Type wholeBatch(Type t) const {
    auto tt = dyn_cast<RankedTensorType>(t);
    if (!tt || tt.getRank() == 0 || microBatches <= 1)
      return t;
    SmallVector<int64_t> shape(tt.getShape());
    shape[0] *= microBatches;
    return tt.clone(shape);
  }
  FailureOr<func::FuncOp> buildSignature(func::FuncOp main, StepLayout &l,
                                         RankedTensorType labels);
  LogicalResult annotateBatch(func::FuncOp step, const StepLayout &l,
                              IRMapping &mapping);
  LogicalResult buildBody(func::FuncOp main, func::FuncOp step,
                          const StepLayout &l);
  FailureOr<int64_t> dataDevices(func::FuncOp step, const StepLayout &l);
  /// optimizer-shard=true, or the module's dist.optimizer_shard (from a
  /// strategy file): the data axis is needed.
  LogicalResult shardOptimizerState(func::FuncOp step, int64_t threshold) {
    if (dataAxis.empty())
      return step.emitError("dist-training-step: optimizer-shard needs a "
                            "data-axis");
    return train::shardOptimizer(step, dataAxis, threshold);
  }
  /// One forward and backward on the batch `mapping` maps the inputs to;
  /// each parameter's gradient is added to its slot in `grads`, padded with
  /// zeros to `sumTypes` where given (so an optimizer-sharded padded
  /// gradient's sums can be split, OptimizerShard.cpp).
  LogicalResult stepOnBatch(OpBuilder &b, PhaseTagger &tag, func::FuncOp main,
                            IRMapping &mapping, ArrayRef<Value> params,
                            ArrayRef<RankedTensorType> sumTypes,
                            Value labelsArg, DenseMap<Value, Value> &grads,
                            Value &lossValue);
  LogicalResult backward(OpBuilder &b, PhaseTagger &tag,
                         ArrayRef<Value> params, Value output, Value labels,
                         DenseMap<Value, Value> &grads, Value &lossValue);
};

} // namespace

FailureOr<func::FuncOp>
DistTrainingStepPass::buildSignature(func::FuncOp main, StepLayout &l,
                                     RankedTensorType labelType) {
  MLIRContext *ctx = main.getContext();
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    bool param = main.getArgAttr(i, "dist.weight") ||
                 main.getArgAttr(i, "dist.param");
    if (param && !vjp::isFloatTensor(main.getArgumentTypes()[i]))
      return main.emitError("dist-training-step: parameter ")
             << i << " ('" << argName(main, i)
             << "') is not a float tensor";
    (param ? l.params : l.inputs).push_back(i);
  }
  if (l.params.empty())
    return main.emitError("dist-training-step: @")
           << main.getSymName()
           << " has no parameters (arguments with dist.weight or dist.param)";
  SmallVector<Type> paramTypes, updateTypes;
  for (unsigned i : l.params) {
    paramTypes.push_back(main.getArgumentTypes()[i]);
    l.updateTypes.push_back(cast<RankedTensorType>(paramTypes.back()));
    if (shardOn && !dataAxis.empty())
      l.updateTypes.back() =
          train::shardedStateType(main, i, dataAxis, shardThreshold);
    updateTypes.push_back(l.updateTypes.back());
  }
  l.state = train::optimizerState(config(), updateTypes);

  SmallVector<Type> args, results;
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  auto named = [&](StringRef name, ArrayRef<NamedAttribute> more = {}) {
    NamedAttrList list(more);
    list.set("dist.name", StringAttr::get(ctx, name));
    return list.getDictionary(ctx);
  };
  auto tied = [&](StringRef name, unsigned arg) {
    return named(name, {NamedAttribute(
                           StringAttr::get(ctx, "dist.tied_arg"),
                           IntegerAttr::get(IntegerType::get(ctx, 64), arg))});
  };
  results.push_back(RankedTensorType::get({}, labelType.getElementType()));
  if (isa<IntegerType>(labelType.getElementType()))
    results.back() = RankedTensorType::get(
        {}, cast<RankedTensorType>(paramTypes[0]).getElementType());
  resultAttrs.push_back(named("loss"));
  for (auto [k, i] : llvm::enumerate(l.params)) {
    args.push_back(paramTypes[k]);
    NamedAttrList attrs(main.getArgAttrDict(i));
    attrs.set("dist.name", StringAttr::get(ctx, argName(main, i)));
    argAttrs.push_back(attrs.getDictionary(ctx));
    results.push_back(paramTypes[k]);
    resultAttrs.push_back(tied(argName(main, i), k));
  }
  for (auto [k, slot] : llvm::enumerate(l.state)) {
    std::string name = slot.param >= 0
                           ? argName(main, l.params[slot.param]) + slot.suffix
                           : "optimizer." + slot.suffix;
    args.push_back(slot.type);
    argAttrs.push_back(named(
        name, {NamedAttribute(StringAttr::get(ctx, "dist.init"),
                              StringAttr::get(ctx, "zeros"))}));
    results.push_back(slot.type);
    resultAttrs.push_back(tied(name, l.stateBegin() + k));
  }
  for (unsigned i : l.inputs) {
    args.push_back(wholeBatch(main.getArgumentTypes()[i]));
    NamedAttrList attrs(main.getArgAttrDict(i));
    attrs.set("dist.name", StringAttr::get(ctx, argName(main, i)));
    argAttrs.push_back(attrs.getDictionary(ctx));
  }
  args.push_back(wholeBatch(labelType));
  argAttrs.push_back(named("labels"));

  OpBuilder b(main);
  auto step = func::FuncOp::create(b, main.getLoc(), "train_step",
                                   FunctionType::get(ctx, args, results));
  step.setAllArgAttrs(argAttrs);
  step.setAllResultAttrs(resultAttrs);
  step.addEntryBlock();
  return step;
}

LogicalResult DistTrainingStepPass::annotateBatch(func::FuncOp step,
                                                  const StepLayout &l,
                                                  IRMapping &mapping) {
  auto mesh = step->getParentOfType<ModuleOp>()->getAttrOfType<dist::MeshAttr>(
      dist::DistDialect::kMeshAttrName);
  if (!mesh)
    return step.emitError("dist-training-step: data-axis needs a mesh (a "
                          "dist.mesh module attribute)");
  DeviceMesh dmesh = mesh.toDeviceMesh();
  std::optional<int64_t> axis = dmesh.getAxisIndex(dataAxis.getValue());
  if (!axis)
    return step.emitError("dist-training-step: data-axis '")
           << dataAxis << "' is not an axis of the mesh " << dmesh.str();
  int64_t size = mesh.getAxisSizes()[*axis];
  OpBuilder b = OpBuilder::atBlockBegin(&step.getBody().front());
  for (unsigned a = l.inputBegin(); a <= l.labelsArg(); ++a) {
    BlockArgument arg = step.getArgument(a);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() == 0)
      continue;
    if (type.getDimSize(0) % size != 0)
      return step.emitError("dist-training-step: the batch dim of '")
             << argName(step, a) << "' (" << type.getDimSize(0)
             << ") does not divide over data axis '" << dataAxis << "' ("
             << size << " devices)";
    TensorLayout layout = TensorLayout::replicated(type.getRank());
    layout.dimAxes[0].push_back(*axis);
    Value annotated = dist::AnnotateOp::create(
        b, step.getLoc(), arg, dist::LayoutAttr::get(mesh, layout), 0);
    // Uses of the forward's argument (and of the labels) read the annotated
    // value.
    redirect(mapping, mapping, arg, annotated);
  }
  return success();
}

/// Values that depend on a parameter: the only ones a gradient reaches.
/// `v` padded with zeros at the high end of every dim to `to` (`v` itself
/// when it already has that type).
static Value padWithZeros(OpBuilder &b, Location loc, Value v,
                          RankedTensorType to) {
  auto from = cast<RankedTensorType>(v.getType());
  if (from == to)
    return v;
  SmallVector<OpFoldResult> low(from.getRank(), b.getIndexAttr(0)), high;
  for (auto [n, m] : llvm::zip(from.getShape(), to.getShape()))
    high.push_back(b.getIndexAttr(m - n));
  Value zero = vjp::scalar(b, loc, from.getElementType(), 0.0);
  return tensor::PadOp::create(b, loc, to, v, low, high, zero);
}

static DenseSet<Value> activeValues(Block &body, ArrayRef<Value> params) {
  DenseSet<Value> active(params.begin(), params.end());
  for (Operation &op : body) {
    bool reads = llvm::any_of(op.getOperands(),
                              [&](Value v) { return active.contains(v); });
    if (reads)
      for (Value r : op.getResults())
        if (vjp::isFloatTensor(r.getType()))
          active.insert(r);
  }
  return active;
}

LogicalResult DistTrainingStepPass::backward(OpBuilder &b, PhaseTagger &tag,
                                             ArrayRef<Value> params,
                                             Value output, Value labels,
                                             DenseMap<Value, Value> &grads,
                                             Value &lossValue) {
  Block *body = b.getBlock();
  SmallVector<Operation *> forward;
  for (Operation &op : *body)
    forward.push_back(&op);
  DenseSet<Value> active = activeValues(*body, params);
  if (!active.contains(output))
    return emitError(output.getLoc(), "dist-training-step: output 0 does not "
                                      "depend on any parameter");

  tag.phase = b.getStringAttr("loss");
  train::LossValues lv = train::buildLoss(b, output.getLoc(), loss, output,
                                          labels, microBatches);
  lossValue = lv.loss;
  grads[output] = lv.grad;

  tag.phase = b.getStringAttr("backward");
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      resultGrads.push_back(grads.lookup(r));
      any |= bool(resultGrads.back());
    }
    if (!any)
      continue;
    auto rule = dyn_cast<VjpOpInterface>(op);
    if (!rule)
      return op->emitError("dist-training-step: no VJP rule for '")
             << op->getName() << "' (it lies between a parameter and the loss)";
    SmallVector<bool> want;
    for (Value v : op->getOperands())
      want.push_back(active.contains(v) && vjp::isFloatTensor(v.getType()));
    SmallVector<Value> operandGrads;
    if (failed(rule.buildVjp(b, resultGrads, want, operandGrads)))
      return failure();
    for (auto [v, g] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!g)
        continue;
      Value &slot = grads[v];
      slot = slot ? vjp::add(b, op->getLoc(), slot, g) : g;
    }
  }
  return success();
}

LogicalResult DistTrainingStepPass::buildBody(func::FuncOp main,
                                              func::FuncOp step,
                                              const StepLayout &l) {
  Block &body = step.getBody().front();
  IRMapping mapping;
  for (auto [k, i] : llvm::enumerate(l.params))
    mapping.map(main.getArgument(i), step.getArgument(k));
  for (auto [k, i] : llvm::enumerate(l.inputs))
    mapping.map(main.getArgument(i), step.getArgument(l.inputBegin() + k));
  mapping.map(step.getArgument(l.labelsArg()), step.getArgument(l.labelsArg()));
  if (!dataAxis.empty() && failed(annotateBatch(step, l, mapping)))
    return failure();
  FailureOr<int64_t> devices = dataDevices(step, l);
  if (failed(devices))
    return failure();

  PhaseTagger tag;
  tag.top = &body;
  OpBuilder b = OpBuilder::atBlockEnd(&body, &tag);
  SmallVector<Value> params;
  for (unsigned k = 0; k < l.numParams(); ++k)
    params.push_back(step.getArgument(k));
  // Forward and backward once per micro-batch; the losses and gradients of
  // the micro-batches add up to the whole batch's (Loss.h).
  DenseMap<Value, Value> grads;
  Value lossValue;
  for (int64_t k = 0; k < microBatches; ++k) {
    IRMapping m = mapping;
    if (microBatches > 1)
      for (unsigned a = l.inputBegin(); a <= l.labelsArg(); ++a) {
        Value whole = step.getArgument(a);
        Value part = train::microBatch(b, step.getLoc(),
                                       mapping.lookupOrDefault(whole), k,
                                       microBatches, *devices);
        redirect(m, mapping, whole, part);
      }
    // With micro-batches, a padded parameter's gradient is padded before it
    // is accumulated, so that its sums can live split.
    ArrayRef<RankedTensorType> sumTypes;
    if (microBatches > 1)
      sumTypes = l.updateTypes;
    if (failed(stepOnBatch(b, tag, main, m, params, sumTypes,
                           step.getArgument(l.labelsArg()), grads, lossValue)))
      return failure();
  }

  // A parameter optimizer shard splits unevenly is updated padded: the
  // parameter and its gradient padded with zeros, the update sliced back.
  // The gradient's pad is the backward's last op (a gradient collective of
  // --dist-fuse-gradients reads it), the parameter's the optimizer's first.
  Location loc = step.getLoc();
  tag.phase = b.getStringAttr("backward");
  SmallVector<Value> paramGrads, state, newParams, newState;
  for (auto [k, p] : llvm::enumerate(params)) {
    Value g = grads.lookup(p);
    paramGrads.push_back(padWithZeros(
        b, loc,
        g ? g : vjp::zeros(b, loc, cast<RankedTensorType>(p.getType())),
        l.updateTypes[k]));
  }
  tag.phase = b.getStringAttr("optimizer");
  for (unsigned k = 0; k < l.state.size(); ++k)
    state.push_back(step.getArgument(l.stateBegin() + k));
  SmallVector<Value> updated(params);
  for (unsigned k = 0; k < params.size(); ++k)
    updated[k] = padWithZeros(b, loc, params[k], l.updateTypes[k]);
  train::buildUpdate(b, loc, config(), updated, paramGrads, state, newParams,
                     newState);
  for (unsigned k = 0; k < params.size(); ++k) {
    auto type = cast<RankedTensorType>(params[k].getType());
    if (newParams[k].getType() == type)
      continue;
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
        sizes, strides(type.getRank(), b.getIndexAttr(1));
    for (int64_t n : type.getShape())
      sizes.push_back(b.getIndexAttr(n));
    newParams[k] = tensor::ExtractSliceOp::create(b, loc, type, newParams[k],
                                                  offsets, sizes, strides);
  }
  tag.phase = {};
  SmallVector<Value> results = {lossValue};
  llvm::append_range(results, newParams);
  llvm::append_range(results, newState);
  func::ReturnOp::create(b, step.getLoc(), results);
  return success();
}

FailureOr<int64_t> DistTrainingStepPass::dataDevices(func::FuncOp step,
                                                     const StepLayout &l) {
  int64_t devices = 1;
  if (!dataAxis.empty()) {
    auto mesh = step->getParentOfType<ModuleOp>()->getAttrOfType<dist::MeshAttr>(
        dist::DistDialect::kMeshAttrName);
    devices = mesh.getAxisSizes()[*mesh.toDeviceMesh().getAxisIndex(
        dataAxis.getValue())];
  }
  if (microBatches < 1)
    return step.emitError("dist-training-step: micro-batches must be at "
                          "least 1, got ")
           << microBatches;
  std::string why;
  for (unsigned a = l.inputBegin(); microBatches > 1 && a <= l.labelsArg(); ++a)
    if (!train::canCutMicroBatches(step.getArgumentTypes()[a], microBatches,
                                   devices, why))
      return step.emitError("dist-training-step: '")
             << argName(step, a) << "' " << why;
  return devices;
}

LogicalResult DistTrainingStepPass::stepOnBatch(
    OpBuilder &b, PhaseTagger &tag, func::FuncOp main, IRMapping &mapping,
    ArrayRef<Value> params, ArrayRef<RankedTensorType> sumTypes,
    Value labelsArg, DenseMap<Value, Value> &grads, Value &lossValue) {
  Block &fwd = main.getBody().front();
  for (Operation &op : fwd.without_terminator())
    b.clone(op, mapping);
  Value output = mapping.lookup(fwd.getTerminator()->getOperand(0));
  Value labels = mapping.lookupOrDefault(labelsArg);
  DenseMap<Value, Value> batchGrads;
  Value batchLoss;
  if (failed(backward(b, tag, params, output, labels, batchGrads, batchLoss)))
    return failure();
  // Accumulate into the step's gradients and loss. The sums carry
  // kAccumulatesAttr = the parameter's argument number until the pass ends
  // (optimizer shard keeps them split, OptimizerShard.cpp).
  tag.phase = b.getStringAttr("backward");
  for (auto [k, p] : llvm::enumerate(params))
    if (Value g = batchGrads.lookup(p)) {
      if (!sumTypes.empty())
        g = padWithZeros(b, p.getLoc(), g, sumTypes[k]);
      Value &sum = grads[p];
      if (!sum) {
        sum = g;
        continue;
      }
      sum = vjp::add(b, p.getLoc(), sum, g);
      sum.getDefiningOp()->setAttr(
          train::kAccumulatesAttr,
          b.getI64IntegerAttr(cast<BlockArgument>(p).getArgNumber()));
    }
  tag.phase = b.getStringAttr("loss");
  lossValue = lossValue ? vjp::add(b, batchLoss.getLoc(), lossValue, batchLoss)
                        : batchLoss;
  tag.phase = {};
  return success();
}

void DistTrainingStepPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto main = module.lookupSymbol<func::FuncOp>(entry);
  if (!main || main.isExternal()) {
    module.emitError("dist-training-step: no function @") << entry
        << " with a body to differentiate";
    return signalPassFailure();
  }
  if (module.lookupSymbol("train_step")) {
    module.emitError("dist-training-step: the module already has a "
                     "@train_step (the pass runs once)");
    return signalPassFailure();
  }
  std::string why;
  if (failed(train::verifyOptimizer(config(), why))) {
    module.emitError("dist-training-step: ") << why;
    return signalPassFailure();
  }
  if (!main.getBody().hasOneBlock() || main.getNumResults() == 0) {
    main.emitError("dist-training-step: @")
        << entry << " must have one block and at least one result";
    return signalPassFailure();
  }
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  FailureOr<RankedTensorType> labelType =
      train::labelType(loss, ret.getOperand(0), why);
  if (failed(labelType)) {
    ret.emitError("dist-training-step: ") << why;
    return signalPassFailure();
  }
  // A strategy file's optimizer_shard (a module attribute) turns optimizer
  // parallel on with its threshold.
  shardOn = optimizerShard;
  shardThreshold = optimizerShardThreshold;
  if (auto fromFile =
          module->getAttrOfType<DictionaryAttr>("dist.optimizer_shard")) {
    shardOn = true;
    shardThreshold = fromFile.getAs<IntegerAttr>("threshold").getInt();
  }
  StepLayout l;
  FailureOr<func::FuncOp> step = buildSignature(main, l, *labelType);
  if (failed(step))
    return signalPassFailure();
  if (failed(buildBody(main, *step, l))) {
    step->erase();
    return signalPassFailure();
  }
  // Transformations of the built step (each in its own file).
  if (failed(train::applyRecompute(*step, recompute)) ||
      (shardOn && failed(shardOptimizerState(*step, shardThreshold)))) {
    step->erase();
    return signalPassFailure();
  }
  step->walk([](Operation *op) { op->removeAttr(train::kAccumulatesAttr); });
  main.erase();
}
