//===- Propagate.cpp - The --dist-propagate pass --------------------------===//
//
// Builds the solver graph of each function (Solver.h): one node per function
// argument, per top-level op and per function result; candidates from the
// ops' sharding rules; edge costs from the reshard planner; user constraints
// as restrictions. Then writes the solution back as the propagation
// contract: complete `dist.strategy` on every op, `dist.layout` on arguments
// and results, and an explicit `dist.reshard` for every mismatch.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Propagate/Passes.h"

#include "autoshard/Analysis/CostModel.h"
#include "autoshard/Analysis/ReshardPlanner.h"
#include "autoshard/Dialect/Dist/IR/DistOps.h"
#include "autoshard/Propagate/RuleModels.h"
#include "autoshard/Propagate/Solver.h"

#include "Report.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <memory>
#include <unordered_map>

namespace autoshard {
#define GEN_PASS_DEF_DISTPROPAGATE
#include "autoshard/Propagate/Passes.h.inc"
} // namespace autoshard

using namespace mlir;
using namespace autoshard;
using namespace autoshard::dist;

namespace {

/// A key that tells layouts apart, uneven sizes included.
std::string layoutKey(const TensorLayout &l, const DeviceMesh &mesh) {
  std::string key = l.str(mesh);
  for (const auto &sizes : l.unevenSizes) {
    key += "|";
    for (int64_t s : sizes)
      key += std::to_string(s) + ",";
  }
  return key;
}

TensorLayout dropPartial(TensorLayout l) {
  l.partialAxes.clear();
  l.partialKind = autoshard::ReductionKind::Sum;
  return l;
}

/// FNV-1a: a hash that is the same in every run (node keys must be).
uint64_t fnv(uint64_t h, StringRef s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

int64_t getElemBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  Type elem = tensor ? tensor.getElementType() : type;
  if (elem.isIntOrIndexOrFloat() && !elem.isIndex())
    return std::max<int64_t>(1, (elem.getIntOrFloatBitWidth() + 7) / 8);
  return 8;
}

std::vector<int64_t> getShape(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return std::vector<int64_t>(tensor.getShape().begin(),
                                tensor.getShape().end());
  return {};
}

/// One node of the graph: a function argument, a top-level op, or a
/// function result (the value handed to func.return).
struct Node {
  /// Fanout: the layout a value read by several ops is resharded to once
  /// (see propagateFunction).
  enum Kind { Arg, Op, Result, Fanout } kind = Op;
  /// The value of a Fanout node.
  Value value;
  Operation *op = nullptr;
  unsigned index = 0; // argument / result number
  /// Candidates: shared with every node of the same rule (enumerated once),
  /// or the node's own (user constraints, results, fan-outs).
  std::shared_ptr<const std::vector<Candidate>> shared;
  std::vector<Candidate> own;
  const std::vector<Candidate> &cands() const { return shared ? *shared : own; }
  std::string noRuleReason;
  /// Whether a user constraint (strategy or annotation) fixed this node.
  bool userFixed = false;
  unsigned solverId = 0;
  /// The chosen layouts, after the solution (and the absorption of inits):
  /// the chosen candidate's, not copied (a model has thousands of nodes),
  /// unless absorption changed them (see writable()).
  const std::vector<TensorLayout> *chosenOperands = nullptr,
                                  *chosenResults = nullptr;
  std::vector<TensorLayout> ownOperands, ownResults;
  const std::vector<TensorLayout> &operandLayouts() const {
    return *chosenOperands;
  }
  const std::vector<TensorLayout> &resultLayouts() const {
    return *chosenResults;
  }
  /// The chosen layouts as the node's own copy, to modify.
  std::vector<TensorLayout> &writable(bool results) {
    auto &chosen = results ? chosenResults : chosenOperands;
    auto &own = results ? ownResults : ownOperands;
    if (chosen != &own) {
      own = *chosen;
      chosen = &own;
    }
    return own;
  }
};

/// Layouts, shapes and edge cost tables interned to small ids so the graph
/// is built from integers: a layout is encoded as integers that tell apart
/// exactly what layoutKey tells apart (no strings in the hot path), each
/// (shape, elemBytes, from, to) is priced once, and an edge whose endpoint
/// layouts repeat an earlier edge's (the layers of a model) reuses its table.
struct Pricing {
  const DeviceMesh &mesh;
  ReshardPlanner &planner;
  std::vector<TensorLayout> layouts;
  /// encodings[id]: the integer form of layouts[id].
  std::vector<std::vector<int64_t>> encodings;
  /// layoutKey of an id, built on first request.
  std::vector<std::string> keys;
  std::unordered_map<uint64_t, llvm::SmallVector<unsigned, 1>> layoutIds;
  std::vector<int64_t> scratch;
  std::map<std::vector<int64_t>, unsigned> shapeIds;
  llvm::DenseMap<std::pair<uint64_t, uint64_t>, double> memo;
  /// dropPartial(layouts[id]), interned.
  std::vector<int> resolved;

  Pricing(const DeviceMesh &mesh, ReshardPlanner &planner)
      : mesh(mesh), planner(planner) {}

