//===- TrainingMemory.cpp - What a training step keeps per device ---------===//

#include "TrainingMemory.h"

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "autoshard/Dialect/Dist/IR/DistOps.h"
#include "autoshard/Propagate/RuleModels.h"

using namespace mlir;

namespace autoshard {

namespace {
StringRef phaseOf(Operation *op) {
  if (auto phase = op->getAttrOfType<StringAttr>("dist.phase"))
    return phase.getValue();
  return "";
}

/// The layout propagation gave `v`: its argument's, or its producer's
/// result layout.
dist::LayoutAttr writtenLayout(func::FuncOp func, Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return func.getArgAttrOfType<dist::LayoutAttr>(arg.getArgNumber(),
                                                   "dist.layout");
  Operation *def = v.getDefiningOp();
  auto strategy = def->getAttrOfType<dist::StrategyAttr>(
      dist::DistDialect::kStrategyAttrName);
  unsigned i = cast<OpResult>(v).getResultNumber();
  if (strategy && i < strategy.getResults().size())
    return strategy.getResults()[i];
  if (auto reshard = dyn_cast<dist::ReshardOp>(def))
    return reshard.getTarget();
  if (auto annotate = dyn_cast<dist::AnnotateOp>(def))
    return annotate.getLayout();
  return {};
}
} // namespace

bool isTrainingStep(func::FuncOp func) {
  return !func.isExternal() &&
         llvm::any_of(func.getBody().front(),
                      [](Operation &op) { return !phaseOf(&op).empty(); });
}

std::optional<TrainingMemory>
measureTrainingMemory(func::FuncOp func, const CostModel &model,
                      llvm::function_ref<double(Value)> bytesOf,
                      llvm::DenseSet<Value> *kept) {
  if (!isTrainingStep(func))
    return std::nullopt;
  Block &body = func.getBody().front();
  TrainingMemory m;
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    double bytes = bytesOf(arg);
    if (func.getArgAttr(i, "dist.weight") || func.getArgAttr(i, "dist.param"))
      m.params += bytes;
    else if (func.getArgAttr(i, "dist.init"))
      m.state += bytes;
    else
      m.inputs += bytes;
  }
  // A forward value is an activation when the loss or the backward reads
  // it; it is kept from its definition to its last such read. The figure is
  // the most kept at once (with micro-batches, one micro-batch's forward is
  // freed before the next one runs). A backward value is a gradient when the
  // optimizer reads it.
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = i;
  llvm::DenseMap<Value, unsigned> lastRead;
  llvm::DenseSet<Value> gradValues;
  for (Operation &op : body) {
    StringRef phase = phaseOf(&op);
    if (phase.empty())
      continue;
    for (Value v : op.getOperands()) {
      // Through the reshards propagation put after a producer, and the
      // annotations that pin a value (optimizer shard pins the accumulated
      // gradients).
      while (
          isa_and_nonnull<dist::ReshardOp, dist::AnnotateOp>(v.getDefiningOp()))
        v = v.getDefiningOp()->getOperand(0);
      Operation *def = v.getDefiningOp();
      if (!def)
        continue;
      StringRef from = phaseOf(def);
      if (from.empty() && phase != "optimizer")
        lastRead[v] = position[&op];
      else if (from == "backward" && phase == "optimizer" &&
               gradValues.insert(v).second)
        m.grads += bytesOf(v);
    }
  }
  // Sweep the kept intervals: +bytes at the definition, -bytes after the
  // last read.
  std::vector<std::pair<unsigned, double>> events;
  for (auto [v, last] : lastRead) {
    double bytes = bytesOf(v);
    events.push_back({position[v.getDefiningOp()], bytes});
    events.push_back({last + 1, -bytes});
  }
  llvm::sort(events);
  double live = 0;
  for (auto [at, bytes] : events)
    m.activations = std::max(m.activations, live += bytes);
  if (kept) {
    for (auto [v, last] : lastRead)
      kept->insert(v);
    kept->insert(gradValues.begin(), gradValues.end());
  }
  return m;
}

std::optional<double> countTrainingMemory(func::FuncOp func,
                                          const CostModel &model,
                                          PropagationReport &report) {
  auto bytesOf = [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    dist::LayoutAttr layout = writtenLayout(func, v);
    if (!type || !layout)
      return 0.0;
    return model.getTensorBytesPerDevice(
        layout.toTensorLayout(), type.getShape().vec(), getElemBytes(type));
  };
  std::optional<TrainingMemory> m =
      measureTrainingMemory(func, model, bytesOf, nullptr);
  if (!m)
    return std::nullopt;
  report.parameterBytesPerDevice += m->params;
  report.optimizerStateBytesPerDevice += m->state;
  report.gradientBytesPerDevice += m->grads;
  report.activationBytesPerDevice += m->activations;
  return m->total();
}

} // namespace autoshard
