//===- CollectiveSimulator.cpp - N virtual ranks executing steps ----------===//

#include "CollectiveSimulator.h"

#include <algorithm>
#include <functional>
#include <set>

using namespace autoshard;
using namespace autoshard::sim;

namespace {

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t e : shape)
    n *= e;
  return n;
}

std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Elements [offset, offset + size) of `dim`, all of the other dims.
bool sliceDim(const Buffer &in, int64_t dim, int64_t offset, int64_t size,
              Buffer &out) {
  if (offset < 0 || size < 0 || offset + size > in.shape[dim])
    return false;
  int64_t outer = numElements(
      std::vector<int64_t>(in.shape.begin(), in.shape.begin() + dim));
  int64_t inner = numElements(
      std::vector<int64_t>(in.shape.begin() + dim + 1, in.shape.end()));
  out.shape = in.shape;
  out.shape[dim] = size;
  out.data.clear();
  out.data.reserve(outer * size * inner);
  for (int64_t o = 0; o < outer; ++o) {
    const double *base = in.data.data() + (o * in.shape[dim] + offset) * inner;
    out.data.insert(out.data.end(), base, base + size * inner);
  }
  return true;
}

/// Concatenation along `dim`; the other dims must agree.
bool concatDim(const std::vector<const Buffer *> &parts, int64_t dim,
               Buffer &out) {
  out.shape = parts.front()->shape;
  out.shape[dim] = 0;
  for (const Buffer *p : parts) {
    for (size_t d = 0; d < out.shape.size(); ++d)
      if (static_cast<int64_t>(d) != dim && p->shape[d] != out.shape[d])
        return false;
    out.shape[dim] += p->shape[dim];
  }
  int64_t outer = numElements(
      std::vector<int64_t>(out.shape.begin(), out.shape.begin() + dim));
  int64_t inner = numElements(
      std::vector<int64_t>(out.shape.begin() + dim + 1, out.shape.end()));
  out.data.clear();
  out.data.reserve(numElements(out.shape));
  for (int64_t o = 0; o < outer; ++o)
    for (const Buffer *p : parts) {
      int64_t chunk = p->shape[dim] * inner;
      const double *base = p->data.data() + o * chunk;
      out.data.insert(out.data.end(), base, base + chunk);
    }
  return true;
}

double reduce(ReductionKind kind, double a, double b) {
  switch (kind) {
  case ReductionKind::Sum:
    return a + b;
  case ReductionKind::Max:
    return std::max(a, b);
  case ReductionKind::Min:
    return std::min(a, b);
  case ReductionKind::Product:
    return a * b;
  }
  return a + b;
}

bool reduceAll(const std::vector<const Buffer *> &parts, ReductionKind kind,
               Buffer &out) {
  out = *parts.front();
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i]->shape != out.shape)
      return false;
    for (size_t e = 0; e < out.data.size(); ++e)
      out.data[e] = reduce(kind, out.data[e], parts[i]->data[e]);
  }
  return true;
}

std::vector<int64_t> sorted(AxesRef axes) {
  std::vector<int64_t> v(axes.begin(), axes.end());
  std::sort(v.begin(), v.end());
  return v;
}

bool contains(AxesRef v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

} // namespace

CollectiveSimulator::CollectiveSimulator(DeviceMesh mesh,
                                         std::vector<int64_t> globalShape)
    : mesh(std::move(mesh)), globalShape(std::move(globalShape)) {}

std::vector<double> CollectiveSimulator::makeGlobal(std::mt19937 &rng) const {
  std::uniform_int_distribution<int> dist(-9, 9);
  std::vector<double> global(numElements(globalShape));
  for (double &x : global)
    x = dist(rng);
  return global;
}

Buffer CollectiveSimulator::block(const std::vector<double> &global,
                                  const std::vector<int64_t> &offsets,
                                  const std::vector<int64_t> &sizes) const {
  Buffer out;
  out.shape = sizes;
  out.data.resize(numElements(sizes));
  int64_t rank = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> idx(rank, 0);
  for (size_t e = 0; e < out.data.size(); ++e) {
    int64_t flat = 0;
    for (int64_t d = 0; d < rank; ++d)
      flat = flat * globalShape[d] + offsets[d] + idx[d];
    out.data[e] = global[flat];
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d])
        break;
      idx[d] = 0;
    }
  }
  return out;
}