  static uint64_t hashInts(const std::vector<int64_t> &v) {
    uint64_t h = 1469598103934665603ull;
    for (int64_t x : v) {
      h ^= static_cast<uint64_t>(x);
      h *= 1099511628211ull;
      h ^= h >> 29;
    }
    return h;
  }
  /// The same distinctions as layoutKey: dim axes, partial axes in order,
  /// the kind only when partial, the uneven lists as given.
  static void encode(const TensorLayout &l, std::vector<int64_t> &out) {
    out.clear();
    out.push_back(l.dimAxes.size());
    for (const auto &axes : l.dimAxes) {
      out.push_back(axes.size());
      out.insert(out.end(), axes.begin(), axes.end());
    }
    out.push_back(l.partialAxes.size());
    out.insert(out.end(), l.partialAxes.begin(), l.partialAxes.end());
    if (!l.partialAxes.empty())
      out.push_back(static_cast<int64_t>(l.partialKind));
    out.push_back(l.unevenSizes.size());
    for (const auto &sizes : l.unevenSizes) {
      out.push_back(sizes.size());
      out.insert(out.end(), sizes.begin(), sizes.end());
    }
  }
  unsigned intern(const TensorLayout &l) {
    encode(l, scratch);
    auto &bucket = layoutIds[hashInts(scratch)];
    for (unsigned id : bucket)
      if (encodings[id] == scratch)
        return id;
    unsigned id = layouts.size();
    bucket.push_back(id);
    layouts.push_back(l);
    encodings.push_back(scratch);
    keys.emplace_back();
    resolved.push_back(-1);
    return id;
  }
  const std::string &key(unsigned id) {
    if (keys[id].empty())
      keys[id] = layoutKey(layouts[id], mesh);
    return keys[id];
  }
  unsigned dropPartialId(unsigned id) {
    if (resolved[id] < 0) {
      unsigned r = intern(dropPartial(layouts[id]));
      resolved[id] = r;
    }
    return resolved[id];
  }
  unsigned shapeId(const std::vector<int64_t> &shape) {
    return shapeIds.try_emplace(shape, shapeIds.size()).first->second;
  }
  double cost(unsigned shape, const std::vector<int64_t> &shapeVec,
              int64_t elemBytes, unsigned from, unsigned to) {
    if (from == to)
      return 0.0;
    auto [it, inserted] =
        memo.try_emplace({(uint64_t(shape) << 32) | uint64_t(elemBytes),
                          (uint64_t(from) << 32) | uint64_t(to)},
                         0.0);
    if (!inserted)
      return it->second;
    std::string error;
    auto plan =
        planner.plan(shapeVec, elemBytes, layouts[from], layouts[to], error);
    double c = plan ? plan->timeUs : kInfeasibleCost;
    // Safe: planning does not touch `memo`, so `it` is still valid.
    it->second = c;
    return c;
  }

  /// One edge's class maps and cost table.
  struct Table {
    std::vector<unsigned> srcClass, dstClass;
    unsigned numSrc = 0, numDst = 0;
    std::vector<double> cost;
  };
  std::unordered_map<uint64_t,
                     std::vector<std::pair<std::vector<int64_t>, unsigned>>>
      tableIds;
  std::vector<Table> tables;
  std::vector<int64_t> tableKey;

  const Table &table(const std::vector<int64_t> &shape, int64_t elemBytes,
                     const std::vector<unsigned> &srcIds,
                     const std::vector<unsigned> &dstIds, bool resolveOnly) {
    unsigned sid = shapeId(shape);
    tableKey.clear();
    tableKey.push_back(sid);
    tableKey.push_back(elemBytes);
    tableKey.push_back(resolveOnly);
    tableKey.push_back(srcIds.size());
    tableKey.insert(tableKey.end(), srcIds.begin(), srcIds.end());
    tableKey.insert(tableKey.end(), dstIds.begin(), dstIds.end());
    auto &bucket = tableIds[hashInts(tableKey)];
    for (auto &[k, id] : bucket)
      if (k == tableKey)
        return tables[id];
    bucket.emplace_back(tableKey, tables.size());
    Table t;
    // Local classes in first-seen order.
    auto classes = [](const std::vector<unsigned> &ids,
                      std::vector<unsigned> &classOf) {
      std::vector<unsigned> reps;
      llvm::SmallDenseMap<unsigned, unsigned, 16> seen;
      classOf.reserve(ids.size());
      for (unsigned id : ids) {
        auto [it, inserted] = seen.try_emplace(id, reps.size());
        if (inserted)
          reps.push_back(id);
        classOf.push_back(it->second);
      }
      return reps;
    };
    std::vector<unsigned> srcReps = classes(srcIds, t.srcClass);
    std::vector<unsigned> dstReps = classes(dstIds, t.dstClass);
    t.numSrc = srcReps.size();
    t.numDst = dstReps.size();
    t.cost.resize(srcReps.size() * dstReps.size());
    for (unsigned i = 0; i < srcReps.size(); ++i)
      for (unsigned j = 0; j < dstReps.size(); ++j) {
        unsigned from = srcReps[i], to = dstReps[j];
        if (resolveOnly && dropPartialId(from) != to) {
          t.cost[i * dstReps.size() + j] = kInfeasibleCost;
          continue;
        }
        t.cost[i * dstReps.size() + j] = cost(sid, shape, elemBytes, from, to);
      }
    tables.push_back(std::move(t));
    return tables.back();
  }
};

struct DistPropagatePass
    : public autoshard::impl::DistPropagateBase<DistPropagatePass> {
  using DistPropagateBase::DistPropagateBase;
  void runOnOperation() override;

private:
  FailureOr<MeshAttr> resolveMesh(ModuleOp module);
  LogicalResult convertUpstreamAnnotations(ModuleOp module, MeshAttr mesh);
  LogicalResult propagateFunction(func::FuncOp func, MeshAttr meshAttr,
                                  const CostModel &model,
                                  ReshardPlanner &planner,
                                  PropagationReport &report);
};

} // namespace

