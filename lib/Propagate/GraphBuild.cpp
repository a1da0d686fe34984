//===- GraphBuild.cpp - Phase 1: the graph of a function ------------------===//
//
// One node per function argument, per top-level op (ops on scalars only are
// not distributed) and per function result; where each operand comes from;
// canonical keys; the uses that become edges; and a fan-out node for every
// value read by several ops. Candidates come from Candidates.cpp.
//
//===----------------------------------------------------------------------===//

#include "FunctionPropagation.h"

#include "autoshard/Propagate/StableHash.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace autoshard;
using namespace autoshard::dist;
using namespace autoshard::propagate;

/// An op whose result carries no data a consumer reads before overwriting,
/// or only zeros: it may take any layout a consumer wants, a pending partial
/// sum included, without a reshard.
static bool isLayoutFree(Operation *op) {
  if (isa<tensor::EmptyOp>(op))
    return true;
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
           matchPattern(fill.getInputs()[0], m_Zero());
  return false;
}

LogicalResult FunctionPropagation::buildGraph() {
  size_t numOps = body.getOperations().size();
  nodes.reserve(body.getNumArguments() + numOps + returnOp->getNumOperands());
  opNode.reserve(numOps);
  addArgumentNodes();
  if (failed(addOpNodes()))
    return failure();
  addResultNodes();
  computeKeys();
  collectUses();
  addFanoutNodes();
  return success();
}

OperandSource FunctionPropagation::sourceOf(Value v) const {
  OperandSource src;
  src.tensor = isa<RankedTensorType>(v.getType());
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    src.graph = arg.getOwner() == &body;
    src.node = arg.getArgNumber();
    return src;
  }
  src.slot = cast<OpResult>(v).getResultNumber();
  auto it = opNode.find(v.getDefiningOp());
  if (it != opNode.end()) {
    src.graph = true;
    src.node = it->second;
  }
  return src;
}

ArrayRef<OperandSource> FunctionPropagation::sourcesOf(const Node &n) const {
  return ArrayRef<OperandSource>(operandSources)
      .slice(n.firstOperand, n.op->getNumOperands());
}

bool FunctionPropagation::readsLayoutFree(const OperandSource &src,
                                          Value v) const {
  return src.graph && src.node >= firstOpNode && nodes[src.node].layoutFree &&
         v.hasOneUse();
}

void FunctionPropagation::addArgumentNodes() {
  for (BlockArgument arg : body.getArguments()) {
    Node n;
    n.kind = Node::Arg;
    n.index = arg.getArgNumber();
    n.list = argumentCandidates(arg.getType());
    nodes.push_back(std::move(n));
  }
  classes.classOfNode.assign(nodes.size(), 0);
  firstOpNode = nodes.size();
}

/// Ops, by class (see OpClass). Ops on scalars only (index arithmetic,
/// scalar constants) are not distributed: they run on every device and get
/// no strategy.
LogicalResult FunctionPropagation::addOpNodes() {
  auto isTensorFree = [](Operation &op) {
    return llvm::none_of(op.getOperandTypes(),
                         llvm::IsaPred<RankedTensorType>) &&
           llvm::none_of(op.getResultTypes(), llvm::IsaPred<RankedTensorType>);
  };
  for (Operation &op : body.without_terminator()) {
    if (isTensorFree(op))
      continue;
    Node n;
    n.kind = Node::Op;
    n.op = &op;
    OpClass &cls = classes.classOf(&op);
    n.layoutFree = isLayoutFree(&op);
    FailureOr<CandidateList> list =
        opCandidates(op, cls, n.layoutFree, n.userFixed);
    if (failed(list))
      return failure();
    n.list = *list;
    // Producers come first (SSA dominance), so they have their nodes.
    n.firstOperand = operandSources.size();
    for (Value v : op.getOperands())
      operandSources.push_back(sourceOf(v));
    opNode[&op] = nodes.size();
    nodes.push_back(std::move(n));
  }
  firstResult = nodes.size();
  return success();
}

/// Function results: their layout is the producer's with pending partial
/// reductions resolved (a caller never receives a partial value).
void FunctionPropagation::addResultNodes() {
  for (OpOperand &use : returnOp->getOpOperands()) {
    Node n;
    n.kind = Node::Result;
    n.index = use.getOperandNumber();
    OperandSource src = sourceOf(use.get());
    n.list = resultCandidates(src.node, src.slot, use.get().getType());
    nodes.push_back(std::move(n));
  }
}