std::vector<Buffer>
CollectiveSimulator::scatter(const std::vector<double> &global,
                             const TensorLayout &layout,
                             std::mt19937 &rng) const {
  int64_t n = mesh.getNumDevices();
  std::vector<Buffer> ranks(n);
  for (int64_t p = 0; p < n; ++p) {
    std::vector<int64_t> c = mesh.getCoordinate(p);
    ranks[p] = block(global, layout.getLocalOffsets(mesh, globalShape, c),
                     layout.getLocalShape(mesh, globalShape, c));
  }
  if (!layout.isPartial())
    return ranks;
  // Replace each partial group's copies by random terms of its reduction.
  std::uniform_int_distribution<int> small(0, 3);
  for (int64_t p = 0; p < n; ++p) {
    std::vector<int64_t> group = mesh.getGroup(p, layout.partialAxes);
    if (group.front() != p)
      continue;
    int64_t members = static_cast<int64_t>(group.size());
    for (size_t e = 0; e < ranks[p].data.size(); ++e) {
      double value = ranks[p].data[e];
      int64_t keeper =
          std::uniform_int_distribution<int64_t>(0, members - 1)(rng);
      double rest = 0;
      for (int64_t k = 0; k < members; ++k) {
        double term = value;
        switch (layout.partialKind) {
        case ReductionKind::Sum:
          term = k == keeper ? 0 : small(rng) - 2.0;
          rest += term;
          break;
        case ReductionKind::Max:
          term = k == keeper ? value : value - small(rng);
          break;
        case ReductionKind::Min:
          term = k == keeper ? value : value + small(rng);
          break;
        case ReductionKind::Product:
          term = k == keeper ? value : 1.0;
          break;
        }
        ranks[group[k]].data[e] = term;
      }
      if (layout.partialKind == ReductionKind::Sum)
        ranks[group[keeper]].data[e] = value - rest;
    }
  }
  return ranks;
}

