//===- TensorLayout.h - How a tensor is spread over a mesh ------*- C++ -*-===//
//
// The MLIR-free form of `#dist.layout`: for every tensor dim the ordered list
// of mesh axes it is split over (major to minor), the axes on which the value
// is a pending partial reduction, and optional explicit uneven split sizes.
// Shared by the dialect, the cost model, the reshard planner and the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_SUPPORT_TENSORLAYOUT_H
#define AUTOSHARD_SUPPORT_TENSORLAYOUT_H

#include "autoshard/Support/AxesRef.h"
#include "autoshard/Support/DeviceMesh.h"
#include "autoshard/Support/InlineVector.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autoshard {

enum class ReductionKind { Sum, Max, Min, Product };

std::string_view stringifyReductionKind(ReductionKind kind);
std::optional<ReductionKind> symbolizeReductionKind(std::string_view name);

/// Mesh axis indices, e.g. the axes one tensor dim is split over. Inline up to
/// kLayoutInlineAxes: two axes on one dim cover every 2-axis mesh, and the
/// rare dim split over three or more axes allocates. Two rather than four:
/// the pass keeps thousands of candidate layouts, and the memory they touch
/// costs more than those allocations (GPT L = 1: 60 fewer fresh pages).
constexpr unsigned kLayoutInlineAxes = 2;
using LayoutAxes = InlineVector<int64_t, kLayoutInlineAxes>;
/// One LayoutAxes per tensor dim, inline up to kLayoutInlineRank dims.
constexpr unsigned kLayoutInlineRank = 4;
using LayoutDimAxes = InlineVector<LayoutAxes, kLayoutInlineRank>;

/// Whether an even layout (no uneven sizes), given by its parts, is valid on
/// a mesh whose axes have `axisSizes` and, with a `shape`, fits it: axes
/// known and used once, every static dim divisible by its split count (dims
/// below 0 are dynamic). `dimAxes(d)` gives dim d's axes for d < rank. The
/// quick check that TensorLayout::validate and the dist verifier (on the
/// attribute's own arrays) try first: they meet almost only valid layouts,
/// and only what this accepts skips the full check, which words the errors.
template <typename DimAxes>
bool isValidEvenLayout(AxesRef axisSizes, AxesRef partialAxes, size_t rank,
                       DimAxes dimAxes, const AxesRef *shape) {
  auto numAxes = static_cast<int64_t>(axisSizes.size());
  if (numAxes > 64 || (shape && shape->size() != rank))
    return false;
  uint64_t used = 0;
  auto take = [&](int64_t a) {
    if (a < 0 || a >= numAxes || (used >> a & 1))
      return false;
    used |= uint64_t(1) << a;
    return true;
  };
  for (int64_t a : partialAxes)
    if (!take(a))
      return false;
  for (size_t d = 0; d < rank; ++d) {
    int64_t n = 1;
    for (int64_t a : dimAxes(d)) {
      if (!take(a))
        return false;
      n *= axisSizes[a];
    }
    if (shape && (*shape)[d] >= 0 && (*shape)[d] % n != 0)
      return false;
  }
  return true;
}

struct TensorLayout {
  /// dimAxes[d] = mesh axis indices dim d is split over, major to minor.
  LayoutDimAxes dimAxes;
  /// Axes over which the value is a pending reduction of kind partialKind.
  LayoutAxes partialAxes;
  ReductionKind partialKind = ReductionKind::Sum;
  /// unevenSizes[d], when non-empty, gives the size of each of dim d's shards
  /// (in shard order); an empty list means an even split. Either empty or of
  /// size rank.
  std::vector<std::vector<int64_t>> unevenSizes;

  TensorLayout() = default;
  /// A fully replicated layout of the given rank.
  static TensorLayout replicated(int64_t rank);

  int64_t getRank() const { return static_cast<int64_t>(dimAxes.size()); }
  bool isReplicated() const;
  bool isPartial() const { return !partialAxes.empty(); }
  bool hasUnevenDim(int64_t dim) const {
    return !unevenSizes.empty() && !unevenSizes[dim].empty();
  }
  /// Mesh axes used to split any dim (not the partial ones).
  std::vector<int64_t> getSplitAxes() const;
  /// Tensor dim that `axis` splits, if any.
  std::optional<int64_t> getDimOfAxis(int64_t axis) const;

