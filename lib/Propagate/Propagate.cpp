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
#include "autoshard/Propagate/StableHash.h"
#include "autoshard/Support/KeyInfo.h"

#include "Report.h"
#include "TiedResults.h"
#include "TrainingMemory.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <numeric>
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

std::vector<int64_t> getShape(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return std::vector<int64_t>(tensor.getShape().begin(),
                                tensor.getShape().end());
  return {};
}

/// fnv(h, std::to_string(x)) without building the string.
uint64_t fnvDecimal(uint64_t h, uint64_t x) {
  char buf[24];
  char *end = buf + sizeof(buf), *p = end;
  do {
    *--p = static_cast<char>('0' + x % 10);
    x /= 10;
  } while (x);
  return fnv(h, StringRef(p, end - p));
}

/// TensorLayout::operator== without its copies (it runs once per use): the
/// partial axes as a set, the kind only when partial, uneven lists that are
/// all empty as none.
bool sameLayout(const TensorLayout &a, const TensorLayout &b) {
  if (&a == &b)
    return true;
  if (a.dimAxes != b.dimAxes || a.partialAxes.size() != b.partialAxes.size())
    return false;
  if (!a.partialAxes.empty()) {
    if (a.partialKind != b.partialKind)
      return false;
    if (a.partialAxes != b.partialAxes) {
      SmallVector<int64_t, 4> pa(a.partialAxes.begin(), a.partialAxes.end());
      SmallVector<int64_t, 4> pb(b.partialAxes.begin(), b.partialAxes.end());
      llvm::sort(pa);
      llvm::sort(pb);
      if (pa != pb)
        return false;
    }
  }
  auto anyUneven = [](const TensorLayout &l) {
    return llvm::any_of(l.unevenSizes,
                        [](const auto &sizes) { return !sizes.empty(); });
  };
  bool unevenA = anyUneven(a), unevenB = anyUneven(b);
  if (!unevenA && !unevenB)
    return true;
  return unevenA == unevenB && a.unevenSizes == b.unevenSizes;
}

using CandidateList = std::shared_ptr<const std::vector<Candidate>>;

CandidateList makeList(std::vector<Candidate> cands) {
  return std::make_shared<const std::vector<Candidate>>(std::move(cands));
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
  /// Candidates, shared by every node with the same rule (enumerated once)
  /// or, for fan-outs, the same layouts; user constraints and function
  /// results have their own.
  CandidateList list;
  const std::vector<Candidate> &cands() const { return *list; }
  /// Whether a user constraint (strategy or annotation) fixed this node.
  bool userFixed = false;
  /// Whether the op is layout-free (see isLayoutFree).
  bool layoutFree = false;
  unsigned solverId = 0;
  /// Where the sources of the op's operands start in the operand table.
  unsigned firstOperand = 0;
  /// The chosen candidate, after the solution. Its layouts are the node's,
  /// except where the absorption of layout-free producers overrode them:
  /// then the override lists (pointers into candidate lists, which outlive
  /// the nodes) hold every slot.
  const Candidate *chosen = nullptr;
  SmallVector<const TensorLayout *, 0> operandOverride, resultOverride;

  const TensorLayout &operandLayout(unsigned i) const {
    return operandOverride.empty() ? chosen->operandLayouts[i]
                                   : *operandOverride[i];
  }
  const TensorLayout &resultLayout(unsigned i) const {
    return resultOverride.empty() ? chosen->resultLayouts[i]
                                  : *resultOverride[i];
  }
  unsigned getNumOperandLayouts() const {
    return chosen->operandLayouts.size();
  }
  unsigned getNumResultLayouts() const { return chosen->resultLayouts.size(); }
  /// Makes slot `i` of the operands (or results) `l`.
  void setLayout(bool results, unsigned i, const TensorLayout *l) {
    auto &slots = results ? resultOverride : operandOverride;
    if (slots.empty()) {
      for (const TensorLayout &own :
           results ? chosen->resultLayouts : chosen->operandLayouts)
        slots.push_back(&own);
    }
    slots[i] = l;
  }
};

/// Where an operand of a graph op comes from, found once: the node and
/// result slot that produce it, when it is a graph value.
struct OperandSource {
  unsigned node = 0, slot = 0;
  bool graph = false;
  bool tensor = false;
};

/// Top-level ops that differ only in the values they read (same name,
/// attributes, properties, operand and result types, and regions up to the
/// values they read from outside) form one class: the layers of a model
/// repeat each other's ops. A class shares one sharding rule and candidate
/// list (a rule reads an op's structure, never the values of its operands)
/// and the op's part of the canonical hash.
struct OpClass {
  Operation *rep = nullptr;
  bool hasPrefix = false;
  uint64_t prefix = 0;
  bool hasRule = false;
  ShardingRule rule;
  std::string noRuleReason;
  CandidateList cands;
  StrategyAttr strategy;
};

/// A cheap hash of part of what StructureMatcher compares: the bucket of
/// an op's class.
uint64_t hashStructure(Operation *op, uint64_t h, bool top) {
  auto mix = [&](uint64_t x) {
    h = (h ^ x) * 1099511628211ull;
    h ^= h >> 29;
  };
  mix(reinterpret_cast<uintptr_t>(op->getName().getAsOpaquePointer()));
  mix(reinterpret_cast<uintptr_t>(
      op->getRawDictionaryAttrs().getAsOpaquePointer()));
  mix((uint64_t(op->getNumOperands()) << 32) ^
      (uint64_t(op->getNumResults()) << 8) ^ op->getNumRegions());
  if (top) {
    mix(static_cast<uint64_t>(op->hashProperties()));
    for (Type t : op->getOperandTypes())
      mix(reinterpret_cast<uintptr_t>(t.getAsOpaquePointer()));
    for (Type t : op->getResultTypes())
      mix(reinterpret_cast<uintptr_t>(t.getAsOpaquePointer()));
  }
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &inner : block)
        h = hashStructure(&inner, h, /*top=*/false);
  return h;
}