std::string
CollectiveSimulator::checkStructure(const CollectiveStep &step) const {
  const TensorLayout &in = step.before;
  int64_t rank = in.getRank();
  std::string err = in.validate(mesh, &globalShape);
  if (!err.empty())
    return "step.before is invalid: " + err;
  err = step.after.validate(mesh, &globalShape);
  if (!err.empty())
    return "step.after is invalid: " + err;
  for (int64_t a : step.axes)
    if (a < 0 || a >= mesh.getNumAxes())
      return "step axis out of range";
  if (std::set<int64_t>(step.axes.begin(), step.axes.end()).size() !=
      step.axes.size())
    return "step lists an axis twice";
  auto dimOk = [&](int64_t d) { return d >= 0 && d < rank; };
  auto isUnused = [&](int64_t a) {
    return !in.getDimOfAxis(a) && !contains(in.partialAxes, a);
  };
  auto isSuffix = [&](const std::vector<int64_t> &axes, int64_t d) {
    const LayoutAxes &l = in.dimAxes[d];
    return axes.size() <= l.size() &&
           std::equal(axes.begin(), axes.end(), l.end() - axes.size());
  };
  // The layout the semantics produce (split and partial axes only).
  TensorLayout want = in;
  want.unevenSizes.clear();
  switch (step.kind) {
  case CollectiveKind::AllGather:
    if (!dimOk(step.dim) || step.axes.empty() || !isSuffix(step.axes, step.dim))
      return "all_gather axes are not a minor-most suffix of the dim";
    want.dimAxes[step.dim].resize(in.dimAxes[step.dim].size() -
                                  step.axes.size());
    break;
  case CollectiveKind::AllSlice:
    if (!dimOk(step.dim) || step.axes.empty() ||
        !std::all_of(step.axes.begin(), step.axes.end(), isUnused))
      return "all_slice needs unused axes and a dim";
    want.dimAxes[step.dim].insert(want.dimAxes[step.dim].end(),
                                  step.axes.begin(), step.axes.end());
    break;
  case CollectiveKind::AllReduce:
  case CollectiveKind::ReduceScatter:
    if (step.axes.empty() || step.reduction != in.partialKind ||
        !std::all_of(step.axes.begin(), step.axes.end(),
                     [&](int64_t a) { return contains(in.partialAxes, a); }))
      return "reduction over axes that are not partial (or of another kind)";
    want.partialAxes.clear();
    for (int64_t a : in.partialAxes)
      if (!contains(step.axes, a))
        want.partialAxes.push_back(a);
    if (step.kind == CollectiveKind::ReduceScatter) {
      if (!dimOk(step.dim))
        return "reduce_scatter needs a dim";
      want.dimAxes[step.dim].insert(want.dimAxes[step.dim].end(),
                                    step.axes.begin(), step.axes.end());
    }
    break;
  case CollectiveKind::AllToAll:
    if (!dimOk(step.dim) || !dimOk(step.srcDim) || step.dim == step.srcDim ||
        step.axes.empty() || !isSuffix(step.axes, step.srcDim))
      return "all_to_all axes are not a minor-most suffix of the source dim";
    want.dimAxes[step.srcDim].resize(in.dimAxes[step.srcDim].size() -
                                     step.axes.size());
    want.dimAxes[step.dim].insert(want.dimAxes[step.dim].end(),
                                  step.axes.begin(), step.axes.end());
    break;
  case CollectiveKind::Permute: {
    std::set<int64_t> srcs, dsts;
    for (auto [s, d] : step.pairs) {
      if (s < 0 || d < 0 || s >= mesh.getNumDevices() ||
          d >= mesh.getNumDevices())
        return "permute pair out of range";
      if (!srcs.insert(s).second || !dsts.insert(d).second)
        return "permute sends or receives twice";
    }
    if (sorted(in.partialAxes) != sorted(step.after.partialAxes) ||
        (in.isPartial() && in.partialKind != step.after.partialKind))
      return "permute changes the partial axes";
    want.dimAxes = step.after.dimAxes; // data check decides
    break;
  }
  case CollectiveKind::MakePartial:
    if (step.axes.empty() ||
        !std::all_of(step.axes.begin(), step.axes.end(), isUnused) ||
        (in.isPartial() && in.partialKind != step.reduction))
      return "make_partial needs unused axes and the same reduction";
    want.partialAxes.insert(want.partialAxes.end(), step.axes.begin(),
                            step.axes.end());
    want.partialKind = step.reduction;
    break;
  }
  TensorLayout got = step.after;
  got.unevenSizes.clear();
  if (!(got == want))
    return "step.after is " + step.after.str(mesh) + " but " +
           std::string(stringifyCollectiveKind(step.kind)) + " gives " +
           want.str(mesh);
  return "";
}

