//===- MemoryBound.cpp - Phase 4: the plan within the device's memory -----===//
//
// `memory_gib` (cluster file) bounds the plan's bytes per device, as the
// report counts them (every value once at its producer's layout; see
// planMemory). When the fastest plan does not fit, the solver runs again
// on the Lagrangian relaxation: each candidate's node cost plus `lambda`
// times the bytes its results take per device. A larger multiplier gives a
// smaller plan; the search finds a multiplier whose plan fits (growing it
// geometrically), then bisects (geometrically) between the last that did
// not fit and the first that did, keeping the fastest plan that fits, which
// MemoryRepair.cpp then gives back what the bound does not need. No
// multiplier fitting, even one that makes memory all that counts, is a
// one-line error with the smallest plan found.
//
// For a training step the figure is the step's (TrainingMemory.h:
// parameters, optimizer state, inputs, gradients and the activations live
// at the peak), measured on the candidate plan; the penalty charges the
// arguments, gradients and activations (all activations, where the figure
// counts those live at once).
//
//===----------------------------------------------------------------------===//

#include "FunctionPropagation.h"
#include "TrainingMemory.h"

#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace autoshard;
using namespace autoshard::propagate;

void FunctionPropagation::applySolution(const std::vector<unsigned> &choice) {
  for (Node &n : nodes) {
    n.chosen = &n.cands()[choice[n.solverId]];
    n.operandOverride.clear();
    n.resultOverride.clear();
  }
  absorbLayoutFree();
}

double FunctionPropagation::tensorBytes(const TensorLayout &l, Type type) {
  auto [it, inserted] = bytesOf.try_emplace(
      {static_cast<const void *>(&l), type.getAsOpaquePointer()}, 0.0);
  if (inserted)
    it->second =
        model.getTensorBytesPerDevice(l, getShape(type), getElemBytes(type));
  return it->second;
}

/// The chosen layout of a value of the function (null when it has none).
const TensorLayout *FunctionPropagation::chosenLayout(Value v) const {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &body ? &nodes[arg.getArgNumber()].resultLayout(0)
                                   : nullptr;
  auto it = opNode.find(v.getDefiningOp());
  unsigned i = cast<OpResult>(v).getResultNumber();
  if (it == opNode.end() || i >= nodes[it->second].getNumResultLayouts())
    return nullptr;
  return &nodes[it->second].resultLayout(i);
}

/// Every value once, at its producer's layout (repeating layouts and types
/// priced once); reshards' results are not counted (a copy in passing, as
/// for the reshards the pass emits). A training step keeps less: what
/// countTrainingMemory counts (TrainingMemory.h).
double FunctionPropagation::planMemory() {
  if (training)
    return measureTrainingMemory(
               func, model,
               [&](Value v) {
                 const TensorLayout *l = chosenLayout(v);
                 return l && isa<RankedTensorType>(v.getType())
                            ? tensorBytes(*l, v.getType())
                            : 0.0;
               },
               nullptr)
        ->total();
  return allValuesMemory();
}

double FunctionPropagation::allValuesMemory() {
  double bytes = 0.0;
  forEachValueMemory([&](Value, double b) { bytes += b; });
  return bytes;
}

void FunctionPropagation::forEachValueMemory(
    llvm::function_ref<void(Value, double)> fn) {
  for (BlockArgument arg : body.getArguments())
    if (isa<RankedTensorType>(arg.getType()))
      fn(arg,
         tensorBytes(nodes[arg.getArgNumber()].resultLayout(0), arg.getType()));
  for (unsigned i = firstOpNode; i < firstResult; ++i) {
    const Node &n = nodes[i];
    if (isa<dist::ReshardOp>(n.op))
      continue;
    for (OpResult r : n.op->getResults())
      if (isa<RankedTensorType>(r.getType()) &&
          r.getResultNumber() < n.getNumResultLayouts())
        fn(r, tensorBytes(n.resultLayout(r.getResultNumber()), r.getType()));
  }
}

/// The bytes per device each candidate of node `i` gives its results, as
/// planMemory counts them (layout-free ops, which take their consumer's
/// layout, count nothing here).
std::vector<double> FunctionPropagation::candidateBytes(unsigned i) {
  const Node &n = nodes[i];
  std::vector<double> bytes(n.cands().size(), 0.0);
  SmallVector<Type, 2> types;
  if (n.kind == Node::Arg)
    types.push_back(body.getArgument(n.index).getType());
  else if (n.kind == Node::Op && !n.layoutFree && !isa<dist::ReshardOp>(n.op))
    for (OpResult r : n.op->getResults())
      // A training step keeps only its gradients and activations.
      types.push_back(!training || keptValues.contains(r) ? r.getType()
                                                          : Type());
  for (auto [ci, c] : llvm::enumerate(n.cands()))
    for (auto [slot, type] : llvm::enumerate(types))
      if (type && isa<RankedTensorType>(type) && slot < c.resultLayouts.size())
        bytes[ci] += tensorBytes(c.resultLayouts[slot], type);
  return bytes;
}

