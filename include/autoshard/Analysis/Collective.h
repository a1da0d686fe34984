//===- Collective.h - One step of a redistribution --------------*- C++ -*-===//
//
// The vocabulary shared by the cost model, the reshard planner, the partition
// pass (which emits each step as an op), the collective simulator and the
// runtime. MLIR-free.
//
// Semantics of a step on layout `before`, producing layout `after`:
//   AllGather     axes A on dim d: A is the minor-most suffix of before.dimAxes[d];
//                 every device ends with the concatenation over A (A removed).
//   AllSlice      axes A on dim d: local only; A is appended (minor-most) to
//                 dim d and each device keeps its piece.
//   AllReduce     axes A: A is a subset of before.partialAxes; reduces with
//                 `reduction` over A (A removed from partialAxes).
//   ReduceScatter axes A on dim d: reduce over A, then each device keeps its
//                 piece of dim d (A removed from partial, appended to dim d).
//   AllToAll      axes A from dim `srcDim` (A the minor-most suffix there) to
//                 dim d (A appended minor-most): split d, exchange, concat srcDim.
//   Permute       `pairs` (source position, target position): point-to-point
//                 moves of whole local shards (axis swaps, device reorders).
//   MakePartial   axes A: local only; A is added to partialAxes with kind
//                 `reduction`: for sum the device at group index 0 keeps the
//                 value and the others hold zeros; for max/min/product every
//                 device keeps it (idempotent) — product keeps it on index 0
//                 and ones elsewhere.
// Uneven dims (TensorLayout::unevenSizes) are allowed on every step; the
// gather/scatter then moves each device's own shard size.
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_ANALYSIS_COLLECTIVE_H
#define AUTOSHARD_ANALYSIS_COLLECTIVE_H

#include "autoshard/Support/TensorLayout.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace autoshard {

enum class CollectiveKind {
  AllGather,
  AllSlice,
  AllReduce,
  ReduceScatter,
  AllToAll,
  Permute,
  MakePartial,
};

/// The kind's op name (all_gather, ...). Inline so that the MLIR- and
/// LLVM-free runtime prints plans with the same names.
inline std::string_view stringifyCollectiveKind(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::AllSlice:
    return "all_slice";
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::Permute:
    return "permute";
  case CollectiveKind::MakePartial:
    return "make_partial";
  }
  return "unknown";
}

struct CollectiveStep {
  CollectiveKind kind = CollectiveKind::AllGather;
  /// Mesh axes whose groups communicate, major to minor.
  std::vector<int64_t> axes;
  /// AllGather/AllSlice/ReduceScatter: the tensor dim; AllToAll: the dim that
  /// becomes split. -1 when unused.
  int64_t dim = -1;
  /// AllToAll: the dim that becomes gathered. -1 when unused.
  int64_t srcDim = -1;
  ReductionKind reduction = ReductionKind::Sum;
  /// Permute: (source mesh position, target mesh position).
  std::vector<std::pair<int64_t, int64_t>> pairs;
  TensorLayout before, after;

  std::string str(const DeviceMesh &mesh) const;
};

} // namespace autoshard

#endif // AUTOSHARD_ANALYSIS_COLLECTIVE_H
