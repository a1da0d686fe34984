//===- CostModelTest.cpp - alpha-beta formulas and cluster files ----------===//

#include "autoshard/Analysis/CostModel.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <fstream>

using namespace autoshard;

namespace {

DeviceMesh makeMesh(std::vector<std::pair<std::string, int64_t>> axes) {
  std::vector<MeshAxis> out;
  for (auto &[name, size] : axes)
    out.push_back(MeshAxis{name, size, 0.0, 0.0});
  return DeviceMesh(out);
}

CollectiveStep makeStep(CollectiveKind kind, std::vector<int64_t> axes,
                        TensorLayout before, TensorLayout after,
                        int64_t dim = -1) {
  CollectiveStep s;
  s.kind = kind;
  s.axes = std::move(axes);
  s.before = std::move(before);
  s.after = std::move(after);
  s.dim = dim;
  return s;
}

TensorLayout layout(std::vector<std::vector<int64_t>> dims,
                    std::vector<int64_t> partial = {}) {
  TensorLayout l;
  for (const std::vector<int64_t> &axes : dims)
    l.dimAxes.emplace_back(axes.begin(), axes.end());
  l.partialAxes.assign(partial.begin(), partial.end());
  return l;
}

const std::vector<int64_t> kShape = {1024, 1024};
constexpr double kBytes = 1024.0 * 1024.0 * 4.0; // f32 [1024, 1024]

TEST(CostModel, DefaultLinksFillNodesFromTheMinorAxis) {
  CostModel twoNodes(makeMesh({{"node", 2}, {"gpu", 8}}));
  EXPECT_EQ(twoNodes.getLink(1).bandwidthGBps, 150.0); // 8 GPUs: one node
  EXPECT_EQ(twoNodes.getLink(1).latencyUs, 2.0);
  EXPECT_EQ(twoNodes.getLink(0).bandwidthGBps, 25.0); // 16 GPUs: two nodes
  EXPECT_EQ(twoNodes.getLink(0).latencyUs, 10.0);

  ClusterSpec four;
  four.gpusPerNode = 4;
  CostModel m(makeMesh({{"a", 4}, {"b", 2}, {"c", 2}}), four);
  EXPECT_EQ(m.getLink(2).bandwidthGBps, 150.0); // span 2
  EXPECT_EQ(m.getLink(1).bandwidthGBps, 150.0); // span 4
  EXPECT_EQ(m.getLink(0).bandwidthGBps, 25.0);  // span 16

  CostModel small(makeMesh({{"dp", 2}, {"mp", 4}}));
  EXPECT_EQ(small.getLink(0).bandwidthGBps, 150.0); // 8 fits one node
}

TEST(CostModel, MeshLinkFiguresOverrideFieldByField) {
  DeviceMesh mesh(
      {MeshAxis{"node", 2, 40.0, 0.0}, MeshAxis{"gpu", 4, 0.0, 1.0}});
  CostModel m(mesh);
  EXPECT_EQ(m.getLink(0).bandwidthGBps, 40.0);
  EXPECT_EQ(m.getLink(0).latencyUs, 2.0); // default intra-node latency kept
  EXPECT_EQ(m.getLink(1).bandwidthGBps, 150.0);
  EXPECT_EQ(m.getLink(1).latencyUs, 1.0);
  // The slowest link of a group is the one with the lowest bandwidth.
  LinkSpec g = m.getGroupLink({0, 1});
  EXPECT_EQ(g.bandwidthGBps, 40.0);
  EXPECT_EQ(g.latencyUs, 2.0);
}

TEST(CostModel, AllReduceFormula) {
  CostModel m(makeMesh({{"node", 2}, {"gpu", 8}}));
  auto s = makeStep(CollectiveKind::AllReduce, {1}, layout({{}, {}}, {1}),
                    layout({{}, {}}));
  // 2 (n-1)/n B = 2 * 7/8 * 4 MiB.
  EXPECT_DOUBLE_EQ(m.getStepBytes(s, kShape, 4), 7340032.0);
  // alpha + bytes / beta, 150 GB/s = 150e3 bytes/us.
  EXPECT_DOUBLE_EQ(m.getStepTimeUs(s, kShape, 4), 2.0 + 7340032.0 / 150e3);
  // Over both axes the inter-node link carries all of it.
  auto both = makeStep(CollectiveKind::AllReduce, {0, 1},
                       layout({{}, {}}, {0, 1}), layout({{}, {}}));
  EXPECT_DOUBLE_EQ(m.getStepTimeUs(both, kShape, 4),
                   10.0 + 2.0 * 15.0 / 16.0 * kBytes / 25e3);
}

TEST(CostModel, GatherScatterAllToAllPermuteFormulas) {
  CostModel m(makeMesh({{"node", 2}, {"gpu", 8}}));
  // all_gather over node: B is the gathered (full) tensor.
  auto ag = makeStep(CollectiveKind::AllGather, {0}, layout({{0}, {}}),
                     layout({{}, {}}), 0);
  EXPECT_DOUBLE_EQ(m.getStepBytes(ag, kShape, 4), 2097152.0);
  EXPECT_DOUBLE_EQ(m.getStepTimeUs(ag, kShape, 4), 10.0 + 2097152.0 / 25e3);
  // reduce_scatter over gpu: B is the full input.
  auto rs = makeStep(CollectiveKind::ReduceScatter, {1}, layout({{}, {}}, {1}),
                     layout({{}, {1}}), 1);
  EXPECT_DOUBLE_EQ(m.getStepBytes(rs, kShape, 4), 3670016.0);
  EXPECT_DOUBLE_EQ(m.getStepTimeUs(rs, kShape, 4), 2.0 + 3670016.0 / 150e3);
  // all_to_all over gpu: B is the local shard (1/8 of the tensor).
  auto a2a = makeStep(CollectiveKind::AllToAll, {1}, layout({{1}, {}}),
                      layout({{}, {1}}), 1);
  a2a.srcDim = 0;
  EXPECT_DOUBLE_EQ(m.getStepBytes(a2a, kShape, 4), 458752.0);
  EXPECT_DOUBLE_EQ(m.getStepTimeUs(a2a, kShape, 4), 2.0 + 458752.0 / 150e3);
  // permute across nodes: the whole local shard, once.
  auto perm = makeStep(CollectiveKind::Permute, {0}, layout({{0}, {}}),
                       layout({{0}, {}}));
  perm.pairs = {{0, 8}, {8, 0}};
  EXPECT_DOUBLE_EQ(m.getStepBytes(perm, kShape, 4), 2097152.0);
  EXPECT_DOUBLE_EQ(m.getStepTimeUs(perm, kShape, 4), 10.0 + 2097152.0 / 25e3);
  // Without explicit axes a permute is priced on the axes its pairs cross.
  perm.axes.clear();
  perm.pairs = {{0, 1}, {1, 0}};
  EXPECT_DOUBLE_EQ(m.getStepTimeUs(perm, kShape, 4), 2.0 + 2097152.0 / 150e3);
  // Local steps are free.
  auto slice = makeStep(CollectiveKind::AllSlice, {0}, layout({{}, {}}),
                        layout({{0}, {}}), 0);
  EXPECT_EQ(m.getStepTimeUs(slice, kShape, 4), 0.0);
  EXPECT_EQ(m.getStepBytes(slice, kShape, 4), 0.0);
}

TEST(CostModel, SizeOneGroupsAreFree) {
  CostModel m(makeMesh({{"one", 1}, {"gpu", 4}}));
  auto ar =
      makeStep(CollectiveKind::AllReduce, {0}, layout({{}}, {0}), layout({{}}));
  EXPECT_EQ(m.getStepTimeUs(ar, {64}, 4), 0.0);
}

TEST(CostModel, ComputeAndMemory) {
  CostModel m(makeMesh({{"x", 2}}));
  EXPECT_DOUBLE_EQ(m.getComputeTimeUs(3e8), 1.0); // 300 TFLOP/s
  TensorLayout uneven = layout({{0}, {}});
  uneven.unevenSizes = {{2, 6}, {}};
  EXPECT_DOUBLE_EQ(m.getTensorBytesPerDevice(uneven, {8, 4}, 4), 6 * 4 * 4);
  EXPECT_DOUBLE_EQ(m.getTensorBytesPerDevice(layout({{}, {0}}), {8, 4}, 2),
                   8 * 2 * 2);
}

TEST(ClusterSpec, ParsesAllKeys) {
  ClusterSpec spec;
  std::string error;
  ASSERT_TRUE(ClusterSpec::fromJSON(
      R"({"gpus_per_node": 4,
          "intra_node": {"bandwidth_gbps": 300, "latency_us": 1.5},
          "inter_node": {"bandwidth_gbps": 50, "latency_us": 8},
          "peak_tflops": 100, "memory_gib": 40})",
      spec, error))
      << error;
  EXPECT_EQ(spec.gpusPerNode, 4);
  EXPECT_EQ(spec.intraNode.bandwidthGBps, 300.0);
  EXPECT_EQ(spec.intraNode.latencyUs, 1.5);
  EXPECT_EQ(spec.interNode.bandwidthGBps, 50.0);
  EXPECT_EQ(spec.interNode.latencyUs, 8.0);
  EXPECT_EQ(spec.peakTflops, 100.0);
  EXPECT_EQ(spec.memoryGiB, 40.0);
  // The cost model picks them up.
  CostModel m(makeMesh({{"node", 2}, {"gpu", 4}}), spec);
  EXPECT_EQ(m.getLink(1).bandwidthGBps, 300.0);
  EXPECT_EQ(m.getLink(0).bandwidthGBps, 50.0);
  EXPECT_DOUBLE_EQ(m.getComputeTimeUs(1e8), 1.0);
}