/// Whether two ops are one class (see OpClass): compares them and their
/// regions op by op. Values defined inside must correspond; values from
/// outside may differ (as the operands may).
struct StructureMatcher {
  Operation *a, *b;
  /// Ops and blocks inside `a`, with their counterparts in `b`.
  SmallVector<std::pair<Operation *, Operation *>, 16> ops;
  SmallVector<std::pair<Block *, Block *>, 4> blocks;
  /// Set when the ops have something this matcher does not compare
  /// (successors, a use before its definition): they are then no class's
  /// members but their own.
  bool incomparable = false;

  StructureMatcher(Operation *a, Operation *b) : a(a), b(b) {}

  bool sameValue(Value x, Value y) {
    bool insideX = a->isAncestor(x.getParentRegion()->getParentOp());
    bool insideY = b->isAncestor(y.getParentRegion()->getParentOp());
    if (insideX != insideY)
      return false;
    if (!insideX)
      return true;
    if (auto argX = dyn_cast<BlockArgument>(x)) {
      auto argY = dyn_cast<BlockArgument>(y);
      if (!argY || argX.getArgNumber() != argY.getArgNumber())
        return false;
      for (auto [blockX, blockY] : blocks)
        if (blockX == argX.getOwner())
          return blockY == argY.getOwner();
    } else {
      auto resultX = cast<OpResult>(x);
      auto resultY = dyn_cast<OpResult>(y);
      if (!resultY || resultX.getResultNumber() != resultY.getResultNumber())
        return false;
      for (auto [opX, opY] : llvm::reverse(ops))
        if (opX == resultX.getOwner())
          return opY == resultY.getOwner();
    }
    incomparable = true;
    return false;
  }

  bool sameOp(Operation *x, Operation *y, bool top) {
    if (x->getNumSuccessors() || y->getNumSuccessors()) {
      incomparable = true;
      return false;
    }
    if (x->getName() != y->getName() ||
        x->getRawDictionaryAttrs() != y->getRawDictionaryAttrs() ||
        x->getNumOperands() != y->getNumOperands() ||
        x->getNumResults() != y->getNumResults() ||
        x->getNumRegions() != y->getNumRegions() ||
        !x->getName().compareOpProperties(x->getPropertiesStorage(),
                                          y->getPropertiesStorage()) ||
        !llvm::equal(x->getResultTypes(), y->getResultTypes()) ||
        !llvm::equal(x->getOperandTypes(), y->getOperandTypes()))
      return false;
    if (!top)
      for (auto [vx, vy] : llvm::zip_equal(x->getOperands(), y->getOperands()))
        if (!sameValue(vx, vy))
          return false;
    ops.push_back({x, y});
    for (auto [regionX, regionY] :
         llvm::zip_equal(x->getRegions(), y->getRegions())) {
      auto bx = regionX.begin(), by = regionY.begin();
      for (; bx != regionX.end() && by != regionY.end(); ++bx, ++by) {
        if (!llvm::equal(bx->getArgumentTypes(), by->getArgumentTypes()))
          return false;
        blocks.push_back({&*bx, &*by});
      }
      if (bx != regionX.end() || by != regionY.end())
        return false;
      for (auto [blockX, blockY] : llvm::zip_equal(regionX, regionY)) {
        auto ox = blockX.begin(), oy = blockY.begin();
        for (; ox != blockX.end() && oy != blockY.end(); ++ox, ++oy)
          if (!sameOp(&*ox, &*oy, /*top=*/false))
            return false;
        if (ox != blockX.end() || oy != blockY.end())
          return false;
      }
    }
    return true;
  }
};

/// Layouts, shapes and edge cost tables interned to small ids so the graph
/// is built from integers: layouts are told apart exactly as layoutKey
/// tells them apart, by a hash of their fields and a field-by-field
/// comparison (no strings in the hot path), each
/// (shape, elemBytes, from, to) is priced once, and an edge whose endpoint
/// layouts repeat an earlier edge's (the layers of a model) shares its table.
///
/// Tables are priced in one go once the graph is built (priceAll): the
/// distinct pairs are grouped by shape and element size, and each group is
/// priced by a planner of its own, dropped when the group is done. costUs
/// answers do not depend on what a planner priced before, so this gives the
/// tables one planner would; but each planner's searches stay small and the
/// next group reuses their memory (on GPT L = 1 a third less freshly
/// touched memory, which costs page faults, than one planner for all).
struct Pricing {
  const DeviceMesh &mesh;
  const CostModel &model;
  const PlannerOptions &plannerOptions;
  std::vector<TensorLayout> layouts;
  /// layoutKey of an id, built on first request.
  std::vector<std::string> keys;
  /// The first id of each layout hash (see hashFields), and the next id of
  /// the same hash after each id (~0u: none).
  llvm::DenseMap<uint64_t, unsigned, PackedKeyInfo> firstOfHash;
  std::vector<unsigned> nextOfHash;
  std::map<std::vector<int64_t>, unsigned> shapeIds;
  /// Pairs to price, each once: a row per (shape, element size, source),
  /// by target, holding the pair's index in `pairs` (so that the lookups of
  /// a table row stay in one small map).
  llvm::DenseMap<std::pair<uint64_t, uint64_t>, unsigned, PackedPairKeyInfo>
      rowIds;
  std::deque<llvm::DenseMap<unsigned, unsigned>> rows;
  struct TypeInfo;
  struct Pair {
    const TypeInfo *type;
    unsigned from, to;
    double cost = 0.0;
  };
  std::vector<Pair> pairs;
  /// Tables built but not priced yet. Until priceAll() each entry holds
  /// where its cost comes from: a pair index (exact in a double), or kFree /
  /// kNever — no second array of the tables' size, whose pages would cost
  /// as much to fault in as the tables'.
  static constexpr double kFree = -1.0, kNever = -2.0;
  std::vector<std::shared_ptr<SolverGraph::EdgeTable>> unpriced;
  /// dropPartial(layouts[id]), interned.
  std::vector<int> resolved;
  /// Lists of layout ids (one slot of a candidate list), interned so that
  /// equal lists have one id.
  std::deque<std::vector<unsigned>> lists;
  llvm::DenseMap<uint64_t, llvm::SmallVector<unsigned, 1>> listIds;

  Pricing(const DeviceMesh &mesh, const CostModel &model,
          const PlannerOptions &plannerOptions)
      : mesh(mesh), model(model), plannerOptions(plannerOptions) {}

