//===- CostGraph.cpp - Phase 3: the priced solver graph -------------------===//
//
// Node cost = the candidate's compute time; an edge per use (through the
// value's fan-out node when it has several readers) whose table holds the
// reshard planner's time from the producer's result layout to the
// consumer's operand layout; user annotations as restrictions. Tables are
// built from interned layout ids and priced at the end, each distinct
// reshard once (Pricing.h).
//
//===----------------------------------------------------------------------===//

#include "Captures.h"
#include "FunctionPropagation.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace autoshard;
using namespace autoshard::dist;
using namespace autoshard::propagate;

/// A node's solver key: its hash as 13 base-32 digits, most significant
/// first. Keys sort as the numbers do (as 16 hex digits would), and fit in
/// std::string's inline buffer: no allocation per node.
static std::string nodeKey(uint64_t hash) {
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuv";
  std::string key(13, '0');
  for (int i = 12; i >= 0; --i, hash >>= 5)
    key[i] = kDigits[hash & 31];
  return key;
}

void FunctionPropagation::buildSolverGraph() {
  addNodeCosts();
  addUseEdges();
  addHaloPenaltyEdges();
  addTiedEdges();
  addAnnotationRestrictions();
  report.numPricedReshards += pricing.pairs.size();
}

/// Node costs by candidate list, shared by the graph's nodes (not copied):
/// an op's compute time; a `dist.reshard` already in the input costs the
/// planner's time for its one candidate, as a reshard the pass emits.
void FunctionPropagation::addNodeCosts() {
  llvm::DenseMap<std::pair<const void *, unsigned>,
                 std::shared_ptr<const std::vector<double>>>
      nodeCosts;
  for (unsigned i = 0; i < nodes.size(); ++i) {
    Node &n = nodes[i];
    bool isOp = n.kind == Node::Op;
    auto [it, inserted] =
        nodeCosts.try_emplace({static_cast<const void *>(&n.cands()), isOp});
    if (inserted) {
      auto costs = std::make_shared<std::vector<double>>();
      costs->reserve(n.cands().size());
      for (const Candidate &c : n.cands()) {
        double cost = 0.0;
        if (isOp && isa<ReshardOp>(n.op))
          cost = planTime(n.op->getOperand(0), c.operandLayouts[0],
                          c.resultLayouts[0]);
        else if (isOp)
          cost = model.getComputeTimeUs(c.flops);
        costs->push_back(cost);
      }
      it->second = std::move(costs);
    }
    n.solverId = graph.addNode(nodeKey(hashes[i]), it->second);
    report.numCandidates += it->second->size();
  }
}

/// An edge from result `slot` of node `pn` to operand `operand` of node `cn`
/// (a fan-out node has one of each).
void FunctionPropagation::addUseEdge(unsigned pn, unsigned slot, unsigned cn,
                                     unsigned operand, Type type,
                                     bool resolveOnly) {
  const Pricing::TypeInfo &info = pricing.typeInfo(type);
  unsigned src = idsOf(pn, slot, true);
  unsigned dst = idsOf(cn, operand, false);
  // Into a conv or pool's input: gathering its split rows is priced as the
  // halo exchange --dist-partition makes of it.
  std::optional<std::vector<HaloDim>> halo;
  if (nodes[cn].kind == Node::Op && !resolveOnly)
    halo = haloDimsOf(nodes[cn].op, operand);
  graph.addEdge(
      nodes[pn].solverId, nodes[cn].solverId,
      pricing.table(info, src, dst, resolveOnly, halo ? &*halo : nullptr));
}

void FunctionPropagation::addUseEdges() {
  for (auto &[value, ids] : usesOfValue) {
    auto fit = fanoutOf.find(value);
    if (fit == fanoutOf.end()) {
      const EdgeUse &u = edgeUses[ids.front()];
      addUseEdge(u.pn, u.slot, u.cn, u.use->getOperandNumber(), value.getType(),
                 false);
      continue;
    }
    const EdgeUse &first = edgeUses[ids.front()];
    addUseEdge(first.pn, first.slot, fit->second, 0, value.getType(), false);
    for (unsigned id : ids)
      addUseEdge(fit->second, 0, edgeUses[id].cn,
                 edgeUses[id].use->getOperandNumber(), value.getType(), false);
  }
  for (OpOperand &use : returnOp->getOpOperands()) {
    if (!isa<RankedTensorType>(use.get().getType()))
      continue;
    OperandSource src = sourceOf(use.get());
    addUseEdge(src.node, src.slot, firstResult + use.getOperandNumber(), 0,
               use.get().getType(), true);
  }
}