TEST(ClusterSpec, MissingKeysKeepDefaults) {
  ClusterSpec spec;
  std::string error;
  ASSERT_TRUE(ClusterSpec::fromJSON(R"({"inter_node": {"latency_us": 20}})",
                                    spec, error));
  EXPECT_EQ(spec.gpusPerNode, 8);
  EXPECT_EQ(spec.interNode.latencyUs, 20.0);
  EXPECT_EQ(spec.interNode.bandwidthGBps, 25.0);
  EXPECT_EQ(spec.intraNode.bandwidthGBps, 150.0);
}

TEST(ClusterSpec, ErrorsAreOneLine) {
  struct Case {
    const char *text;
    const char *message;
  } cases[] = {
      {R"({"gpus_per_node": 8,)", "invalid JSON"},
      {R"([1, 2])", "expected a JSON object"},
      {R"({"gpus_per_nodes": 8})", "unknown key 'gpus_per_nodes'"},
      {R"({"gpus_per_node": 2.5})",
       "'gpus_per_node' must be a positive integer"},
      {R"({"gpus_per_node": 0})", "'gpus_per_node' must be a positive integer"},
      {R"({"intra_node": 150})", "'intra_node' must be an object"},
      {R"({"intra_node": {"bandwidth_gbps": -1}})",
       "'intra_node.bandwidth_gbps' must be a positive number"},
      {R"({"inter_node": {"latency_us": "fast"}})",
       "'inter_node.latency_us' must be a non-negative number"},
      {R"({"inter_node": {"bw": 1}})", "unknown key 'inter_node.bw'"},
      {R"({"peak_tflops": 0})", "'peak_tflops' must be a positive number"},
  };
  for (const Case &c : cases) {
    ClusterSpec spec;
    spec.gpusPerNode = 3;
    std::string error;
    EXPECT_FALSE(ClusterSpec::fromJSON(c.text, spec, error)) << c.text;
    EXPECT_NE(error.find(c.message), std::string::npos)
        << c.text << " gave: " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_EQ(spec.gpusPerNode, 3) << "a failed parse must not change out";
  }
}

TEST(ClusterSpec, FromFile) {
  std::string path = ::testing::TempDir() + "autoshard_cluster_test.json";
  {
    std::ofstream f(path);
    f << R"({"gpus_per_node": 2})";
  }
  ClusterSpec spec;
  std::string error;
  EXPECT_TRUE(ClusterSpec::fromFile(path, spec, error)) << error;
  EXPECT_EQ(spec.gpusPerNode, 2);
  std::remove(path.c_str());
  EXPECT_FALSE(ClusterSpec::fromFile(path, spec, error));
  EXPECT_NE(error.find("cannot read cluster spec"), std::string::npos) << error;
}

} // namespace
