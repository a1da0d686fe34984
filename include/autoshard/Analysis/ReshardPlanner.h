//===- ReshardPlanner.h - Cheapest collective sequence ----------*- C++ -*-===//
//
// Finds the cheapest sequence of CollectiveSteps turning one layout into
// another, for any pair of layouts on a mesh (several axes per dim, axis
// swaps, partial sums, uneven splits). The propagation pass prices reshards
// with it and the partition pass emits exactly the plan it returns, so the
// predicted and the emitted communication agree.
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_ANALYSIS_RESHARDPLANNER_H
#define AUTOSHARD_ANALYSIS_RESHARDPLANNER_H

#include "autoshard/Analysis/Collective.h"
#include "autoshard/Analysis/CostModel.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace autoshard {

struct PlannerOptions {
  /// Use AllToAll to move an axis between dims (MindSpore's enable_alltoall);
  /// otherwise that costs AllGather + AllSlice.
  bool enableAllToAll = false;
};

struct ReshardPlan {
  std::vector<CollectiveStep> steps;
  double timeUs = 0.0;
  /// Bytes sent per device over the whole plan.
  double bytesPerDevice = 0.0;
};

/// Plans `from` -> `to` for a tensor of `globalShape` (static dims) with
/// `elemBytes`-byte elements. Returns std::nullopt and sets `error` only when
/// no plan exists (e.g. the target splits a dim that its size cannot be
/// divided by, or kinds of partial reduction that cannot be combined).
std::optional<ReshardPlan>
planReshard(const CostModel &model, const std::vector<int64_t> &globalShape,
            int64_t elemBytes, const TensorLayout &from, const TensorLayout &to,
            const PlannerOptions &options, std::string &error);

/// A planner bound to one cost model and options that memoises plans by
/// (shape, elemBytes, from, to): the propagation pass asks for the same
/// reshards many times. Not thread-safe.
class ReshardPlanner {
public:
  explicit ReshardPlanner(const CostModel &model, PlannerOptions options = {});
  ~ReshardPlanner();

  std::optional<ReshardPlan> plan(const std::vector<int64_t> &globalShape,
                                  int64_t elemBytes, const TensorLayout &from,
                                  const TensorLayout &to, std::string &error);

  /// The time in us of the cheapest plan from `from` to `to`: exactly
  /// plan()->timeUs, or std::nullopt with plan()'s error, without building
  /// the steps. For layouts without uneven splits, one search from each
  /// source (and kind of partial sum in the target) prices every target: it
  /// is resumed for a target it has not settled yet, instead of a search per
  /// pair, and kept for the planner's lifetime, so a repeated pair is cheap.
  /// Other layouts go through plan() (memoised).
  std::optional<double> costUs(const std::vector<int64_t> &globalShape,
                               int64_t elemBytes, const TensorLayout &from,
                               const TensorLayout &to, std::string &error);
  /// costUs() by ids, for callers that price many pairs among few layouts:
  /// layoutId() registers a layout of `globalShape` once (ids are per
  /// shape and stay valid for the planner's lifetime), and pricing by id
  /// skips looking the layouts up.
  uint32_t layoutId(const std::vector<int64_t> &globalShape,
                    const TensorLayout &layout);
  std::optional<double> costUs(const std::vector<int64_t> &globalShape,
                               int64_t elemBytes, uint32_t fromId,
                               uint32_t toId, std::string &error);

  const CostModel &getCostModel() const { return model; }
  const PlannerOptions &getOptions() const { return options; }
  size_t getNumCacheHits() const { return hits; }
  size_t getNumCacheEntries() const { return cache.size(); }
  /// Searches started: plan() cache misses plus costUs()'s source searches.
  size_t getNumSearches() const { return numSearches; }

private:
  struct Entry {
    std::optional<ReshardPlan> plan;
    std::string error;
  };
  /// costUs()'s memo and retained searches (defined in the .cpp).
  struct CostIndex;
  CostIndex &getCostIndex();
  const CostModel &model;
  PlannerOptions options;
  std::unordered_map<std::string, Entry> cache;
  size_t hits = 0;
  size_t numSearches = 0;
  std::unique_ptr<CostIndex> costIndex;
};

} // namespace autoshard

#endif // AUTOSHARD_ANALYSIS_RESHARDPLANNER_H
