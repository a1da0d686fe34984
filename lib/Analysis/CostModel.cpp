//===- CostModel.cpp - alpha-beta network, compute and memory -------------===//

#include "autoshard/Analysis/CostModel.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <limits>

using namespace autoshard;

//===----------------------------------------------------------------------===//
// ClusterSpec
//===----------------------------------------------------------------------===//

namespace {
/// Reads a positive (or, with `allowZero`, non-negative) number member.
bool readNumber(const llvm::json::Object &obj, llvm::StringRef key,
                llvm::StringRef where, bool allowZero, double &out,
                std::string &error) {
  const llvm::json::Value *v = obj.get(key);
  if (!v)
    return true;
  std::optional<double> num = v->getAsNumber();
  if (!num || *num < 0 || (!allowZero && *num == 0)) {
    error = ("cluster spec: '" + where + key + "' must be a " +
             (allowZero ? "non-negative" : "positive") + " number")
                .str();
    return false;
  }
  out = *num;
  return true;
}

bool checkKeys(const llvm::json::Object &obj,
               std::initializer_list<llvm::StringRef> known,
               llvm::StringRef where, std::string &error) {
  for (const auto &kv : obj) {
    bool found = false;
    for (llvm::StringRef k : known)
      found |= llvm::StringRef(kv.first) == k;
    if (!found) {
      error =
          ("cluster spec: unknown key '" + where + kv.first.str() + "'").str();
      return false;
    }
  }
  return true;
}

bool readLink(const llvm::json::Object &root, llvm::StringRef key,
              LinkSpec &link, std::string &error) {
  const llvm::json::Value *v = root.get(key);
  if (!v)
    return true;
  const llvm::json::Object *obj = v->getAsObject();
  if (!obj) {
    error = ("cluster spec: '" + key + "' must be an object").str();
    return false;
  }
  std::string where = (key + ".").str();
  return checkKeys(*obj, {"bandwidth_gbps", "latency_us"}, where, error) &&
         readNumber(*obj, "bandwidth_gbps", where, /*allowZero=*/false,
                    link.bandwidthGBps, error) &&
         readNumber(*obj, "latency_us", where, /*allowZero=*/true,
                    link.latencyUs, error);
}
} // namespace

bool ClusterSpec::fromJSON(const std::string &text, ClusterSpec &out,
                           std::string &error) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed) {
    error = "cluster spec: invalid JSON: " + llvm::toString(parsed.takeError());
    return false;
  }
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root) {
    error = "cluster spec: expected a JSON object at the top level";
    return false;
  }
  ClusterSpec spec = out;
  if (!checkKeys(*root,
                 {"gpus_per_node", "intra_node", "inter_node", "peak_tflops",
                  "memory_gib"},
                 "", error))
    return false;
  if (const llvm::json::Value *v = root->get("gpus_per_node")) {
    std::optional<int64_t> n = v->getAsInteger();
    if (!n || *n < 1) {
      error = "cluster spec: 'gpus_per_node' must be a positive integer";
      return false;
    }
    spec.gpusPerNode = *n;
  }
  if (!readLink(*root, "intra_node", spec.intraNode, error) ||
      !readLink(*root, "inter_node", spec.interNode, error) ||
      !readNumber(*root, "peak_tflops", "", false, spec.peakTflops, error) ||
      !readNumber(*root, "memory_gib", "", false, spec.memoryGiB, error))
    return false;
  out = spec;
  return true;
}

