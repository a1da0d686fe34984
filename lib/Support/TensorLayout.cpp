//===- TensorLayout.cpp - How a tensor is spread over a mesh --------------===//

#include "autoshard/Support/TensorLayout.h"

#include <algorithm>
#include <numeric>
#include <set>

using namespace autoshard;

std::string_view autoshard::stringifyReductionKind(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return "sum";
  case ReductionKind::Max:
    return "max";
  case ReductionKind::Min:
    return "min";
  case ReductionKind::Product:
    return "product";
  }
  return "sum";
}

std::optional<ReductionKind>
autoshard::symbolizeReductionKind(std::string_view name) {
  if (name == "sum")
    return ReductionKind::Sum;
  if (name == "max")
    return ReductionKind::Max;
  if (name == "min")
    return ReductionKind::Min;
  if (name == "product")
    return ReductionKind::Product;
  return std::nullopt;
}

TensorLayout TensorLayout::replicated(int64_t rank) {
  TensorLayout l;
  l.dimAxes.resize(rank);
  return l;
}

bool TensorLayout::isReplicated() const {
  if (!partialAxes.empty())
    return false;
  return std::all_of(dimAxes.begin(), dimAxes.end(),
                     [](const auto &axes) { return axes.empty(); });
}

std::vector<int64_t> TensorLayout::getSplitAxes() const {
  std::vector<int64_t> out;
  for (const auto &axes : dimAxes)
    out.insert(out.end(), axes.begin(), axes.end());
  return out;
}

std::optional<int64_t> TensorLayout::getDimOfAxis(int64_t axis) const {
  for (size_t d = 0; d < dimAxes.size(); ++d)
    if (std::find(dimAxes[d].begin(), dimAxes[d].end(), axis) !=
        dimAxes[d].end())
      return static_cast<int64_t>(d);
  return std::nullopt;
}

int64_t TensorLayout::getNumShards(const DeviceMesh &mesh, int64_t dim) const {
  return mesh.getGroupSize(dimAxes[dim]);
}

int64_t TensorLayout::getShardIndex(const DeviceMesh &mesh, int64_t dim,
                                    const std::vector<int64_t> &coord) const {
  int64_t idx = 0;
  for (int64_t a : dimAxes[dim])
    idx = idx * mesh.getAxisSize(a) + coord[a];
  return idx;
}

int64_t TensorLayout::getShardSize(const DeviceMesh &mesh, int64_t dim,
                                   int64_t extent, int64_t shard) const {
  if (hasUnevenDim(dim))
    return unevenSizes[dim][shard];
  return extent / getNumShards(mesh, dim);
}

int64_t TensorLayout::getShardOffset(const DeviceMesh &mesh, int64_t dim,
                                     int64_t extent, int64_t shard) const {
  if (hasUnevenDim(dim)) {
    const auto &sizes = unevenSizes[dim];
    return std::accumulate(sizes.begin(), sizes.begin() + shard, int64_t{0});
  }
  return shard * (extent / getNumShards(mesh, dim));
}

std::vector<int64_t>
TensorLayout::getLocalShape(const DeviceMesh &mesh,
                            const std::vector<int64_t> &globalShape,
                            const std::vector<int64_t> &coord) const {
  std::vector<int64_t> shape(globalShape.size());
  for (size_t d = 0; d < globalShape.size(); ++d)
    shape[d] = getShardSize(mesh, d, globalShape[d],
                            getShardIndex(mesh, d, coord));
  return shape;
}

std::vector<int64_t>
TensorLayout::getLocalOffsets(const DeviceMesh &mesh,
                              const std::vector<int64_t> &globalShape,
                              const std::vector<int64_t> &coord) const {
  std::vector<int64_t> offsets(globalShape.size());
  for (size_t d = 0; d < globalShape.size(); ++d)
    offsets[d] = getShardOffset(mesh, d, globalShape[d],
                                getShardIndex(mesh, d, coord));
  return offsets;
}

std::vector<int64_t>
TensorLayout::getMaxLocalShape(const DeviceMesh &mesh,
                               const std::vector<int64_t> &shape) const {
  std::vector<int64_t> out(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = getNumShards(mesh, d);
    for (int64_t s = 0; s < n; ++s)
      out[d] = std::max(out[d], getShardSize(mesh, d, shape[d], s));
  }
  return out;
}

