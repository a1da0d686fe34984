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

#include <optional>
#include <string>
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
std::optional<ReshardPlan> planReshard(const CostModel &model,
                                       const std::vector<int64_t> &globalShape,
                                       int64_t elemBytes,
                                       const TensorLayout &from,
                                       const TensorLayout &to,
                                       const PlannerOptions &options,
                                       std::string &error);

} // namespace autoshard

#endif // AUTOSHARD_ANALYSIS_RESHARDPLANNER_H