  template <typename Range> static uint64_t hashInts(const Range &v) {
    uint64_t h = 1469598103934665603ull;
    for (auto x : v) {
      h ^= static_cast<uint64_t>(x);
      h *= 1099511628211ull;
      h ^= h >> 29;
    }
    return h;
  }
  unsigned intern(const TensorLayout &l) {
    // Told apart as layoutKey tells them apart: the kind only when partial.
    auto [it, inserted] = firstOfHash.try_emplace(
        hashFields(l, /*kindOnlyWhenPartial=*/true), ~0u);
    unsigned *link = &it->second;
    for (; *link != ~0u; link = &nextOfHash[*link])
      if (sameFields(layouts[*link], l, /*kindOnlyWhenPartial=*/true))
        return *link;
    unsigned id = layouts.size();
    *link = id;
    nextOfHash.push_back(~0u);
    layouts.push_back(l);
    keys.emplace_back();
    resolved.push_back(-1);
    return id;
  }
  unsigned internList(std::vector<unsigned> ids) {
    auto &bucket = listIds[hashInts(ids)];
    for (unsigned id : bucket)
      if (lists[id] == ids)
        return id;
    bucket.push_back(lists.size());
    lists.push_back(std::move(ids));
    return lists.size() - 1;
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
  /// The pairs of source `from`.
  llvm::DenseMap<unsigned, unsigned> &row(const TypeInfo &type, unsigned from);
  /// Fills every table built so far (see the struct's comment).
  /// Returns the number of threads it used.
  unsigned priceAll(MLIRContext *ctx);

  /// A value type's shape, element size and shape id.
  struct TypeInfo {
    std::vector<int64_t> shape;
    int64_t elemBytes = 0;
    unsigned shapeId = 0;
  };
  llvm::DenseMap<Type, std::unique_ptr<TypeInfo>> typeInfos;
  const TypeInfo &typeInfo(Type type) {
    auto &info = typeInfos[type];
    if (!info) {
      info = std::make_unique<TypeInfo>();
      info->shape = getShape(type);
      info->elemBytes = getElemBytes(type);
      info->shapeId = shapeId(info->shape);
    }
    return *info;
  }

  using Table = std::shared_ptr<const SolverGraph::EdgeTable>;
  /// By (shape id, elemBytes, resolveOnly) and the two id lists.
  llvm::DenseMap<std::pair<uint64_t, uint64_t>, Table, PackedPairKeyInfo>
      tables;

  /// The table of an edge from layout list `srcList` to `dstList`.
  const Table &table(const TypeInfo &type, unsigned srcList, unsigned dstList,
                     bool resolveOnly) {
    auto [it, inserted] = tables.try_emplace(
        {(uint64_t(type.shapeId) << 32) | (uint64_t(type.elemBytes) << 1) |
             uint64_t(resolveOnly),
         (uint64_t(srcList) << 32) | uint64_t(dstList)},
        nullptr);
    if (!inserted)
      return it->second;
    auto t = std::make_shared<SolverGraph::EdgeTable>();
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
    std::vector<unsigned> srcReps = classes(lists[srcList], t->srcClass);
    std::vector<unsigned> dstReps = classes(lists[dstList], t->dstClass);
    t->numSrcClasses = srcReps.size();
    t->numDstClasses = dstReps.size();
    t->cost.resize(srcReps.size() * dstReps.size());
    for (unsigned i = 0; i < srcReps.size(); ++i) {
      unsigned from = srcReps[i];
      llvm::DenseMap<unsigned, unsigned> &known = row(type, from);
      for (unsigned j = 0; j < dstReps.size(); ++j) {
        unsigned to = dstReps[j];
        double &entry = t->cost[i * dstReps.size() + j];
        if (resolveOnly && dropPartialId(from) != to) {
          entry = kNever;
        } else if (from == to) {
          entry = kFree;
        } else {
          auto [pair, added] = known.try_emplace(to, pairs.size());
          if (added)
            pairs.push_back({&type, from, to});
          entry = pair->second;
        }
      }
    }
    unpriced.push_back(t);
    // dropPartialId does not touch `tables`: `it` is valid.
    it->second = std::move(t);
    return it->second;
  }
};

llvm::DenseMap<unsigned, unsigned> &Pricing::row(const TypeInfo &type,
                                                 unsigned from) {
  auto [it, inserted] = rowIds.try_emplace(
      {(uint64_t(type.shapeId) << 32) | uint64_t(type.elemBytes), from},
      rows.size());
  if (inserted)
    rows.emplace_back();
  return rows[it->second];
}

unsigned Pricing::priceAll(MLIRContext *ctx) {
  // Groups of pairs of one shape and element size, each in first-seen order
  // (a planner's searches are per shape: a group shares them).
  llvm::MapVector<uint64_t, std::vector<unsigned>> groups;
  for (unsigned p = 0, e = pairs.size(); p < e; ++p) {
    const TypeInfo &type = *pairs[p].type;
    groups[(uint64_t(type.shapeId) << 32) | uint64_t(type.elemBytes)].push_back(
        p);
  }
  // Tasks for the context's threads: a group, or a run of its sources when
  // it is large (one group can hold half of all the searches). A task has
  // its own planner: costUs answers do not depend on what a planner priced
  // before, so the costs are those of one planner for all, in any order and
  // on any number of threads. A source's pairs stay in one task (they share
  // its search).
  std::vector<ArrayRef<unsigned>> tasks;
  // A thread pays for starting and for its own heap's first pages (a few
  // hundred microseconds here); below a few thousand searches' worth of
  // pairs the work is done before that pays off.
  constexpr size_t kPairsPerThread = 8192;
  unsigned numThreads = 1;
  if (ctx->isMultithreadingEnabled())
    numThreads = std::clamp<unsigned>(pairs.size() / kPairsPerThread, 1,
                                      ctx->getThreadPool().getMaxConcurrency());
  size_t share = pairs.size() / (4 * numThreads) + 1;
  std::vector<unsigned> rankOf(layouts.size(), ~0u), count, sorted;
  for (auto &[key, group] : groups) {
    if (numThreads == 1 || group.size() <= share) {
      tasks.push_back(group);
      continue;
    }
    // Sources contiguous, in first-seen order (a counting sort).
    count.clear();
    for (unsigned p : group) {
      unsigned &rank = rankOf[pairs[p].from];
      if (rank == ~0u) {
        rank = count.size();
        count.push_back(0);
      }
      ++count[rank];
    }
    std::exclusive_scan(count.begin(), count.end(), count.begin(), 0u);
    sorted.resize(group.size());
    for (unsigned p : group)
      sorted[count[rankOf[pairs[p].from]]++] = p;
    for (unsigned p : group)
      rankOf[pairs[p].from] = ~0u;
    group.swap(sorted);
    ArrayRef<unsigned> rest(group);
    while (!rest.empty()) {
      size_t n = std::min(share, rest.size());
      while (n < rest.size() && pairs[rest[n]].from == pairs[rest[n - 1]].from)
        ++n;
      tasks.push_back(rest.take_front(n));
      rest = rest.drop_front(n);
    }
  }
  auto price = [&](ArrayRef<unsigned> task) {
    ReshardPlanner planner(model, plannerOptions);
    const TypeInfo &type = *pairs[task.front()].type;
    std::vector<uint32_t> ids(layouts.size(), ~0u);
    auto idOf = [&](unsigned layout) {
      if (ids[layout] == ~0u)
        ids[layout] = planner.layoutId(type.shape, layouts[layout]);
      return ids[layout];
    };
    std::string error;
    for (unsigned p : task) {
      // Only the time is needed here: costUs prices every target of a
      // source layout from one search (the same double plan()->timeUs
      // gives).
      std::optional<double> time =
          planner.costUs(type.shape, type.elemBytes, idOf(pairs[p].from),
                         idOf(pairs[p].to), error);
      pairs[p].cost = time ? *time : kInfeasibleCost;
    }
  };
  if (numThreads == 1) {
    llvm::for_each(tasks, price);
  } else {
    // Largest first, so that the last tasks to start are short.
    llvm::stable_sort(tasks, [](ArrayRef<unsigned> a, ArrayRef<unsigned> b) {
      return a.size() > b.size();
    });
    parallelForEach(ctx, tasks, price);
  }
  for (const auto &table : unpriced)
    for (double &cost : table->cost)
      cost = cost == kFree    ? 0.0
             : cost == kNever ? kInfeasibleCost
                              : pairs[static_cast<size_t>(cost)].cost;
  unpriced.clear();
  return numThreads;
}

struct DistPropagatePass
    : public autoshard::impl::DistPropagateBase<DistPropagatePass> {
  using DistPropagateBase::DistPropagateBase;
  void runOnOperation() override;

private:
  /// What the pass looks for before it builds graphs, found in one walk of
  /// the module (in the walk's post-order).
  struct ModuleScan {
    /// The mesh of the first user constraint (annotation, reshard,
    /// strategy).
    MeshAttr constraintMesh;
    shard::GridOp firstGrid;
    SmallVector<shard::ShardOp> shards;
    SmallVector<shard::ShardingOp> shardings;
  };
  static ModuleScan scanModule(ModuleOp module);
  FailureOr<MeshAttr> resolveMesh(ModuleOp module, const ModuleScan &scan);
  LogicalResult convertUpstreamAnnotations(MeshAttr mesh,
                                           const ModuleScan &scan);
  LogicalResult propagateFunction(func::FuncOp func, MeshAttr meshAttr,
                                  const CostModel &model,
                                  ReshardPlanner &planner,
                                  PropagationReport &report);
};

} // namespace

