//===- CostModel.h - alpha-beta network, compute and memory -----*- C++ -*-===//
//
// Costs in microseconds. Each mesh axis has a link (latency alpha, bandwidth
// beta); a collective over a group of n devices moving B bytes per device costs
//   all_reduce                  alpha + 2(n-1)/n * B / beta
//   all_gather, reduce_scatter  alpha +  (n-1)/n * B / beta   (B = full result)
//   all_to_all                  alpha +  (n-1)/n * B / beta
//   permute / send-recv         alpha +            B / beta
// Over several axes the slowest axis' link is used. Compute is FLOPs at a
// per-device peak; memory is the per-device bytes of every live tensor.
//
// Defaults describe a GPU cluster: the minor-most axes filling one node
// (gpusPerNode devices) are intra-node (NVLink-class), the rest inter-node.
// A mesh's own link figures (#dist.mesh bandwidth/latency) override the
// defaults axis by axis; a cluster file overrides the defaults.
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_ANALYSIS_COSTMODEL_H
#define AUTOSHARD_ANALYSIS_COSTMODEL_H

#include "autoshard/Analysis/Collective.h"
#include "autoshard/Support/DeviceMesh.h"

#include <optional>
#include <string>
#include <vector>

namespace autoshard {

struct LinkSpec {
  double bandwidthGBps = 0.0;
  double latencyUs = 0.0;
};

/// The machine the cost model describes; loadable from a small JSON file:
/// {"gpus_per_node": 8,
///  "intra_node": {"bandwidth_gbps": 150, "latency_us": 2},
///  "inter_node": {"bandwidth_gbps": 25, "latency_us": 10},
///  "peak_tflops": 300, "memory_gib": 80}
struct ClusterSpec {
  int64_t gpusPerNode = 8;
  LinkSpec intraNode{150.0, 2.0};
  LinkSpec interNode{25.0, 10.0};
  double peakTflops = 300.0;
  double memoryGiB = 80.0;

  /// Parses the JSON above (missing keys keep their defaults). On failure
  /// returns false and sets `error` to a one-line message.
  static bool fromJSON(const std::string &text, ClusterSpec &out,
                       std::string &error);
  static bool fromFile(const std::string &path, ClusterSpec &out,
                       std::string &error);
};

/// One spatial dim of a window op's (conv, pool) unpadded input x, as the
/// halo exchange of --dist-partition (lib/Partition/Halo.cpp) reads it:
/// output row o reads the padded rows [o * stride, o * stride + span), the
/// padding being padLow rows before x and padHigh after it.
struct HaloDim {
  int64_t dim = -1;
  int64_t stride = 1, span = 1;
  int64_t padLow = 0, padHigh = 0;
  /// The op's output rows (global).
  int64_t outRows = 0;
};

class CostModel {
public:
  CostModel(DeviceMesh mesh, ClusterSpec cluster = {});

  const DeviceMesh &getMesh() const { return mesh; }
  const ClusterSpec &getCluster() const { return cluster; }
  /// The link used for axis `axis` (mesh figures, else cluster defaults).
  LinkSpec getLink(int64_t axis) const;
  /// The link of a collective over `axes`: the slowest one (lowest bandwidth;
  /// on a tie the higher latency). Empty `axes` (a local step) gives an
  /// infinitely fast link with zero latency.
  LinkSpec getGroupLink(const std::vector<int64_t> &axes) const;
  /// alpha + bytes / beta for a collective over `axes` that moves `bytes`
  /// (already scaled as in getStepBytes); 0 when `axes` is empty.
  double getTransferTimeUs(const std::vector<int64_t> &axes,
                           double bytes) const;

  /// Bytes each device sends for `step` on a tensor of `globalShape` with
  /// elements of `elemBytes` bytes (the alpha-beta "B" term, already scaled
  /// by the (n-1)/n or 2(n-1)/n factor).
  double getStepBytes(const CollectiveStep &step,
                      const std::vector<int64_t> &globalShape,
                      int64_t elemBytes) const;
  /// Time of one step, in microseconds.
  double getStepTimeUs(const CollectiveStep &step,
                       const std::vector<int64_t> &globalShape,
                       int64_t elemBytes) const;
  /// Time of `flops` floating-point operations on one device.
  double getComputeTimeUs(double flops) const;
  /// The time of the halo exchange that stands for the reshard `from` ->
  /// `to` of a window op's input x of `globalShape` when the op's output
  /// rows are split like x's: `from` splits some of `dims` over axes A
  /// (evenly, each device holding its output rows times the stride), `to`
  /// has them whole and is `from` elsewhere. Each split dim costs a permute
  /// (alpha + bytes / beta over A) per direction that sends rows: the last
  /// padLow rows to the next device, the first span - stride - padLow to the
  /// previous one (H first, then W on the H-extended slab, as the
  /// partitioner does). std::nullopt when the reshard is not such a gather
  /// (then it is priced as the planner's collectives).
  std::optional<double> getHaloTimeUs(const TensorLayout &from,
                                      const TensorLayout &to,
                                      const std::vector<int64_t> &globalShape,
                                      int64_t elemBytes,
                                      const std::vector<HaloDim> &dims,
                                      double *bytesOut = nullptr) const;
  /// Bytes one device holds of a tensor with this layout (the largest shard).
  double getTensorBytesPerDevice(const TensorLayout &layout,
                                 const std::vector<int64_t> &globalShape,
                                 int64_t elemBytes) const;

private:
  DeviceMesh mesh;
  ClusterSpec cluster;
  std::vector<LinkSpec> links;
};

} // namespace autoshard

#endif // AUTOSHARD_ANALYSIS_COSTMODEL_H