std::string TensorLayout::validate(const DeviceMesh &mesh,
                                   const std::vector<int64_t> *shape) const {
  if (unevenSizes.empty() && mesh.getNumAxes() <= 64) {
    int64_t sizes[64];
    for (int64_t a = 0; a < mesh.getNumAxes(); ++a)
      sizes[a] = mesh.getAxisSize(a);
    AxesRef extents = shape ? AxesRef(*shape) : AxesRef();
    if (isValidEvenLayout(
            AxesRef(sizes, mesh.getNumAxes()), partialAxes, dimAxes.size(),
            [&](size_t d) { return AxesRef(dimAxes[d]); },
            shape ? &extents : nullptr))
      return "";
  }
  auto axisName = [&](int64_t a) { return "'" + mesh.getAxis(a).name + "'"; };
  std::set<int64_t> used;
  for (size_t d = 0; d < dimAxes.size(); ++d) {
    for (int64_t a : dimAxes[d]) {
      if (a < 0 || a >= mesh.getNumAxes())
        return "axis index " + std::to_string(a) + " is not in mesh " +
               mesh.str();
      if (!used.insert(a).second)
        return "mesh axis " + axisName(a) + " is used more than once";
    }
  }
  for (int64_t a : partialAxes) {
    if (a < 0 || a >= mesh.getNumAxes())
      return "axis index " + std::to_string(a) + " is not in mesh " +
             mesh.str();
    if (used.count(a))
      return "mesh axis " + axisName(a) +
             " is both a partial axis and a split axis";
    if (!used.insert(a).second)
      return "mesh axis " + axisName(a) + " is used more than once";
  }
  if (!unevenSizes.empty() && unevenSizes.size() != dimAxes.size())
    return "uneven sizes are given for " + std::to_string(unevenSizes.size()) +
           " dims but the layout has rank " + std::to_string(dimAxes.size());
  for (size_t d = 0; d < unevenSizes.size(); ++d) {
    if (unevenSizes[d].empty())
      continue;
    int64_t n = getNumShards(mesh, d);
    if (static_cast<int64_t>(unevenSizes[d].size()) != n)
      return "dim " + std::to_string(d) + " has " +
             std::to_string(unevenSizes[d].size()) +
             " uneven sizes but is split into " + std::to_string(n) + " shards";
    for (int64_t s : unevenSizes[d])
      if (s < 0)
        return "dim " + std::to_string(d) + " has a negative uneven size";
  }
  if (!shape)
    return "";
  if (shape->size() != dimAxes.size())
    return "layout has rank " + std::to_string(dimAxes.size()) +
           " but the tensor has rank " + std::to_string(shape->size());
  for (size_t d = 0; d < shape->size(); ++d) {
    int64_t extent = (*shape)[d];
    if (extent < 0) // dynamic dims are checked at run time
      continue;
    if (hasUnevenDim(d)) {
      int64_t sum = std::accumulate(unevenSizes[d].begin(),
                                    unevenSizes[d].end(), int64_t{0});
      if (sum != extent)
        return "uneven sizes of dim " + std::to_string(d) + " sum to " +
               std::to_string(sum) + " but the dim has size " +
               std::to_string(extent);
      continue;
    }
    int64_t n = getNumShards(mesh, d);
    if (extent % n != 0)
      return "dim " + std::to_string(d) + " of size " + std::to_string(extent) +
             " is not divisible by its split count " + std::to_string(n);
  }
  return "";
}

bool TensorLayout::operator==(const TensorLayout &other) const {
  auto normUneven = [](const TensorLayout &l) {
    std::vector<std::vector<int64_t>> u = l.unevenSizes;
    bool any = std::any_of(u.begin(), u.end(),
                           [](const auto &v) { return !v.empty(); });
    return any ? u : std::vector<std::vector<int64_t>>{};
  };
  LayoutAxes p1 = partialAxes, p2 = other.partialAxes;
  std::sort(p1.begin(), p1.end());
  std::sort(p2.begin(), p2.end());
  return dimAxes == other.dimAxes && p1 == p2 &&
         (p1.empty() || partialKind == other.partialKind) &&
         normUneven(*this) == normUneven(other);
}

std::string TensorLayout::str(const DeviceMesh &mesh) const {
  // Plain appends (no stream): propagation prints a key per distinct layout.
  std::string out;
  out.reserve(8 + 8 * dimAxes.size());
  auto appendName = [&](int64_t a) {
    if (a >= 0 && a < mesh.getNumAxes()) {
      out += mesh.getAxis(a).name;
    } else {
      out += '?';
      out += std::to_string(a);
    }
  };
  // "[e0, e1, ...]" with each(i) appending element i.
  auto appendJoined = [&](size_t n, auto &&each) {
    out += '[';
    for (size_t i = 0; i < n; ++i) {
      if (i)
        out += ", ";
      each(i);
    }
    out += ']';
  };
  auto appendAxes = [&](const LayoutAxes &axes) {
    appendJoined(axes.size(), [&](size_t i) { appendName(axes[i]); });
  };
  appendJoined(dimAxes.size(), [&](size_t d) { appendAxes(dimAxes[d]); });
  if (!partialAxes.empty()) {
    out += " partial ";
    out += stringifyReductionKind(partialKind);
    appendAxes(partialAxes);
  }
  return out;
}