//===----------------------------------------------------------------------===//
// Mesh and upstream annotations
//===----------------------------------------------------------------------===//

DistPropagatePass::ModuleScan DistPropagatePass::scanModule(ModuleOp module) {
  ModuleScan scan;
  auto strategyName =
      StringAttr::get(module.getContext(), DistDialect::kStrategyAttrName);
  module.walk([&](Operation *op) {
    if (!scan.constraintMesh) {
      if (auto a = dyn_cast<AnnotateOp>(op))
        scan.constraintMesh = a.getLayout().getMesh();
      else if (auto r = dyn_cast<ReshardOp>(op))
        scan.constraintMesh = r.getSource().getMesh();
      // A strategy is a discardable attribute (no op declares one): the
      // inherent attributes of the many ops in linalg bodies go unread.
      else if (auto st = dyn_cast_or_null<StrategyAttr>(
                   op->getDiscardableAttr(strategyName)))
        scan.constraintMesh = st.getMesh();
    }
    if (auto grid = dyn_cast<shard::GridOp>(op)) {
      if (!scan.firstGrid)
        scan.firstGrid = grid;
    } else if (auto shard = dyn_cast<shard::ShardOp>(op)) {
      scan.shards.push_back(shard);
    } else if (auto sharding = dyn_cast<shard::ShardingOp>(op)) {
      scan.shardings.push_back(sharding);
    }
  });
  return scan;
}