  /// Number of shards of `dim`: the product of its axes' sizes.
  int64_t getNumShards(const DeviceMesh &mesh, int64_t dim) const;
  /// Which of `dim`'s shards the device at mesh coordinate `coord` holds.
  int64_t getShardIndex(const DeviceMesh &mesh, int64_t dim,
                        const std::vector<int64_t> &coord) const;
  /// Size and offset of shard `shard` of `dim` for a global extent.
  int64_t getShardSize(const DeviceMesh &mesh, int64_t dim, int64_t extent,
                       int64_t shard) const;
  int64_t getShardOffset(const DeviceMesh &mesh, int64_t dim, int64_t extent,
                         int64_t shard) const;

  /// The local shard shape / offsets held at mesh coordinate `coord`.
  std::vector<int64_t> getLocalShape(const DeviceMesh &mesh,
                                     const std::vector<int64_t> &globalShape,
                                     const std::vector<int64_t> &coord) const;
  std::vector<int64_t>
  getLocalOffsets(const DeviceMesh &mesh,
                  const std::vector<int64_t> &globalShape,
                  const std::vector<int64_t> &coord) const;
  /// The largest local shape over all devices (the buffer size to allocate).
  std::vector<int64_t> getMaxLocalShape(const DeviceMesh &mesh,
                                        const std::vector<int64_t> &shape) const;

  /// Checks the layout against a mesh (and, when given, a global shape): axis
  /// indices in range, no axis used twice, partial axes not also splitting,
  /// rank agreement, divisibility unless uneven sizes are given, uneven sizes
  /// of the right count summing to the dim. Returns an error message or "".
  std::string validate(const DeviceMesh &mesh,
                       const std::vector<int64_t> *globalShape = nullptr) const;

  bool operator==(const TensorLayout &other) const;
  bool operator!=(const TensorLayout &other) const { return !(*this == other); }
  /// Human-readable form, e.g. "[[dp], []] partial sum[mp]".
  std::string str(const DeviceMesh &mesh) const;
};

/// Whether two layouts have the same fields, one by one: dim axes, partial
/// axes in order and the uneven lists as given (operator== treats partial
/// axes as a set and all-empty uneven lists as none). The reduction kind
/// counts always, or, with `kindOnlyWhenPartial`, only when the layouts are
/// partial (as their printed forms tell them apart). For the interning
/// tables of the reshard planner and the propagation pass.
inline bool sameFields(const TensorLayout &a, const TensorLayout &b,
                       bool kindOnlyWhenPartial) {
  // Plain loops: the lists are a few elements long, too short for memcmp.
  auto same = [](const auto &x, const auto &y) {
    if (x.size() != y.size())
      return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i] != y[i])
        return false;
    return true;
  };
  if (a.dimAxes.size() != b.dimAxes.size() ||
      !same(a.partialAxes, b.partialAxes) ||
      (a.partialKind != b.partialKind &&
       !(kindOnlyWhenPartial && a.partialAxes.empty())))
    return false;
  for (size_t d = 0; d < a.dimAxes.size(); ++d)
    if (!same(a.dimAxes[d], b.dimAxes[d]))
      return false;
  if (a.unevenSizes.size() != b.unevenSizes.size())
    return false;
  for (size_t d = 0; d < a.unevenSizes.size(); ++d)
    if (!same(a.unevenSizes[d], b.unevenSizes[d]))
      return false;
  return true;
}

/// A hash of what sameFields compares (with the same flag), read in place.
inline uint64_t hashFields(const TensorLayout &l, bool kindOnlyWhenPartial) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
    h ^= h >> 29;
  };
  mix(l.dimAxes.size());
  for (const auto &axes : l.dimAxes) {
    mix(axes.size() | 0x100);
    for (int64_t a : axes)
      mix(static_cast<uint64_t>(a));
  }
  mix(l.partialAxes.size() | 0x200);
  for (int64_t a : l.partialAxes)
    mix(static_cast<uint64_t>(a));
  if (!kindOnlyWhenPartial || !l.partialAxes.empty())
    mix(static_cast<uint64_t>(l.partialKind));
  mix(l.unevenSizes.size() | 0x300);
  for (const auto &sizes : l.unevenSizes) {
    mix(sizes.size() | 0x400);
    for (int64_t x : sizes)
      mix(static_cast<uint64_t>(x));
  }
  return h;
}

} // namespace autoshard

#endif // AUTOSHARD_SUPPORT_TENSORLAYOUT_H