std::string CollectiveSimulator::apply(const CollectiveStep &step,
                                       std::vector<Buffer> &ranks) const {
  std::string err = checkStructure(step);
  if (!err.empty())
    return err;
  int64_t n = mesh.getNumDevices();
  std::vector<Buffer> out(n);
  auto groupOf = [&](int64_t p) {
    std::vector<const Buffer *> parts;
    for (int64_t g : mesh.getGroup(p, step.axes))
      parts.push_back(&ranks[g]);
    return parts;
  };
  auto coordOf = [&](int64_t p) { return mesh.getCoordinate(p); };
  // The piece of `in` (holding `before`'s shard at rank `holder`) that rank
  // p holds along `dim` under `after`.
  auto cut = [&](const Buffer &in, int64_t holder, int64_t p, int64_t dim,
                 Buffer &res) {
    int64_t from =
        step.before.getLocalOffsets(mesh, globalShape, coordOf(holder))[dim];
    std::vector<int64_t> c = coordOf(p);
    int64_t off = step.after.getLocalOffsets(mesh, globalShape, c)[dim];
    int64_t size = step.after.getLocalShape(mesh, globalShape, c)[dim];
    return sliceDim(in, dim, off - from, size, res);
  };
  for (int64_t p = 0; p < n; ++p) {
    bool ok = true;
    switch (step.kind) {
    case CollectiveKind::AllGather:
      ok = concatDim(groupOf(p), step.dim, out[p]);
      break;
    case CollectiveKind::AllSlice:
      ok = cut(ranks[p], p, p, step.dim, out[p]);
      break;
    case CollectiveKind::AllReduce:
      ok = reduceAll(groupOf(p), step.reduction, out[p]);
      break;
    case CollectiveKind::ReduceScatter: {
      Buffer sum;
      ok = reduceAll(groupOf(p), step.reduction, sum) &&
           cut(sum, p, p, step.dim, out[p]);
      break;
    }
    case CollectiveKind::AllToAll: {
      std::vector<Buffer> pieces;
      std::vector<int64_t> group = mesh.getGroup(p, step.axes);
      pieces.reserve(group.size());
      for (int64_t g : group) {
        pieces.emplace_back();
        ok = ok && cut(ranks[g], g, p, step.dim, pieces.back());
      }
      std::vector<const Buffer *> ptrs;
      for (const Buffer &b : pieces)
        ptrs.push_back(&b);
      ok = ok && concatDim(ptrs, step.srcDim, out[p]);
      break;
    }
    case CollectiveKind::Permute:
      out[p] = ranks[p];
      break;
    case CollectiveKind::MakePartial: {
      out[p] = ranks[p];
      if (mesh.getIndexInGroup(p, step.axes) == 0)
        break;
      if (step.reduction == ReductionKind::Sum)
        std::fill(out[p].data.begin(), out[p].data.end(), 0.0);
      else if (step.reduction == ReductionKind::Product)
        std::fill(out[p].data.begin(), out[p].data.end(), 1.0);
      break;
    }
    }
    if (!ok)
      return std::string(stringifyCollectiveKind(step.kind)) +
             ": shapes do not fit on rank " + std::to_string(p) + " (holds " +
             shapeStr(ranks[p].shape) + ")";
  }
  if (step.kind == CollectiveKind::Permute)
    for (auto [s, d] : step.pairs)
      out[d] = ranks[s];
  ranks = std::move(out);
  return "";
}

std::string CollectiveSimulator::check(const std::vector<Buffer> &ranks,
                                       const std::vector<double> &global,
                                       const TensorLayout &layout) const {
  int64_t n = mesh.getNumDevices();
  if (static_cast<int64_t>(ranks.size()) != n)
    return "wrong number of ranks";
  for (int64_t p = 0; p < n; ++p) {
    std::vector<int64_t> c = mesh.getCoordinate(p);
    std::vector<int64_t> shape = layout.getLocalShape(mesh, globalShape, c);
    if (ranks[p].shape != shape)
      return "rank " + std::to_string(p) + " holds " +
             shapeStr(ranks[p].shape) + " but " + layout.str(mesh) + " says " +
             shapeStr(shape);
  }
  for (int64_t p = 0; p < n; ++p) {
    std::vector<int64_t> group = mesh.getGroup(p, layout.partialAxes);
    if (group.front() != p)
      continue;
    Buffer value;
    std::vector<const Buffer *> parts;
    for (int64_t g : group)
      parts.push_back(&ranks[g]);
    reduceAll(parts, layout.partialKind, value);
    std::vector<int64_t> c = mesh.getCoordinate(p);
    Buffer expect = block(global, layout.getLocalOffsets(mesh, globalShape, c),
                          layout.getLocalShape(mesh, globalShape, c));
    if (value.data != expect.data)
      return "rank " + std::to_string(p) +
             (layout.isPartial() ? "'s group" : "") +
             " holds the wrong values for " + layout.str(mesh);
  }
  return "";
}

std::string
CollectiveSimulator::simulate(const std::vector<CollectiveStep> &steps,
                              const TensorLayout &from, const TensorLayout &to,
                              std::mt19937 &rng) const {
  std::vector<double> global = makeGlobal(rng);
  std::vector<Buffer> ranks = scatter(global, from, rng);
  const TensorLayout *current = &from;
  for (size_t i = 0; i < steps.size(); ++i) {
    const CollectiveStep &step = steps[i];
    std::string where = "step " + std::to_string(i) + " " + step.str(mesh);
    if (!(step.before == *current))
      return where + ": does not start from " + current->str(mesh);
    std::string err = apply(step, ranks);
    if (err.empty())
      err = check(ranks, global, step.after);
    if (!err.empty())
      return where + ": " + err;
    current = &step.after;
  }
  if (!(*current == to))
    return "plan ends in " + current->str(mesh) + ", not " + to.str(mesh);
  return check(ranks, global, to);
}