FailureOr<MeshAttr> DistPropagatePass::resolveMesh(ModuleOp module,
                                                   const ModuleScan &scan) {
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
  if (scan.constraintMesh)
    return scan.constraintMesh;
  if (shard::GridOp grid = scan.firstGrid) {
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
LogicalResult
DistPropagatePass::convertUpstreamAnnotations(MeshAttr meshAttr,
                                              const ModuleScan &scan) {
  const DeviceMesh dmesh = meshAttr.toDeviceMesh();
  for (shard::ShardOp op : scan.shards) {
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
    std::string err = layout.validate(dmesh, &shape);
    if (!err.empty())
      return op.emitError("dist-propagate: ") << err;
    OpBuilder b(op);
    auto annotate = AnnotateOp::create(b, op.getLoc(), op.getSrc(),
                                       LayoutAttr::get(meshAttr, layout),
                                       b.getI64IntegerAttr(0));
    op.getResult().replaceAllUsesWith(annotate.getResult());
    op.erase();
  }
  for (shard::ShardingOp op : scan.shardings)
    if (op->use_empty())
      op.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Graph construction, solution, rewrite
//===----------------------------------------------------------------------===//

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
  size_t numOps = body.getOperations().size();
  nodes.reserve(body.getNumArguments() + numOps + returnOp->getNumOperands());
  llvm::DenseMap<Operation *, unsigned> opNode;
  opNode.reserve(numOps);
  llvm::DenseMap<Value, unsigned> fanoutOf;
  // Which node defines a value, and which of its result slots it is, when
  // it is a value of the graph: a function argument or a result of a graph
  // op (not one defined in a region, nor a scalar op's).
  auto sourceOf = [&](Value v) {
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
  };
  // The sources of every graph op's operands (Node::firstOperand), in op
  // order: the phases below read them instead of looking producers up.
  std::vector<OperandSource> operandSources;
  auto sourcesOf = [&](const Node &n) {
    return ArrayRef<OperandSource>(operandSources)
        .slice(n.firstOperand, n.op->getNumOperands());
  };
  Pricing pricing(dmesh, model, planner.getOptions());
  // Candidates by rule: rules that print alike and do the same work per
  // point share one list. The printed rule leaves the work out, and the
  // candidates carry their compute estimate: two generics that differ only
  // in their bodies would otherwise both get the first one's.
  std::unordered_map<std::string, CandidateList> candCache;
  auto candidatesOf = [&](const ShardingRule &rule) {
    std::string key = rule.str();
    key += " flops/point ";
    key += llvm::utohexstr(llvm::bit_cast<uint64_t>(rule.flopsPerPoint));
    auto [it, inserted] = candCache.try_emplace(std::move(key));
    if (inserted) {
      EnumerateOptions options;
      options.withFactorAxes = false;
      it->second = makeList(enumerateCandidates(rule, dmesh, options));
    }
    return it->second;
  };

  // Arguments.
  llvm::DenseMap<Type, CandidateList> argCands;
  for (BlockArgument arg : body.getArguments()) {
    Node n;
    n.kind = Node::Arg;
    n.index = arg.getArgNumber();
    CandidateList &list = argCands[arg.getType()];
    if (!list)
      list = candidatesOf(buildElementwiseRule({}, getShape(arg.getType())));
    n.list = list;
    nodes.push_back(std::move(n));
  }
  // Ops, by class (see OpClass). Ops on scalars only (index arithmetic,
  // scalar constants) are not distributed: they run on every device and get
  // no strategy.
  std::deque<OpClass> classes;
  llvm::DenseMap<uint64_t, SmallVector<unsigned, 1>> classBuckets;
  std::vector<unsigned> classOfNode(nodes.size(), 0);
  auto classOf = [&](Operation *op) -> OpClass & {
    auto &bucket =
        classBuckets[hashStructure(op, 1469598103934665603ull, /*top=*/true)];
    bool comparable = true;
    for (unsigned c : bucket) {
      StructureMatcher matcher(classes[c].rep, op);
      if (matcher.sameOp(classes[c].rep, op, /*top=*/true)) {
        classOfNode.push_back(c);
        return classes[c];
      }
      if (matcher.incomparable) {
        comparable = false;
        break;
      }
    }
    if (comparable)
      bucket.push_back(classes.size());
    classOfNode.push_back(classes.size());
    classes.emplace_back();
    classes.back().rep = op;
    return classes.back();
  };
  auto isTensorFree = [](Operation &op) {
    return llvm::none_of(op.getOperandTypes(),
                         llvm::IsaPred<RankedTensorType>) &&
           llvm::none_of(op.getResultTypes(), llvm::IsaPred<RankedTensorType>);
  };
  llvm::DenseMap<Attribute, CandidateList> annotateCands;
  for (Operation &op : body.without_terminator()) {
    if (isTensorFree(op))
      continue;
    Node n;
    n.kind = Node::Op;
    n.op = &op;
    OpClass &cls = classOf(&op);
    if (auto annotate = dyn_cast<AnnotateOp>(op)) {
      if (annotate.getLayout().getMesh() != meshAttr)
        return annotate.emitError("dist-propagate: annotation on mesh ")
               << annotate.getLayout().getMesh() << " but propagation runs on "
               << meshAttr;
      CandidateList &list = annotateCands[annotate.getLayout()];
      if (!list) {
        Candidate c;
        c.operandLayouts = {annotate.getLayout().toTensorLayout()};
        c.resultLayouts = c.operandLayouts;
        list = makeList({c});
      }
      n.list = list;
      n.userFixed = true;
    } else if (auto reshard = dyn_cast<ReshardOp>(op)) {
      if (reshard.getSource().getMesh() != meshAttr)
        return reshard.emitError("dist-propagate: reshard on mesh ")
               << reshard.getSource().getMesh() << " but propagation runs on "
               << meshAttr;
      Candidate c;
      c.operandLayouts = {reshard.getSource().toTensorLayout()};
      c.resultLayouts = {reshard.getTarget().toTensorLayout()};
      n.list = makeList({c});
      n.userFixed = true;
    } else {
      if (!cls.hasRule) {
        cls.rule = getRuleOrReplicated(&op, cls.noRuleReason);
        cls.cands = candidatesOf(cls.rule);
        cls.strategy =
            op.getAttrOfType<StrategyAttr>(DistDialect::kStrategyAttrName);
        cls.hasRule = true;
      }
      n.list = cls.cands;
      if (!cls.noRuleReason.empty())
        op.emitRemark() << "no sharding rule, running replicated: "
                        << cls.noRuleReason;
      if (StrategyAttr strategy = cls.strategy) {
        if (strategy.getMesh() != meshAttr)
          return op.emitError("dist-propagate: strategy on mesh ")
                 << strategy.getMesh() << " but propagation runs on "
                 << meshAttr;
        Candidate user;
        if (failed(matchUserStrategy(&op, strategy, cls.rule, dmesh, user)))
          return failure();
        // Keep only the user's candidate (it may be beyond the enumeration
        // bound).
        if (user.flops == 0.0)
          user.flops = estimateFlops(cls.rule, dmesh, user.factorAxes);
        n.list = makeList({user});
        n.userFixed = true;
      }
    }
    n.layoutFree = isLayoutFree(&op);
    // Producers come first (SSA dominance), so they have their nodes.
    n.firstOperand = operandSources.size();
    for (Value v : op.getOperands())
      operandSources.push_back(sourceOf(v));
    opNode[&op] = nodes.size();
    nodes.push_back(std::move(n));
  }
  unsigned firstOpNode = body.getNumArguments();
  // Function results: their layout is the producer's with pending partial
  // reductions resolved (a caller never receives a partial value).
  unsigned firstResult = nodes.size();
  for (OpOperand &use : returnOp->getOpOperands()) {
    Node n;
    n.kind = Node::Result;
    n.index = use.getOperandNumber();
    OperandSource src = sourceOf(use.get());
    unsigned pn = src.node, slot = src.slot;
    std::map<std::string, TensorLayout> distinct;
    for (const Candidate &c : nodes[pn].cands()) {
      const auto &ls = c.resultLayouts;
      if (slot < ls.size()) {
        unsigned id = pricing.dropPartialId(pricing.intern(ls[slot]));
        distinct.emplace(pricing.key(id), pricing.layouts[id]);
      }
    }
    if (distinct.empty())
      distinct.emplace(
          "", TensorLayout::replicated(getShape(use.get().getType()).size()));
    std::vector<Candidate> own;
    for (auto &[key, l] : distinct) {
      Candidate c;
      c.operandLayouts = {l};
      own.push_back(c);
    }
    n.list = makeList(std::move(own));
    nodes.push_back(std::move(n));
  }

  // Canonical keys: a structural hash of each op and its operands' keys, so
  // reordering independent ops does not change the solution.
  std::vector<uint64_t> hashes(nodes.size(), 0);
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
        OpClass &cls = classes[classOfNode[i]];
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

  // Uses that become edges: every tensor operand of a graph op read from a
  // graph value, except a layout-free producer (empty, zero fill) used only
  // there, which follows the operand with no reshard and no edge.
  struct EdgeUse {
    OpOperand *use;
    unsigned pn, slot, cn;
  };
  std::vector<EdgeUse> edgeUses;
  llvm::MapVector<Value, SmallVector<unsigned, 2>> usesOfValue;
  // Whether the operand with source `src` is the only use of a layout-free
  // producer's result.
  auto readsLayoutFree = [&](const OperandSource &src, Value v) {
    return src.graph && src.node >= firstOpNode && nodes[src.node].layoutFree &&
           v.hasOneUse();
  };
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
  // Interned layout ids of one slot of a node's candidates, as a list id
  // (see Pricing::lists); built once per candidate list and slot.
  llvm::DenseMap<std::pair<const void *, unsigned>, unsigned> slotLists;
  auto idsOf = [&](unsigned node, unsigned slot, bool result) -> unsigned {
    const std::vector<Candidate> &cands = nodes[node].cands();
    auto [it, inserted] = slotLists.try_emplace(
        {static_cast<const void *>(&cands), slot * 2 + result}, 0);
    if (!inserted)
      return it->second;
    std::vector<unsigned> ids;
    ids.reserve(cands.size());
    for (const Candidate &c : cands)
      ids.push_back(pricing.intern(result ? c.resultLayouts[slot]
                                          : c.operandLayouts[slot]));
    // Interning does not touch `slotLists`: `it` is valid.
    it->second = pricing.internList(std::move(ids));
    return it->second;
  };
  // A value read by several ops gets a fan-out node: the layout it is
  // resharded to once, shared by every consumer that wants it (the rewrite
  // below emits one reshard per value and layout). Without it each consumer
  // would pay for the shared reshard again, and the solver would avoid
  // layouts that need one. Its candidates: every layout the producer may
  // give the value or a consumer may want, in layoutKey order. Values whose
  // producer and consumers have the same lists (the layers of a model) share
  // one candidate list.
  std::map<SmallVector<unsigned, 8>, CandidateList> fanoutLists;
  std::vector<char> seen;
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
    CandidateList &list = fanoutLists[lists];
    if (!list) {
      std::map<StringRef, unsigned> distinct;
      seen.assign(pricing.layouts.size(), 0);
      for (unsigned l : lists)
        for (unsigned id : pricing.lists[l])
          if (!seen[id]) {
            seen[id] = 1;
            distinct.emplace(pricing.key(id), id);
          }
      std::vector<Candidate> cands;
      cands.reserve(distinct.size());
      for (auto &[key, id] : distinct) {
        Candidate c;
        c.operandLayouts = {pricing.layouts[id]};
        c.resultLayouts = c.operandLayouts;
        cands.push_back(std::move(c));
      }
      list = makeList(std::move(cands));
    }
    Node n;
    n.kind = Node::Fanout;
    n.value = value;
    n.index = first.slot;
    n.list = list;
    hashes.push_back(fnvDecimal(fnv(hashes[first.pn], "fanout/"), first.slot));
    fanoutOf[value] = nodes.size();
    nodes.push_back(std::move(n));
  }

  // The solver graph.
  SolverGraph graph;
  // Node costs by candidate list, shared by the graph's nodes (not copied).
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
      for (const Candidate &c : n.cands())
        costs->push_back(isOp ? model.getComputeTimeUs(c.flops) : 0.0);
      it->second = std::move(costs);
    }
    n.solverId = graph.addNode(nodeKey(hashes[i]), it->second);
    report.numCandidates += it->second->size();
  }
  // An edge from result `slot` of node `pn` to operand `operand` of node
  // `cn` (a fan-out node has one of each).
  auto addUseEdge = [&](unsigned pn, unsigned slot, unsigned cn,
                        unsigned operand, Type type, bool resolveOnly) {
    const Pricing::TypeInfo &info = pricing.typeInfo(type);
    unsigned src = idsOf(pn, slot, true);
    unsigned dst = idsOf(cn, operand, false);
    graph.addEdge(nodes[pn].solverId, nodes[cn].solverId,
                  pricing.table(info, src, dst, resolveOnly));
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
    OperandSource src = sourceOf(use.get());
    addUseEdge(src.node, src.slot, firstResult + use.getOperandNumber(), 0,
               use.get().getType(), true);
  }
  // A result tied to an argument (a training step's updated parameters and
  // state, TiedResults.h) is that argument in the next call: the reshard
  // from the one's layout to the other's is part of the program's cost.
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

  // An annotation (`dist.annotate %v`) asks that %v have its layout, i.e.
  // restricts that value's producer; higher priority wins.
  std::map<std::tuple<const void *, unsigned, const void *>,
           std::vector<unsigned>>
      allowedOf;
  for (unsigned an = firstOpNode; an < firstResult; ++an) {
    auto annotate = dyn_cast<AnnotateOp>(nodes[an].op);
    if (!annotate)
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

  report.numPricedReshards += pricing.pairs.size();
  unsigned threads = pricing.priceAll(ctx);
  report.pricingThreads = std::max(report.pricingThreads, threads);
  SolverOptions sopts;
  sopts.kind = *symbolizeSolverKind(solver);
  // As for pricing: threads only where there is work enough to pay for them.
  if (threads > 1)
    sopts.parallelFor = [ctx](size_t n, const std::function<void(size_t)> &fn) {
      parallelFor(ctx, 0, n, fn);
    };
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
    n.chosen = &n.cands()[result.assignment[n.solverId]];
    if (n.kind == Node::Op)
      report.computeTimeUs += model.getComputeTimeUs(n.chosen->flops);
  }
  // Layout-free producers take the layout their only consumer wants; walk
  // backwards so a zero fill passes it on to its tensor.empty.
  for (unsigned c = firstResult; c-- > firstOpNode;) {
    const Node &cn = nodes[c];
    for (auto [use, src] :
         llvm::zip_equal(cn.op->getOpOperands(), sourcesOf(cn))) {
      if (!readsLayoutFree(src, use.get()))
        continue;
      Node &pn = nodes[src.node];
      const TensorLayout *want = &cn.operandLayout(use.getOperandNumber());
      pn.setLayout(/*results=*/true, src.slot, want);
      // A fill's init (its last operand) follows its result.
      if (isa<linalg::FillOp>(pn.op))
        pn.setLayout(/*results=*/false, pn.getNumOperandLayouts() - 1, want);
    }
  }

  // Write back. Layouts and strategies repeat (the chosen layouts are
  // elements of the shared candidate lists), so each attribute is built
  // once: strategies per candidate, layouts per content, looked up by
  // object first (candidate lists hold equal layouts in different objects),
  // then by interned id and kind (the attribute keeps the kind even when
  // nothing is partial, which interning ignores).
  llvm::DenseMap<const TensorLayout *, LayoutAttr> layoutAttrs;
  llvm::DenseMap<std::pair<unsigned, unsigned>, LayoutAttr> layoutAttrsById;
  auto layoutAttr = [&](const TensorLayout &l) {
    LayoutAttr &attr = layoutAttrs[&l];
    if (!attr) {
      LayoutAttr &byId = layoutAttrsById[{
          pricing.intern(l), static_cast<unsigned>(l.partialKind)}];
      if (!byId)
        byId = LayoutAttr::get(meshAttr, l);
      attr = byId;
    }
    return attr;
  };
  {
    auto layoutName = StringAttr::get(ctx, "dist.layout");
    SmallVector<DictionaryAttr> argAttrs;
    argAttrs.reserve(body.getNumArguments());
    bool changed = false;
    for (BlockArgument arg : body.getArguments()) {
      DictionaryAttr attrs = func.getArgAttrDict(arg.getArgNumber());
      if (isa<RankedTensorType>(arg.getType())) {
        NamedAttrList list(attrs);
        Attribute layout =
            layoutAttr(nodes[arg.getArgNumber()].resultLayout(0));
        if (list.set(layoutName, layout) != layout) {
          attrs = list.getDictionary(ctx);
          changed = true;
        }
      }
      argAttrs.push_back(attrs);
    }
    // One update (setArgAttr per argument rebuilds the whole array each
    // time), the same as setting them one by one.
    if (changed)
      func.setAllArgAttrs(argAttrs);
  }
  SmallVector<LayoutAttr> returnLayouts;
  for (OpOperand &use : returnOp->getOpOperands()) {
    const Node &rn = nodes[firstResult + use.getOperandNumber()];
    returnLayouts.push_back(layoutAttr(rn.operandLayout(0)));
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
    std::optional<double> time = planner.costUs(
        getShape(v.getType()), getElemBytes(v.getType()), from, to, error);
    return time ? *time : kInfeasibleCost;
  };
  auto fixUse = [&](OpOperand &use, const OperandSource &src,
                    const TensorLayout &want,
                    const Node &consumerNode) -> LogicalResult {
    if (!src.tensor || !src.graph)
      return success();
    const Node &producerNode = nodes[src.node];
    const TensorLayout &have = producerNode.resultLayout(src.slot);
    if (sameLayout(have, want))
      return success();
    Value v = use.get();
    // With a fan-out node, the value's shared layout: take it, or reshard
    // from whichever of the value and the shared reshard is cheaper (the
    // solver priced the latter, so the result is never worse).
    Value source = v;
    const TensorLayout *from = &have;
    if (auto fit = fanoutOf.find(v); fit != fanoutOf.end()) {
      const TensorLayout &shared = nodes[fit->second].resultLayout(0);
      bool sharedExists = reshards.count(
          std::make_pair(v.getAsOpaquePointer(), pricing.intern(shared)));
      if (!sameLayout(shared, have) &&
          (sameLayout(shared, want) ||
           planTime(v, shared, want) +
                   (sharedExists ? 0.0 : planTime(v, have, shared)) <
               planTime(v, have, want))) {
        FailureOr<Value> r =
            getReshard(v, have, shared, use, producerNode, consumerNode);
        if (failed(r))
          return failure();
        source = *r;
        from = &shared;
      }
    }
    if (!sameLayout(*from, want)) {
      FailureOr<Value> r =
          getReshard(source, *from, want, use, producerNode, consumerNode);
      if (failed(r))
        return failure();
      source = *r;
    }
    use.set(source);
    return success();
  };
  // Strategies by chosen candidate (for nodes whose layouts are the
  // candidate's), and the attribute dictionaries they make (an op's
  // discardable attributes repeat across layers too).
  auto strategyName = StringAttr::get(ctx, DistDialect::kStrategyAttrName);
  llvm::DenseMap<const Candidate *, StrategyAttr> strategies;
  llvm::DenseMap<std::pair<const void *, const void *>, DictionaryAttr>
      withStrategy;
  llvm::DenseMap<const void *, bool> strategyIsInherent;
  auto strategyOf = [&](const Node &n) {
    auto build = [&] {
      SmallVector<LayoutAttr> ins, outs;
      for (unsigned i = 0, e = n.getNumOperandLayouts(); i < e; ++i)
        ins.push_back(layoutAttr(n.operandLayout(i)));
      for (unsigned i = 0, e = n.getNumResultLayouts(); i < e; ++i)
        outs.push_back(layoutAttr(n.resultLayout(i)));
      return StrategyAttr::get(ctx, meshAttr, ins, outs);
    };
    if (!n.operandOverride.empty() || !n.resultOverride.empty())
      return build();
    StrategyAttr &attr = strategies[n.chosen];
    if (!attr)
      attr = build();
    return attr;
  };
  // op->setAttr(strategyName, strategy), with the new dictionary cached.
  auto setStrategy = [&](Operation *op, StrategyAttr strategy) {
    auto [inh, first] =
        strategyIsInherent.try_emplace(op->getName().getAsOpaquePointer());
    if (first)
      inh->second = op->getPropertiesStorageSize() &&
                    op->getInherentAttr(strategyName).has_value();
    if (inh->second) {
      op->setAttr(strategyName, strategy);
      return;
    }
    DictionaryAttr old = op->getRawDictionaryAttrs();
    auto [it, inserted] = withStrategy.try_emplace(
        {old.getAsOpaquePointer(), strategy.getAsOpaquePointer()});
    if (inserted) {
      NamedAttrList attrs(old);
      it->second = attrs.set(strategyName, strategy) != strategy
                       ? attrs.getDictionary(ctx)
                       : old;
    }
    op->setDiscardableAttrs(it->second);
  };
  // The report's text of each layout, once per interned layout.
  std::vector<std::string> layoutTexts;
  auto layoutText = [&](const TensorLayout &l) -> llvm::StringRef {
    unsigned id = pricing.intern(l);
    if (layoutTexts.size() <= id)
      layoutTexts.resize(id + 1);
    if (layoutTexts[id].empty())
      layoutTexts[id] = l.str(dmesh);
    return layoutTexts[id];
  };
  std::vector<llvm::StringRef> reportIns, reportOuts;
  // The graph ops in order (the reshards inserted above are not among
  // them).
  for (unsigned ni = firstOpNode; ni < firstResult; ++ni) {
    const Node &n = nodes[ni];
    Operation &op = *n.op;
    unsigned numLayouts = n.getNumOperandLayouts();
    for (auto [use, src] : llvm::zip_equal(op.getOpOperands(), sourcesOf(n)))
      if (use.getOperandNumber() < numLayouts)
        if (failed(
                fixUse(use, src, n.operandLayout(use.getOperandNumber()), n)))
          return failure();
    if (report.wantStrategies) {
      reportIns.clear();
      reportOuts.clear();
      for (unsigned i = 0, e = n.getNumOperandLayouts(); i < e; ++i)
        reportIns.push_back(layoutText(n.operandLayout(i)));
      for (unsigned i = 0, e = n.getNumResultLayouts(); i < e; ++i)
        reportOuts.push_back(layoutText(n.resultLayout(i)));
      report.addStrategy(&op, reportIns, reportOuts);
    }
    if (isa<AnnotateOp, ReshardOp>(op))
      continue; // self-describing
    setStrategy(&op, strategyOf(n));
  }
  for (OpOperand &use : returnOp->getOpOperands()) {
    const Node &rn = nodes[firstResult + use.getOperandNumber()];
    if (failed(fixUse(use, sourceOf(use.get()), rn.operandLayout(0), rn)))
      return failure();
  }
  returnOp->setAttr(DistDialect::kStrategyAttrName,
                    StrategyAttr::get(ctx, meshAttr, returnLayouts, {}));

  // Memory: every value once, at its producer's layout (repeating layouts
  // and types priced once).
  llvm::DenseMap<std::pair<const void *, const void *>, double> bytesOf;
  auto tensorBytes = [&](const TensorLayout &l, Type type) {
    auto [it, inserted] = bytesOf.try_emplace(
        {static_cast<const void *>(&l), type.getAsOpaquePointer()}, 0.0);
    if (inserted)
      it->second =
          model.getTensorBytesPerDevice(l, getShape(type), getElemBytes(type));
    return it->second;
  };
  for (BlockArgument arg : body.getArguments())
    if (isa<RankedTensorType>(arg.getType()))
      report.memoryBytesPerDevice +=
          tensorBytes(nodes[arg.getArgNumber()].resultLayout(0), arg.getType());
  for (unsigned i = firstOpNode; i < firstResult; ++i) {
    const Node &n = nodes[i];
    for (OpResult r : n.op->getResults())
      if (isa<RankedTensorType>(r.getType()) &&
          r.getResultNumber() < n.getNumResultLayouts())
        report.memoryBytesPerDevice +=
            tensorBytes(n.resultLayout(r.getResultNumber()), r.getType());
  }
  report.numOps += firstResult - firstOpNode;
  return success();
}

void DistPropagatePass::runOnOperation() {
  ModuleOp module = getOperation();
  if (!symbolizeSolverKind(solver)) {
    module.emitError() << "dist-propagate: unknown solver '" << solver
                       << "' (expected 'dp', 'local' or 'exact')";
    return signalPassFailure();
  }
  ModuleScan scan = scanModule(module);
  FailureOr<MeshAttr> meshAttr = resolveMesh(module, scan);
  if (failed(meshAttr) || failed(convertUpstreamAnnotations(*meshAttr, scan)))
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
  for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
    double before = report.memoryBytesPerDevice;
    if (failed(propagateFunction(func, *meshAttr, model, planner, report)) ||
        failed(tieResults(func, planner, report)))
      return signalPassFailure();
    if (std::optional<double> step = countTrainingMemory(func, model, report))
      report.memoryBytesPerDevice = before + *step;
  }
  module->setAttr(DistDialect::kMeshAttrName, *meshAttr);
  if (!this->report.empty()) {
    std::string error;
    if (!report.write(this->report, error)) {
      module.emitError() << "dist-propagate: " << error;
      return signalPassFailure();
    }
  }
}