/// The solver graph with `lambda` times each candidate's bytes added to its
/// node cost.
static SolverGraph
penalised(const SolverGraph &graph, double lambda,
          const std::vector<std::shared_ptr<const std::vector<double>>>
              &bytesOfNode) {
  SolverGraph g;
  for (unsigned i = 0; i < graph.getNumNodes(); ++i) {
    const SolverGraph::Node &n = graph.getNode(i);
    std::vector<double> costs = *n.costs;
    for (unsigned c = 0; c < costs.size(); ++c)
      costs[c] += lambda * (*bytesOfNode[i])[c];
    g.addNode(n.key, std::move(costs));
  }
  for (const SolverGraph::Edge &e : graph.getEdges())
    g.addEdge(e.src, e.dst, e.table);
  for (const SolverGraph::Restriction &r : graph.getRestrictions())
    g.restrict(r.node, r.allowed, r.priority);
  return g;
}

LogicalResult FunctionPropagation::boundMemory(const SolverOptions &sopts,
                                               SolverResult &result) {
  double bound = model.getCluster().memoryGiB * double(1ull << 30);
  training = isTrainingStep(func);
  if (training)
    measureTrainingMemory(
        func, model, [](Value) { return 0.0; }, &keptValues);
  double unboundedBytes = planMemory();
  if (unboundedBytes <= bound)
    return success();
  // Candidate bytes by solver node, shared by nodes with the same list and
  // types.
  std::vector<std::shared_ptr<const std::vector<double>>> bytesOfNode(
      graph.getNumNodes());
  std::map<std::pair<const void *, std::vector<const void *>>,
           std::shared_ptr<const std::vector<double>>>
      byList;
  for (unsigned i = 0; i < nodes.size(); ++i) {
    const Node &n = nodes[i];
    std::vector<const void *> key;
    if (n.kind == Node::Arg)
      key.push_back(body.getArgument(n.index).getType().getAsOpaquePointer());
    else if (n.kind == Node::Op && !n.layoutFree && !isa<dist::ReshardOp>(n.op))
      for (OpResult r : n.op->getResults())
        key.push_back(!training || keptValues.contains(r)
                          ? r.getType().getAsOpaquePointer()
                          : nullptr);
    auto &bytes = byList[{&n.cands(), key}];
    if (!bytes)
      bytes = std::make_shared<const std::vector<double>>(candidateBytes(i));
    bytesOfNode[n.solverId] = bytes;
  }
  double unboundedCost = result.cost + planValues();
  const std::vector<unsigned> fastest = result.assignment;
  valuePlans.clear();
  std::optional<SolverResult> best;
  double bestCost = 0.0, smallest = unboundedBytes;
  // Returns whether the plan at `lambda` fits.
  auto trial = [&](double lambda) {
    SolverResult r = solve(penalised(graph, lambda, bytesOfNode), sopts);
    if (!r.error.empty())
      return false;
    applySolution(r.assignment);
    double bytes = planMemory();
    smallest = std::min(smallest, bytes);
    if (bytes > bound)
      return false;
    double cost = graph.evaluate(r.assignment);
    if (!best || cost < bestCost) {
      bestCost = cost;
      best = std::move(r);
    }
    return true;
  };
  // Microseconds per byte: from a nanosecond per megabyte, growing until
  // memory is all that counts.
  double lo = 0.0, hi = 1e-9;
  while (!trial(hi)) {
    lo = hi;
    hi *= 16;
    if (hi > 1e12) {
      applySolution(result.assignment);
      std::string message;
      llvm::raw_string_ostream(message)
          << llvm::format("dist-propagate: no plan fits memory_gib = %g "
                          "(%.0f bytes per device); the smallest plan found "
                          "needs %.0f bytes per device",
                          model.getCluster().memoryGiB, bound, smallest);
      // At the function's location (not the whole function printed).
      return mlir::emitError(func.getLoc()) << message;
    }
  }
  for (int i = 0; i < 12 && lo > 0.0 && hi / lo > 1.05; ++i) {
    double mid = std::sqrt(lo * hi);
    (trial(mid) ? hi : lo) = mid;
  }
  // What the multiplier gave, then what the repair gives back.
  applySolution(best->assignment);
  double multiplierBytes = planMemory();
  report.unrepairedCostUs += bestCost + planValues();
  report.unrepairedMemoryBytesPerDevice += multiplierBytes;
  valuePlans.clear();
  repairMemory(fastest, bytesOfNode, bound, multiplierBytes, best->assignment,
               bestCost);
  result = std::move(*best);
  result.cost = bestCost;
  // Optimal for the relaxation, not proven so under the bound.
  result.optimal = false;
  applySolution(result.assignment);
  report.unboundedCostUs += unboundedCost;
  report.unboundedMemoryBytesPerDevice += unboundedBytes;
  report.memoryBounded = true;
  return success();
}
