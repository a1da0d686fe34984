//===- Pricing.h - Layouts interned, reshards priced once -------*- C++ -*-===//
//
// The pricing phase's store (see FunctionPropagation::buildSolverGraph).
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LIB_PROPAGATE_PRICING_H
#define AUTOSHARD_LIB_PROPAGATE_PRICING_H

#include "PropagateGraph.h"

#include "autoshard/Analysis/CostModel.h"
#include "autoshard/Analysis/ReshardPlanner.h"
#include "autoshard/Propagate/RuleModels.h"
#include "autoshard/Propagate/Solver.h"
#include "autoshard/Support/KeyInfo.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"

#include <limits>
#include <map>

namespace autoshard::propagate {

using mlir::MLIRContext;
using mlir::Type;

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
    /// At most this (a gather that the partitioner makes a halo exchange:
    /// the exchange's time).
    double cap = std::numeric_limits<double>::infinity();
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
  /// Edges into a spatial window op's input (haloDimsOf): their own tables,
  /// a gather of the split rows priced as the halo exchange that replaces it.
  std::deque<Table> haloTables;
  /// By (shape id, elemBytes, resolveOnly) and the two id lists.
  llvm::DenseMap<std::pair<uint64_t, uint64_t>, Table, PackedPairKeyInfo>
      tables;

  /// The table of an edge from layout list `srcList` to `dstList`; with
  /// `halo`, an edge into a window op's input (a table of its own).
  const Table &table(const TypeInfo &type, unsigned srcList, unsigned dstList,
                     bool resolveOnly,
                     const std::vector<HaloDim> *halo = nullptr) {
    if (halo)
      haloTables.push_back(nullptr);
    auto [it, inserted] =
        halo ? std::make_pair(tables.end(), true)
             : tables.try_emplace(
                   {(uint64_t(type.shapeId) << 32) |
                        (uint64_t(type.elemBytes) << 1) | uint64_t(resolveOnly),
                    (uint64_t(srcList) << 32) | uint64_t(dstList)},
                   nullptr);
    if (!inserted)
      return it->second;
    Table &slot = halo ? haloTables.back() : it->second;
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
        } else if (std::optional<double> time =
                       halo ? model.getHaloTimeUs(layouts[from], layouts[to],
                                                  type.shape, type.elemBytes,
                                                  *halo)
                            : std::nullopt) {
          entry = pairs.size();
          pairs.push_back({&type, from, to, 0.0, *time});
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
    slot = std::move(t);
    return slot;
  }
};

/// The spatial dims of a conv or pool's input (HaloDim) when `op` is one
/// (linalg.conv_2d_nchw_fchw, conv_2d_ngchw_gfchw, pooling_nchw_max/sum)
/// and `operand` its input, or a constant tensor.pad (operand 0) whose only
/// use is one's input; std::nullopt otherwise.
std::optional<std::vector<HaloDim>> haloDimsOf(mlir::Operation *op,
                                               unsigned operand);
/// The conv or pool whose input haloDimsOf(op, operand) describes.
mlir::Operation *haloWindowOp(mlir::Operation *op);
/// Whether a window op with output layout `out` splits every dim of `dims`
/// that its input `in` splits over the same axes (so --dist-partition
/// exchanges halos rather than gathering `in`).
bool haloFollowsOutput(const TensorLayout &in, const TensorLayout &out,
                       const std::vector<HaloDim> &dims);
/// `l` whole on `dims`.
TensorLayout wholeOnHaloDims(TensorLayout l, const std::vector<HaloDim> &dims);

} // namespace autoshard::propagate

#endif // AUTOSHARD_LIB_PROPAGATE_PRICING_H