//===----------------------------------------------------------------------===//
// Mesh and upstream annotations
//===----------------------------------------------------------------------===//

FailureOr<MeshAttr> DistPropagatePass::resolveMesh(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  if (!mesh.empty()) {
    std::string text = mesh;
    if (StringRef(text).trim().starts_with("#"))
      text = StringRef(text).trim().str();
    else
      text = "#dist.mesh<[" + text + "]>";
    Attribute attr = parseAttribute(text, ctx);
    auto meshAttr = dyn_cast_or_null<MeshAttr>(attr);
    if (!meshAttr) {
      module.emitError() << "dist-propagate: cannot parse mesh option '" << mesh
                         << "' (expected e.g. 'dp=2,mp=4')";
      return failure();
    }
    return meshAttr;
  }
  if (auto attr = module->getAttrOfType<MeshAttr>(DistDialect::kMeshAttrName))
    return attr;
  // The mesh of the first user constraint, in program order.
  MeshAttr found;
  module.walk([&](Operation *op) {
    if (auto a = dyn_cast<AnnotateOp>(op))
      found = a.getLayout().getMesh();
    else if (auto r = dyn_cast<ReshardOp>(op))
      found = r.getSource().getMesh();
    else if (auto s = op->getAttrOfType<StrategyAttr>(
                 DistDialect::kStrategyAttrName))
      found = s.getMesh();
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (found)
    return found;
  shard::GridOp grid;
  module.walk([&](shard::GridOp g) {
    grid = g;
    return WalkResult::interrupt();
  });
  if (grid) {
    std::vector<MeshAxis> axes;
    for (auto [i, size] : llvm::enumerate(grid.getShape()))
      axes.push_back({"g" + std::to_string(i), size, 0.0, 0.0});
    return MeshAttr::get(ctx, DeviceMesh(std::move(axes)));
  }
  module.emitError() << "dist-propagate: no mesh; give the pass option "
                        "mesh=..., a 'dist.mesh' module attribute, or an "
                        "annotation";
  return failure();
}

/// Rewrites `shard.shard %v to %s` into `dist.annotate` so files written for
/// upstream `--sharding-propagation` work unchanged. Grid axis i is mesh axis
/// i; the grid must have the mesh's shape.
LogicalResult DistPropagatePass::convertUpstreamAnnotations(ModuleOp module,
                                                            MeshAttr meshAttr) {
  SmallVector<shard::ShardOp> shards;
  module.walk([&](shard::ShardOp op) { shards.push_back(op); });
  for (shard::ShardOp op : shards) {
    auto sharding = op.getSharding().getDefiningOp<shard::ShardingOp>();
    if (!sharding)
      return op.emitError("dist-propagate: the sharding of a shard.shard must "
                          "come from a shard.sharding op");
    auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        sharding, sharding.getGridAttr());
    if (!grid)
      return sharding.emitError("dist-propagate: unknown grid @")
             << sharding.getGrid();
    if (!llvm::equal(grid.getShape(), meshAttr.getAxisSizes()))
      return op.emitError("dist-propagate: grid @")
             << grid.getSymName() << " does not have the shape of the mesh "
             << meshAttr;
    if (!sharding.getStaticHaloSizes().empty() ||
        !sharding.getStaticShardedDimsOffsets().empty() ||
        !sharding.getDynamicHaloSizes().empty() ||
        !sharding.getDynamicShardedDimsOffsets().empty())
      return sharding.emitError("dist-propagate: halo sizes and sharded dim "
                                "offsets are not supported");
    auto type = op.getSrc().getType();
    TensorLayout layout = TensorLayout::replicated(type.getRank());
    auto splitAxes = sharding.getSplitAxes().getAxes();
    if (static_cast<int64_t>(splitAxes.size()) > type.getRank())
      return sharding.emitError("dist-propagate: sharding splits ")
             << splitAxes.size() << " dims of a rank-" << type.getRank()
             << " tensor";
    for (auto [d, axes] : llvm::enumerate(splitAxes))
      for (int16_t a : axes.asArrayRef())
        layout.dimAxes[d].push_back(a);
    std::vector<int64_t> shape = getShape(type);
    std::string err = layout.validate(meshAttr.toDeviceMesh(), &shape);
    if (!err.empty())
      return op.emitError("dist-propagate: ") << err;
    OpBuilder b(op);
    auto annotate = AnnotateOp::create(b, op.getLoc(), op.getSrc(),
                                       LayoutAttr::get(meshAttr, layout),
                                       b.getI64IntegerAttr(0));
    op.getResult().replaceAllUsesWith(annotate.getResult());
    op.erase();
  }
  SmallVector<shard::ShardingOp> dead;
  module.walk([&](shard::ShardingOp op) {
    if (op->use_empty())
      dead.push_back(op);
  });
  for (auto op : dead)
    op.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Graph construction, solution, rewrite
//===----------------------------------------------------------------------===//

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

LogicalResult DistPropagatePass::propagateFunction(func::FuncOp func,
                                                   MeshAttr meshAttr,
                                                   const CostModel &model,
                                                   ReshardPlanner &planner,
                                                   PropagationReport &report) {
  if (func.isExternal())
    return success();
  if (!func.getBody().hasOneBlock())
    return func.emitError("dist-propagate: only single-block functions are "
                          "supported");
  MLIRContext *ctx = func.getContext();
  const DeviceMesh dmesh = meshAttr.toDeviceMesh();
  Block &body = func.getBody().front();
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());

  std::vector<Node> nodes;
  llvm::DenseMap<Operation *, unsigned> opNode;
  llvm::DenseMap<Value, unsigned> fanoutOf;
  // Which node defines a value, and which of its result slots it is.
  auto producerOf = [&](Value v) -> std::pair<unsigned, unsigned> {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return {arg.getArgNumber(), 0};
    return {opNode.lookup(v.getDefiningOp()),
            cast<OpResult>(v).getResultNumber()};
  };
  Pricing pricing(dmesh, planner);
  std::unordered_map<std::string, std::shared_ptr<const std::vector<Candidate>>>
      candCache;
  auto candidatesOf = [&](const ShardingRule &rule) {
    auto [it, inserted] = candCache.try_emplace(rule.str());
    if (inserted)
      it->second = std::make_shared<const std::vector<Candidate>>(
          enumerateCandidates(rule, dmesh));
    return it->second;
  };

  // Arguments.
  for (BlockArgument arg : body.getArguments()) {
    Node n;
    n.kind = Node::Arg;
    n.index = arg.getArgNumber();
    ShardingRule rule = buildElementwiseRule({}, getShape(arg.getType()));
    n.shared = candidatesOf(rule);
    nodes.push_back(std::move(n));
  }
  // Ops. Ops on scalars only (index arithmetic, scalar constants) are not
  // distributed: they run on every device and get no strategy.
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
    if (auto annotate = dyn_cast<AnnotateOp>(op)) {
      if (annotate.getLayout().getMesh() != meshAttr)
        return annotate.emitError("dist-propagate: annotation on mesh ")
               << annotate.getLayout().getMesh() << " but propagation runs on "
               << meshAttr;
      Candidate c;
      c.operandLayouts = {annotate.getLayout().toTensorLayout()};
      c.resultLayouts = c.operandLayouts;
      n.own = {c};
      n.userFixed = true;
    } else if (auto reshard = dyn_cast<ReshardOp>(op)) {
      if (reshard.getSource().getMesh() != meshAttr)
        return reshard.emitError("dist-propagate: reshard on mesh ")
               << reshard.getSource().getMesh() << " but propagation runs on "
               << meshAttr;
      Candidate c;
      c.operandLayouts = {reshard.getSource().toTensorLayout()};
      c.resultLayouts = {reshard.getTarget().toTensorLayout()};
      n.own = {c};
      n.userFixed = true;
    } else {
      ShardingRule rule = getRuleOrReplicated(&op, n.noRuleReason);
      n.shared = candidatesOf(rule);
      if (!n.noRuleReason.empty())
        op.emitRemark() << "no sharding rule, running replicated: "
                        << n.noRuleReason;
      if (auto strategy =
              op.getAttrOfType<StrategyAttr>(DistDialect::kStrategyAttrName)) {
        if (strategy.getMesh() != meshAttr)
          return op.emitError("dist-propagate: strategy on mesh ")
                 << strategy.getMesh() << " but propagation runs on "
                 << meshAttr;
        Candidate user;
        if (failed(matchUserStrategy(&op, strategy, rule, dmesh, user)))
          return failure();
        // Keep only the user's candidate (it may be beyond the enumeration
        // bound).
        n.shared.reset();
        n.own = {user};
        if (user.flops == 0.0)
          n.own[0].flops = estimateFlops(rule, dmesh, user.factorAxes);
        n.userFixed = true;
      }
    }
    opNode[&op] = nodes.size();
    nodes.push_back(std::move(n));
  }
  // Function results: their layout is the producer's with pending partial
  // reductions resolved (a caller never receives a partial value).
  unsigned firstResult = nodes.size();
  for (OpOperand &use : returnOp->getOpOperands()) {
    Node n;
    n.kind = Node::Result;
    n.index = use.getOperandNumber();
    auto [pn, slot] = producerOf(use.get());
    std::map<std::string, TensorLayout> distinct;
    for (const Candidate &c : nodes[pn].cands()) {
      const auto &ls =
          nodes[pn].kind == Node::Arg ? c.resultLayouts : c.resultLayouts;
      if (slot < ls.size()) {
        unsigned id = pricing.dropPartialId(pricing.intern(ls[slot]));
        distinct.emplace(pricing.key(id), pricing.layouts[id]);
      }
    }
    if (distinct.empty())
      distinct.emplace(
          "", TensorLayout::replicated(getShape(use.get().getType()).size()));
    for (auto &[key, l] : distinct) {
      Candidate c;
      c.operandLayouts = {l};
      n.own.push_back(c);
    }
    nodes.push_back(std::move(n));
  }

  // Canonical keys: a structural hash of each op and its operands' keys, so
  // reordering independent ops does not change the solution.
  std::vector<uint64_t> hashes(nodes.size(), 0);
  llvm::DenseMap<const void *, std::string> printed;
  auto textOf = [&](const void *key, auto printable) -> StringRef {
    auto [it, inserted] = printed.try_emplace(key);
    if (inserted) {
      llvm::raw_string_ostream os(it->second);
      os << printable;
    }
    return it->second;
  };
  for (unsigned i = 0; i < nodes.size(); ++i) {
    Node &n = nodes[i];
    uint64_t h = 1469598103934665603ull;
    if (n.kind == Node::Arg) {
      h = fnv(h, "arg" + std::to_string(n.index));
    } else {
      Operation *op = n.kind == Node::Op ? n.op : returnOp.getOperation();
      // FNV over the concatenated text, fed piece by piece (the same hash);
      // types and attributes repeat across layers, so each is printed once.
      h = fnv(h, op->getName().getStringRef());
      if (n.kind == Node::Result)
        h = fnv(h, "#" + std::to_string(n.index));
      for (Type t : op->getResultTypes())
        h = fnv(h, textOf(t.getAsOpaquePointer(), t));
      for (NamedAttribute attr : op->getAttrs())
        if (!attr.getName().getValue().starts_with("dist.")) {
          h = fnv(h, attr.getName().getValue());
          h = fnv(h, "=");
          h = fnv(
              h, textOf(attr.getValue().getAsOpaquePointer(), attr.getValue()));
        }
      auto operands = n.kind == Node::Op ? op->getOperands()
                                         : op->getOperands().slice(n.index, 1);
      for (Value v : operands) {
        if (auto arg = dyn_cast<BlockArgument>(v);
            arg && arg.getOwner() != &body) {
          h = fnv(h, "outer");
          continue;
        }
        if (!isa<BlockArgument>(v) && !opNode.count(v.getDefiningOp())) {
          h = fnv(h, "outer");
          continue;
        }
        auto [pn, slot] = producerOf(v);
        h = fnv(h, std::to_string(hashes[pn]) + "/" + std::to_string(slot));
      }
    }
    hashes[i] = h;
  }

  // Uses that become edges: every tensor operand of a graph op read from a
  // graph value, except a layout-free producer (empty, zero fill) used only
  // there, which follows the operand with no reshard and no edge.
  struct EdgeUse {
    OpOperand *use;
    unsigned pn, slot, cn;
  };
  std::vector<EdgeUse> edgeUses;
  llvm::MapVector<Value, SmallVector<unsigned>> usesOfValue;
  for (Operation &op : body.without_terminator()) {
    if (!opNode.count(&op))
      continue;
    unsigned cn = opNode[&op];
    for (OpOperand &use : op.getOpOperands()) {
      if (!isa<RankedTensorType>(use.get().getType()))
        continue;
      if (auto arg = dyn_cast<BlockArgument>(use.get());
          arg && arg.getOwner() != &body)
        continue;
      if (!isa<BlockArgument>(use.get()) &&
          !opNode.count(use.get().getDefiningOp()))
        continue;
      if (Operation *def = use.get().getDefiningOp();
          def && isLayoutFree(def) && use.get().hasOneUse())
        continue;
      auto [pn, slot] = producerOf(use.get());
      usesOfValue[use.get()].push_back(edgeUses.size());
      edgeUses.push_back({&use, pn, slot, cn});
    }
  }
  // A value read by several ops gets a fan-out node: the layout it is
  // resharded to once, shared by every consumer that wants it (the rewrite
  // below emits one reshard per value and layout). Without it each consumer
  // would pay for the shared reshard again, and the solver would avoid
  // layouts that need one. Its candidates: every layout the producer may
  // give the value or a consumer may want.
  for (auto &[value, ids] : usesOfValue) {
    if (ids.size() < 2)
      continue;
    const EdgeUse &first = edgeUses[ids.front()];
    std::map<std::string, TensorLayout> distinct;
    for (const Candidate &c : nodes[first.pn].cands()) {
      unsigned id = pricing.intern(c.resultLayouts[first.slot]);
      distinct.emplace(pricing.key(id), pricing.layouts[id]);
    }
    for (unsigned id : ids) {
      const EdgeUse &u = edgeUses[id];
      for (const Candidate &c : nodes[u.cn].cands()) {
        const TensorLayout &l = c.operandLayouts[u.use->getOperandNumber()];
        unsigned lid = pricing.intern(l);
        distinct.emplace(pricing.key(lid), pricing.layouts[lid]);
      }
    }
    Node n;
    n.kind = Node::Fanout;
    n.value = value;
    n.index = first.slot;
    for (auto &[key, l] : distinct) {
      Candidate c;
      c.operandLayouts = {l};
      c.resultLayouts = {l};
      n.own.push_back(std::move(c));
    }
    hashes.push_back(
        fnv(hashes[first.pn], "fanout/" + std::to_string(first.slot)));
    fanoutOf[value] = nodes.size();
    nodes.push_back(std::move(n));
  }

  // The solver graph.
  SolverGraph graph;
  for (unsigned i = 0; i < nodes.size(); ++i) {
    Node &n = nodes[i];
    std::vector<double> costs;
    for (const Candidate &c : n.cands())
      costs.push_back(n.kind == Node::Op ? model.getComputeTimeUs(c.flops)
                                         : 0.0);
    char key[40];
    std::snprintf(key, sizeof(key), "%016llx",
                  static_cast<unsigned long long>(hashes[i]));
    n.solverId = graph.addNode(key, std::move(costs));
  }
  // Interned layout ids of each node's result slots / operands, per
  // candidate, built once per (node, slot).
  std::vector<std::vector<std::vector<unsigned>>> resultIds(nodes.size()),
      operandIds(nodes.size());
  // Nodes that share a candidate list share these ids too (keyed by the
  // list; std::map keeps references stable).
  std::map<std::tuple<const void *, unsigned, bool>, std::vector<unsigned>>
      sharedIds;
  auto idsOf = [&](unsigned node, unsigned slot,
                   bool result) -> const std::vector<unsigned> & {
    std::vector<unsigned> *slotIds;
    if (const auto &list = nodes[node].shared) {
      slotIds = &sharedIds[{list.get(), slot, result}];
    } else {
      auto &perSlot = (result ? resultIds : operandIds)[node];
      if (perSlot.size() <= slot)
        perSlot.resize(slot + 1);
      slotIds = &perSlot[slot];
    }
    std::vector<unsigned> &ids = *slotIds;
    if (ids.empty()) {
      ids.reserve(nodes[node].cands().size());
      for (const Candidate &c : nodes[node].cands())
        ids.push_back(pricing.intern(result ? c.resultLayouts[slot]
                                            : c.operandLayouts[slot]));
    }
    return ids;
  };
  // An edge from result `slot` of node `pn` to operand `operand` of node
  // `cn` (a fan-out node has one of each).
  auto addUseEdge = [&](unsigned pn, unsigned slot, unsigned cn,
                        unsigned operand, Type type, bool resolveOnly) {
    std::vector<int64_t> shape = getShape(type);
    const Pricing::Table &t =
        pricing.table(shape, getElemBytes(type), idsOf(pn, slot, true),
                      idsOf(cn, operand, false), resolveOnly);
    graph.addEdge(nodes[pn].solverId, nodes[cn].solverId, t.srcClass,
                  t.dstClass, t.numSrc, t.numDst, t.cost);
  };
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
    auto [pn, slot] = producerOf(use.get());
    addUseEdge(pn, slot, firstResult + use.getOperandNumber(), 0,
               use.get().getType(), true);
  }

  // i.e. restricts that value's producer; higher priority wins.
  for (Operation &op : body.without_terminator()) {
    auto annotate = dyn_cast<AnnotateOp>(op);
    if (!annotate)
      continue;
    auto [pn, slot] = producerOf(annotate.getInput());
    TensorLayout want = annotate.getLayout().toTensorLayout();
    std::vector<unsigned> allowed;
    for (auto [ci, c] : llvm::enumerate(nodes[pn].cands()))
      if (c.resultLayouts[slot] == want)
        allowed.push_back(ci);
    if (!allowed.empty())
      graph.restrict(nodes[pn].solverId, allowed, annotate.getPriority());
  }

  SolverOptions sopts;
  sopts.kind = *symbolizeSolverKind(solver);
  auto start = std::chrono::steady_clock::now();
  SolverResult result = solve(graph, sopts);
  report.solverTimeMs += std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  report.solverNodes += graph.getNumNodes();
  if (!result.error.empty())
    return func.emitError("dist-propagate: solver failed: ") << result.error;
  report.solverCostUs += result.cost;
  report.optimal = report.optimal && result.optimal;

  for (Node &n : nodes) {
    const Candidate &c = n.cands()[result.assignment[n.solverId]];
    n.chosenOperands = &c.operandLayouts;
    n.chosenResults = &c.resultLayouts;
    if (n.kind == Node::Op)
      report.computeTimeUs += model.getComputeTimeUs(c.flops);
  }
  // Layout-free producers take the layout their only consumer wants; walk
  // backwards so a zero fill passes it on to its tensor.empty.
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (!opNode.count(&op))
      continue;
    Node &cn = nodes[opNode[&op]];
    for (OpOperand &use : op.getOpOperands()) {
      Operation *def = use.get().getDefiningOp();
      if (!def || !opNode.count(def) || !isLayoutFree(def) ||
          !use.get().hasOneUse())
        continue;
      Node &pn = nodes[opNode[def]];
      TensorLayout want = cn.operandLayouts()[use.getOperandNumber()];
      unsigned slot = cast<OpResult>(use.get()).getResultNumber();
      pn.writable(/*results=*/true)[slot] = want;
      // A fill's init (its last operand) follows its result.
      if (isa<linalg::FillOp>(def))
        pn.writable(/*results=*/false).back() = want;
    }
  }

  // Write back.
  auto layoutAttr = [&](const TensorLayout &l) {
    return LayoutAttr::get(meshAttr, l);
  };
  auto layoutOf = [&](Value v) -> TensorLayout {
    auto [pn, slot] = producerOf(v);
    return nodes[pn].resultLayouts()[slot];
  };
  for (BlockArgument arg : body.getArguments())
    if (isa<RankedTensorType>(arg.getType()))
      func.setArgAttr(arg.getArgNumber(), "dist.layout",
                      layoutAttr(nodes[arg.getArgNumber()].resultLayouts()[0]));
  SmallVector<LayoutAttr> returnLayouts;
  for (OpOperand &use : returnOp->getOpOperands()) {
    const Node &rn = nodes[firstResult + use.getOperandNumber()];
    returnLayouts.push_back(layoutAttr(rn.operandLayouts()[0]));
    if (isa<RankedTensorType>(use.get().getType()))
      func.setResultAttr(use.getOperandNumber(), "dist.layout",
                         returnLayouts.back());
  }

  // Reshards: one per (value, target layout), right after the value's
  // definition so every consumer that needs that layout shares it.
  std::map<std::pair<void *, unsigned>, Value> reshards;
  auto explainText = [&](Operation *consumer, unsigned operand,
                         const Node &producerNode, const Node &consumerNode) {
    std::string why;
    if (consumerNode.kind == Node::Result)
      why = "a function result is never a pending partial value";
    else if (consumerNode.userFixed)
      why = "the consumer's user constraint requires it";
    else if (producerNode.userFixed ||
             (producerNode.kind == Node::Arg &&
              llvm::any_of(consumer->getOperand(operand).getUsers(),
                           [](Operation *u) { return isa<AnnotateOp>(u); })))
      why = "the producer's layout is pinned by a user constraint";
    else
      why = "the consumer's strategy is cheaper overall than one that fits";
    return why;
  };
  // The reshard of `source` (layout `have`) to `want`, shared per (source,
  // layout), right after the source's definition.
  auto getReshard = [&](Value source, const TensorLayout &have,
                        const TensorLayout &want, OpOperand &use,
                        const Node &producerNode,
                        const Node &consumerNode) -> FailureOr<Value> {
    auto key =
        std::make_pair(source.getAsOpaquePointer(), pricing.intern(want));
    auto it = reshards.find(key);
    if (it != reshards.end())
      return it->second;
    OpBuilder b(ctx);
    if (isa<BlockArgument>(source))
      b.setInsertionPointToStart(&body);
    else
      b.setInsertionPointAfter(source.getDefiningOp());
    std::string error;
    auto plan = planner.plan(getShape(source.getType()),
                             getElemBytes(source.getType()), have, want, error);
    if (!plan)
      return use.getOwner()->emitError("dist-propagate: no reshard from ")
             << have.str(dmesh) << " to " << want.str(dmesh) << ": " << error;
    auto reshard = ReshardOp::create(b, use.getOwner()->getLoc(), source,
                                     layoutAttr(have), layoutAttr(want));
    report.addReshard(*plan, dmesh);
    if (explain) {
      std::string steps;
      for (const CollectiveStep &s : plan->steps)
        steps += (steps.empty() ? "" : ", ") + s.str(dmesh);
      reshard.emitRemark()
          << "reshard " << have.str(dmesh) << " -> " << want.str(dmesh)
          << " for operand #" << use.getOperandNumber() << " of '"
          << use.getOwner()->getName() << "': "
          << explainText(use.getOwner(), use.getOperandNumber(), producerNode,
                         consumerNode)
          << "; " << (steps.empty() ? "local" : steps) << ", "
          << llvm::formatv("{0:f3}", plan->timeUs).str() << " us, "
          << llvm::formatv("{0:f0}", plan->bytesPerDevice).str()
          << " bytes per device";
    }
    return reshards.emplace(key, reshard.getResult()).first->second;
  };
  auto planTime = [&](Value v, const TensorLayout &from,
                      const TensorLayout &to) {
    std::string error;
    auto plan = planner.plan(getShape(v.getType()), getElemBytes(v.getType()),
                             from, to, error);
    return plan ? plan->timeUs : kInfeasibleCost;
  };
  auto fixUse = [&](OpOperand &use, const TensorLayout &want,
                    const Node &consumerNode) -> LogicalResult {
    Value v = use.get();
    if (!isa<RankedTensorType>(v.getType()))
      return success();
    if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() != &body)
      return success();
    if (!isa<BlockArgument>(v) && !opNode.count(v.getDefiningOp()))
      return success();
    TensorLayout have = layoutOf(v);
    if (have == want)
      return success();
    const Node &producerNode = nodes[producerOf(v).first];
    // With a fan-out node, the value's shared layout: take it, or reshard
    // from whichever of the value and the shared reshard is cheaper (the
    // solver priced the latter, so the result is never worse).
    Value source = v;
    TensorLayout from = have;
    if (auto fit = fanoutOf.find(v); fit != fanoutOf.end()) {
      const TensorLayout &shared = nodes[fit->second].resultLayouts()[0];
      bool sharedExists = reshards.count(
          std::make_pair(v.getAsOpaquePointer(), pricing.intern(shared)));
      if (shared != have &&
          (shared == want ||
           planTime(v, shared, want) +
                   (sharedExists ? 0.0 : planTime(v, have, shared)) <
               planTime(v, have, want))) {
        FailureOr<Value> r =
            getReshard(v, have, shared, use, producerNode, consumerNode);
        if (failed(r))
          return failure();
        source = *r;
        from = shared;
      }
    }
    if (from != want) {
      FailureOr<Value> r =
          getReshard(source, from, want, use, producerNode, consumerNode);
      if (failed(r))
        return failure();
      source = *r;
    }
    use.set(source);
    return success();
  };
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    if (!opNode.count(&op))
      continue; // inserted above, or scalar
    Node &n = nodes[opNode[&op]];
    for (OpOperand &use : op.getOpOperands())
      if (use.getOperandNumber() < n.operandLayouts().size())
        if (failed(fixUse(use, n.operandLayouts()[use.getOperandNumber()], n)))
          return failure();
    if (report.wantStrategies)
      report.addStrategy(&op, n.operandLayouts(), n.resultLayouts(), dmesh);
    if (isa<AnnotateOp, ReshardOp>(op))
      continue; // self-describing
    SmallVector<LayoutAttr> ins, outs;
    for (auto [i, l] : llvm::enumerate(n.operandLayouts()))
      ins.push_back(layoutAttr(l));
    for (const TensorLayout &l : n.resultLayouts())
      outs.push_back(layoutAttr(l));
    op.setAttr(DistDialect::kStrategyAttrName,
               StrategyAttr::get(ctx, meshAttr, ins, outs));
  }
  for (OpOperand &use : returnOp->getOpOperands()) {
    const Node &rn = nodes[firstResult + use.getOperandNumber()];
    if (failed(fixUse(use, rn.operandLayouts()[0], rn)))
      return failure();
  }
  returnOp->setAttr(DistDialect::kStrategyAttrName,
                    StrategyAttr::get(ctx, meshAttr, returnLayouts, {}));

  // Memory: every value once, at its producer's layout.
  for (BlockArgument arg : body.getArguments())
    if (isa<RankedTensorType>(arg.getType()))
      report.memoryBytesPerDevice += model.getTensorBytesPerDevice(
          nodes[arg.getArgNumber()].resultLayouts()[0], getShape(arg.getType()),
          getElemBytes(arg.getType()));
  for (Operation &op : body.without_terminator()) {
    if (!opNode.count(&op))
      continue;
    const Node &n = nodes[opNode[&op]];
    for (OpResult r : op.getResults())
      if (isa<RankedTensorType>(r.getType()) &&
          r.getResultNumber() < n.resultLayouts().size())
        report.memoryBytesPerDevice += model.getTensorBytesPerDevice(
            n.resultLayouts()[r.getResultNumber()], getShape(r.getType()),
            getElemBytes(r.getType()));
  }
  report.numOps += opNode.size();
  return success();
}