/// A halo-priced edge (addUseEdge) holds when the window op splits its
/// output rows as its input was split; where the op's candidate does not,
/// --dist-partition all-gathers after all. An edge from the input's
/// producer to the window op charges the difference there.
void FunctionPropagation::addHaloPenaltyEdges() {
  for (unsigned wn = firstOpNode; wn < firstResult; ++wn) {
    Operation *op = nodes[wn].op;
    std::optional<std::vector<HaloDim>> dims = haloDimsOf(op, 0);
    if (!dims)
      continue;
    Value x = op->getOperand(0);
    if (auto pad = x.getDefiningOp<tensor::PadOp>())
      if (auto padDims = haloDimsOf(pad, 0)) {
        dims = padDims;
        x = pad.getSource();
      }
    OperandSource src = sourceOf(x);
    if (!src.graph || !src.tensor)
      continue;
    const std::vector<unsigned> &ids =
        pricing.lists[idsOf(src.node, src.slot, true)];
    const std::vector<Candidate> &cands = nodes[wn].cands();
    std::vector<double> matrix(ids.size() * cands.size(), 0.0);
    bool any = false;
    std::vector<int64_t> shape = getShape(x.getType());
    for (auto [i, id] : llvm::enumerate(ids)) {
      const TensorLayout &have = pricing.layouts[id];
      TensorLayout whole = wholeOnHaloDims(have, *dims);
      std::optional<double> halo = model.getHaloTimeUs(
          have, whole, shape, getElemBytes(x.getType()), *dims);
      if (!halo)
        continue;
      double penalty = planTime(x, have, whole) - *halo;
      if (penalty <= 0.0)
        continue;
      for (auto [j, c] : llvm::enumerate(cands))
        if (!haloFollowsOutput(have, c.resultLayouts[0], *dims)) {
          matrix[i * cands.size() + j] = penalty;
          any = true;
        }
    }
    if (any)
      graph.addEdge(nodes[src.node].solverId, nodes[wn].solverId,
                    std::move(matrix));
  }
}

/// A result tied to an argument (a training step's updated parameters and
/// state, TiedResults.h) is that argument in the next call: the reshard from
/// the one's layout to the other's is part of the program's cost.
void FunctionPropagation::addTiedEdges() {
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto tied = func.getResultAttrOfType<IntegerAttr>(i, "dist.tied_arg");
    Type type = func.getResultTypes()[i];
    if (!tied || !isa<RankedTensorType>(type) || tied.getInt() < 0 ||
        tied.getInt() >= body.getNumArguments() ||
        body.getArgument(tied.getInt()).getType() != type)
      continue;
    unsigned rn = firstResult + i, an = tied.getInt();
    graph.addEdge(nodes[rn].solverId, nodes[an].solverId,
                  pricing.table(pricing.typeInfo(type), idsOf(rn, 0, false),
                                idsOf(an, 0, true), false));
  }
}

/// An annotation (`dist.annotate %v`) asks that %v have its layout, i.e.
/// restricts that value's producer; higher priority wins. One that states
/// what an op needs of a tensor it captures (Captures.h) restricts nothing:
/// its operand edge prices the reshard.
void FunctionPropagation::addAnnotationRestrictions() {
  std::map<std::tuple<const void *, unsigned, const void *>,
           std::vector<unsigned>>
      allowedOf;
  for (unsigned an = firstOpNode; an < firstResult; ++an) {
    auto annotate = dyn_cast<AnnotateOp>(nodes[an].op);
    if (!annotate || annotate->hasAttr(kCaptureAttrName))
      continue;
    const OperandSource &src = sourcesOf(nodes[an])[0];
    unsigned pn = src.node, slot = src.slot;
    auto [it, inserted] = allowedOf.try_emplace(
        {&nodes[pn].cands(), slot, annotate.getLayout().getAsOpaquePointer()});
    if (inserted) {
      TensorLayout want = annotate.getLayout().toTensorLayout();
      for (auto [ci, c] : llvm::enumerate(nodes[pn].cands()))
        if (sameLayout(c.resultLayouts[slot], want))
          it->second.push_back(ci);
    }
    if (!it->second.empty())
      graph.restrict(nodes[pn].solverId, it->second, annotate.getPriority());
  }
}