/// Canonical keys: a structural hash of each op and its operands' keys, so
/// reordering independent ops does not change the solution.
void FunctionPropagation::computeKeys() {
  hashes.assign(nodes.size(), 0);
  // FNV over the op's name, then the stable hashes of its result types and
  // attributes (types and attributes repeat across layers: each is hashed
  // once).
  StableHasher stable(ctx);
  auto hashOp = [&](Operation *op, const Node &n) {
    uint64_t h = fnv(1469598103934665603ull, op->getName().getStringRef());
    if (n.kind == Node::Result)
      h = fnvDecimal(fnv(h, "#"), n.index);
    for (Type t : op->getResultTypes())
      h = fnvDecimal(h, stable.hash(t));
    for (NamedAttribute attr : op->getAttrs())
      if (!attr.getName().getValue().starts_with("dist.")) {
        h = fnv(h, attr.getName().getValue());
        h = fnvDecimal(fnv(h, "="), stable.hash(attr.getValue()));
      }
    return h;
  };
  for (unsigned i = 0; i < nodes.size(); ++i) {
    Node &n = nodes[i];
    uint64_t h = 1469598103934665603ull;
    if (n.kind == Node::Arg) {
      h = fnvDecimal(fnv(h, "arg"), n.index);
    } else {
      Operation *op = n.kind == Node::Op ? n.op : returnOp.getOperation();
      if (n.kind == Node::Op) {
        // The class's members agree on everything hashOp reads.
        OpClass &cls = classes.classes[classes.classOfNode[i]];
        if (!cls.hasPrefix) {
          cls.prefix = hashOp(op, n);
          cls.hasPrefix = true;
        }
        h = cls.prefix;
      } else {
        h = hashOp(op, n);
      }
      auto hashOperand = [&](const OperandSource &src) {
        h = src.graph ? fnvDecimal(fnv(fnvDecimal(h, hashes[src.node]), "/"),
                                   src.slot)
                      : fnv(h, "outer");
      };
      if (n.kind == Node::Op) {
        for (const OperandSource &src : sourcesOf(n))
          hashOperand(src);
      } else {
        hashOperand(sourceOf(op->getOperand(n.index)));
      }
    }
    hashes[i] = h;
  }
}

/// Uses that become edges: every tensor operand of a graph op read from a
/// graph value, except a layout-free producer (empty, zero fill) used only
/// there, which follows the operand with no reshard and no edge.
void FunctionPropagation::collectUses() {
  for (unsigned cn = firstOpNode; cn < firstResult; ++cn) {
    const Node &n = nodes[cn];
    for (auto [use, src] :
         llvm::zip_equal(n.op->getOpOperands(), sourcesOf(n))) {
      if (!src.tensor || !src.graph || readsLayoutFree(src, use.get()))
        continue;
      usesOfValue[use.get()].push_back(edgeUses.size());
      edgeUses.push_back({&use, src.node, src.slot, cn});
    }
  }
}

/// A value read by several ops gets a fan-out node: the layout it is
/// resharded to once, shared by every consumer that wants it (the rewrite
/// emits one reshard per value and layout). Without it each consumer would
/// pay for the shared reshard again, and the solver would avoid layouts that
/// need one. Its candidates: see fanoutCandidates.
void FunctionPropagation::addFanoutNodes() {
  for (auto &[value, ids] : usesOfValue) {
    if (ids.size() < 2)
      continue;
    const EdgeUse &first = edgeUses[ids.front()];
    // The lists in first-seen order (the first layout of each key wins).
    SmallVector<unsigned, 8> lists;
    auto addList = [&](unsigned list) {
      if (!llvm::is_contained(lists, list))
        lists.push_back(list);
    };
    addList(idsOf(first.pn, first.slot, true));
    for (unsigned id : ids) {
      const EdgeUse &u = edgeUses[id];
      addList(idsOf(u.cn, u.use->getOperandNumber(), false));
    }
    Node n;
    n.kind = Node::Fanout;
    n.value = value;
    n.index = first.slot;
    n.list = fanoutCandidates(lists);
    hashes.push_back(fnvDecimal(fnv(hashes[first.pn], "fanout/"), first.slot));
    fanoutOf[value] = nodes.size();
    nodes.push_back(std::move(n));
  }
}