void DistPropagatePass::runOnOperation() {
  ModuleOp module = getOperation();
  if (!symbolizeSolverKind(solver)) {
    module.emitError() << "dist-propagate: unknown solver '" << solver
                       << "' (expected 'dp', 'local' or 'exact')";
    return signalPassFailure();
  }
  FailureOr<MeshAttr> meshAttr = resolveMesh(module);
  if (failed(meshAttr) || failed(convertUpstreamAnnotations(module, *meshAttr)))
    return signalPassFailure();
  ClusterSpec clusterSpec;
  if (!cluster.empty()) {
    std::string error;
    if (!ClusterSpec::fromFile(cluster, clusterSpec, error)) {
      module.emitError() << "dist-propagate: " << error;
      return signalPassFailure();
    }
  }
  CostModel model(meshAttr->toDeviceMesh(), clusterSpec);
  PlannerOptions popts;
  popts.enableAllToAll = enableAllToAll;
  ReshardPlanner planner(model, popts);
  PropagationReport report;
  report.solver = solver;
  // Only the JSON report lists per-op strategies; building them (layout
  // strings, printed locations) is a large share of the pass otherwise.
  report.wantStrategies = !this->report.empty() && this->report != "-";
  for (auto func : llvm::to_vector(module.getOps<func::FuncOp>()))
    if (failed(propagateFunction(func, *meshAttr, model, planner, report)))
      return signalPassFailure();
  module->setAttr(DistDialect::kMeshAttrName, *meshAttr);
  if (!this->report.empty()) {
    std::string error;
    if (!report.write(this->report, error)) {
      module.emitError() << "dist-propagate: " << error;
      return signalPassFailure();
    }
  }
}