bool ClusterSpec::fromFile(const std::string &path, ClusterSpec &out,
                           std::string &error) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf) {
    error =
        "cannot read cluster spec '" + path + "': " + buf.getError().message();
    return false;
  }
  if (!fromJSON((*buf)->getBuffer().str(), out, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// CostModel
//===----------------------------------------------------------------------===//

CostModel::CostModel(DeviceMesh meshIn, ClusterSpec clusterIn)
    : mesh(std::move(meshIn)), cluster(clusterIn) {
  int64_t numAxes = mesh.getNumAxes();
  links.resize(numAxes);
  // Minor-most axes are neighbouring devices (row-major positions), so they
  // share a node as long as their product fits in one.
  int64_t span = 1;
  for (int64_t a = numAxes - 1; a >= 0; --a) {
    span *= mesh.getAxisSize(a);
    links[a] =
        span <= cluster.gpusPerNode ? cluster.intraNode : cluster.interNode;
    const MeshAxis &axis = mesh.getAxis(a);
    if (axis.bandwidthGBps > 0)
      links[a].bandwidthGBps = axis.bandwidthGBps;
    if (axis.latencyUs > 0)
      links[a].latencyUs = axis.latencyUs;
  }
}

LinkSpec CostModel::getLink(int64_t axis) const { return links[axis]; }

LinkSpec CostModel::getGroupLink(const std::vector<int64_t> &axes) const {
  if (axes.empty())
    return {std::numeric_limits<double>::infinity(), 0.0};
  LinkSpec slowest = links[axes.front()];
  for (int64_t a : axes) {
    const LinkSpec &l = links[a];
    if (l.bandwidthGBps < slowest.bandwidthGBps ||
        (l.bandwidthGBps == slowest.bandwidthGBps &&
         l.latencyUs > slowest.latencyUs))
      slowest = l;
  }
  return slowest;
}

double CostModel::getTransferTimeUs(const std::vector<int64_t> &axes,
                                    double bytes) const {
  if (axes.empty())
    return 0.0;
  LinkSpec link = getGroupLink(axes);
  // 1 GB/s moves 1e3 bytes per microsecond.
  return link.latencyUs + bytes / (link.bandwidthGBps * 1e3);
}

double
CostModel::getTensorBytesPerDevice(const TensorLayout &layout,
                                   const std::vector<int64_t> &globalShape,
                                   int64_t elemBytes) const {
  double bytes = static_cast<double>(elemBytes);
  for (size_t d = 0; d < globalShape.size(); ++d) {
    int64_t extent = globalShape[d];
    if (extent < 0) // dynamic: unknown, count one element
      continue;
    int64_t largest = 0;
    if (d < layout.dimAxes.size() && layout.hasUnevenDim(d)) {
      for (int64_t s : layout.unevenSizes[d])
        largest = std::max(largest, s);
    } else if (d < layout.dimAxes.size()) {
      int64_t n = layout.getNumShards(mesh, d);
      largest = (extent + n - 1) / n;
    } else {
      largest = extent;
    }
    bytes *= static_cast<double>(largest);
  }
  return bytes;
}

namespace {
/// Mesh axes on which the source and target of some pair differ.
std::vector<int64_t> getPermuteAxes(const DeviceMesh &mesh,
                                    const CollectiveStep &step) {
  std::vector<bool> differs(mesh.getNumAxes(), false);
  for (auto [src, dst] : step.pairs) {
    std::vector<int64_t> a = mesh.getCoordinate(src),
                         b = mesh.getCoordinate(dst);
    for (int64_t i = 0; i < mesh.getNumAxes(); ++i)
      differs[i] = differs[i] || a[i] != b[i];
  }
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < mesh.getNumAxes(); ++i)
    if (differs[i])
      axes.push_back(i);
  return axes;
}
} // namespace

double CostModel::getStepBytes(const CollectiveStep &step,
                               const std::vector<int64_t> &globalShape,
                               int64_t elemBytes) const {
  double n = static_cast<double>(mesh.getGroupSize(step.axes));
  double frac = n > 0 ? (n - 1) / n : 0.0;
  switch (step.kind) {
  case CollectiveKind::AllSlice:
  case CollectiveKind::MakePartial:
    return 0.0;
  case CollectiveKind::AllReduce:
    return 2 * frac *
           getTensorBytesPerDevice(step.before, globalShape, elemBytes);
  case CollectiveKind::AllGather:
    return frac * getTensorBytesPerDevice(step.after, globalShape, elemBytes);
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll:
    return frac * getTensorBytesPerDevice(step.before, globalShape, elemBytes);
  case CollectiveKind::Permute:
    return step.pairs.empty()
               ? 0.0
               : getTensorBytesPerDevice(step.before, globalShape, elemBytes);
  }
  return 0.0;
}

double CostModel::getStepTimeUs(const CollectiveStep &step,
                                const std::vector<int64_t> &globalShape,
                                int64_t elemBytes) const {
  if (step.kind == CollectiveKind::AllSlice ||
      step.kind == CollectiveKind::MakePartial)
    return 0.0;
  double bytes = getStepBytes(step, globalShape, elemBytes);
  if (step.kind == CollectiveKind::Permute) {
    if (step.pairs.empty())
      return 0.0;
    return getTransferTimeUs(
        step.axes.empty() ? getPermuteAxes(mesh, step) : step.axes, bytes);
  }
  // A group of one device (size-1 axes) exchanges nothing.
  if (mesh.getGroupSize(step.axes) <= 1)
    return 0.0;
  return getTransferTimeUs(step.axes, bytes);
}

std::optional<double>
CostModel::getHaloTimeUs(const TensorLayout &from, const TensorLayout &to,
                         const std::vector<int64_t> &globalShape,
                         int64_t elemBytes, const std::vector<HaloDim> &dims,
                         double *bytesOut) const {
  int64_t rank = static_cast<int64_t>(globalShape.size());
  if (from.isPartial() || to.isPartial() || from.getRank() != rank ||
      to.getRank() != rank || !from.unevenSizes.empty() ||
      !to.unevenSizes.empty())
    return std::nullopt;
  auto haloDim = [&](int64_t d) -> const HaloDim * {
    for (const HaloDim &h : dims)
      if (h.dim == d)
        return &h;
    return nullptr;
  };
  // Local extents (even splits); every other dim as it was.
  std::vector<int64_t> local(globalShape);
  bool anySplit = false;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = from.getNumShards(mesh, d);
    if (globalShape[d] % n)
      return std::nullopt;
    local[d] = globalShape[d] / n;
    const HaloDim *h = haloDim(d);
    if (!h || from.dimAxes[d].empty()) {
      if (from.dimAxes[d] != to.dimAxes[d])
        return std::nullopt;
      continue;
    }
    if (!to.dimAxes[d].empty())
      return std::nullopt;
    anySplit = true;
  }
  if (!anySplit)
    return std::nullopt;
  double time = 0.0, bytes = 0.0;
  for (const HaloDim &h : dims) {
    if (from.dimAxes[h.dim].empty())
      continue;
    std::vector<int64_t> axes(from.dimAxes[h.dim].begin(),
                              from.dimAxes[h.dim].end());
    int64_t n = from.getNumShards(mesh, h.dim);
    if (h.outRows % n)
      return std::nullopt;
    int64_t outLocal = h.outRows / n, rows = local[h.dim];
    int64_t lo = h.padLow;
    int64_t hi = (outLocal - 1) * h.stride + h.span - lo - rows;
    if (rows != outLocal * h.stride || lo > rows || hi > rows || hi > h.padHigh)
      return std::nullopt;
    double rowBytes = static_cast<double>(elemBytes);
    for (int64_t d = 0; d < rank; ++d)
      if (d != h.dim)
        rowBytes *= static_cast<double>(local[d]);
    for (int64_t sent : {lo, hi}) {
      if (sent <= 0)
        continue;
      bytes += sent * rowBytes;
      time += getTransferTimeUs(axes, sent * rowBytes);
    }
    // The next dim's exchange carries this one's halo rows too (corners).
    local[h.dim] = rows + std::max<int64_t>(lo, 0) + std::max<int64_t>(hi, 0);
  }
  if (bytesOut)
    *bytesOut = bytes;
  return time;
}

double CostModel::getComputeTimeUs(double flops) const {
  // peakTflops * 1e12 FLOP/s = peakTflops * 1e6 FLOP/us.
  return flops / (cluster.peakTflops * 1e6);
}
