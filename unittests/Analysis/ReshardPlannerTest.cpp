//===- ReshardPlannerTest.cpp - Chosen plans on hand-picked reshards ------===//

#include "CollectiveSimulator.h"
#include "LayoutEnumeration.h"

#include "autoshard/Analysis/ReshardPlanner.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <tuple>

using namespace autoshard;

namespace {

DeviceMesh makeMesh(std::vector<std::pair<std::string, int64_t>> axes) {
  std::vector<MeshAxis> out;
  for (auto &[name, size] : axes)
    out.push_back(MeshAxis{name, size, 0.0, 0.0});
  return DeviceMesh(out);
}

TensorLayout layout(std::vector<std::vector<int64_t>> dims,
                    std::vector<int64_t> partial = {},
                    ReductionKind kind = ReductionKind::Sum) {
  TensorLayout l;
  for (const std::vector<int64_t> &axes : dims)
    l.dimAxes.emplace_back(axes.begin(), axes.end());
  l.partialAxes.assign(partial.begin(), partial.end());
  l.partialKind = kind;
  return l;
}

std::vector<CollectiveKind> kindsOf(const ReshardPlan &plan) {
  std::vector<CollectiveKind> out;
  for (const CollectiveStep &s : plan.steps)
    out.push_back(s.kind);
  return out;
}

std::string describe(const DeviceMesh &mesh, const ReshardPlan &plan) {
  std::string s;
  for (const CollectiveStep &step : plan.steps)
    s += "\n  " + step.str(mesh);
  return s;
}

/// Plans and checks the plan on real data; returns the plan.
ReshardPlan planAndRun(const CostModel &model,
                       const std::vector<int64_t> &shape,
                       const TensorLayout &from, const TensorLayout &to,
                       PlannerOptions options = {}) {
  std::string error;
  auto plan = planReshard(model, shape, 4, from, to, options, error);
  EXPECT_TRUE(plan.has_value()) << error;
  if (!plan)
    return {};
  sim::CollectiveSimulator simulator(model.getMesh(), shape);
  std::mt19937 rng(7);
  std::string err = simulator.simulate(plan->steps, from, to, rng);
  EXPECT_EQ(err, "") << describe(model.getMesh(), *plan);
  double time = 0, bytes = 0;
  for (const CollectiveStep &s : plan->steps) {
    time += model.getStepTimeUs(s, shape, 4);
    bytes += model.getStepBytes(s, shape, 4);
  }
  EXPECT_DOUBLE_EQ(plan->timeUs, time);
  EXPECT_DOUBLE_EQ(plan->bytesPerDevice, bytes);
  return *plan;
}

using K = CollectiveKind;

TEST(ReshardPlanner, PartialToReplicatedIsAllReduce) {
  CostModel model(makeMesh({{"dp", 2}, {"mp", 4}}));
  ReshardPlan plan =
      planAndRun(model, {64, 64}, layout({{0}, {}}, {1}), layout({{0}, {}}));
  EXPECT_EQ(kindsOf(plan), std::vector<K>{K::AllReduce});
  EXPECT_EQ(plan.steps[0].axes, std::vector<int64_t>{1});
  // 2 * 3/4 of the [32, 64] f32 shard.
  EXPECT_DOUBLE_EQ(plan.bytesPerDevice, 2 * 0.75 * 32 * 64 * 4);
}

TEST(ReshardPlanner, PartialToSplitIsReduceScatter) {
  CostModel model(makeMesh({{"dp", 2}, {"mp", 4}}));
  ReshardPlan plan =
      planAndRun(model, {64, 64}, layout({{0}, {}}, {1}), layout({{0}, {1}}));
  EXPECT_EQ(kindsOf(plan), std::vector<K>{K::ReduceScatter});
  EXPECT_EQ(plan.steps[0].dim, 1);
}

TEST(ReshardPlanner, ReplicatedToSplitIsOneLocalSlice) {
  CostModel model(makeMesh({{"x", 2}, {"y", 2}, {"z", 2}}));
  ReshardPlan plan =
      planAndRun(model, {8, 8}, layout({{}, {}}), layout({{2, 0}, {1}}));
  ASSERT_EQ(kindsOf(plan), (std::vector<K>{K::AllSlice, K::AllSlice}));
  const CollectiveStep &dim0 =
      plan.steps[0].dim == 0 ? plan.steps[0] : plan.steps[1];
  EXPECT_EQ(dim0.axes, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(plan.timeUs, 0.0);
}

TEST(ReshardPlanner, AllToAllOnlyWhenEnabled) {
  CostModel model(makeMesh({{"x", 4}}));
  TensorLayout from = layout({{0}, {}}), to = layout({{}, {0}});
  ReshardPlan off = planAndRun(model, {64, 64}, from, to);
  EXPECT_EQ(kindsOf(off), (std::vector<K>{K::AllGather, K::AllSlice}));
  PlannerOptions on;
  on.enableAllToAll = true;
  ReshardPlan with = planAndRun(model, {64, 64}, from, to, on);
  EXPECT_EQ(kindsOf(with), std::vector<K>{K::AllToAll});
  EXPECT_EQ(with.steps[0].srcDim, 0);
  EXPECT_EQ(with.steps[0].dim, 1);
  EXPECT_LT(with.timeUs, off.timeUs);
}

TEST(ReshardPlanner, AxisSwapOnTwoByTwo) {
  // Upstream shard-partition gets this one wrong (anchors.md).
  CostModel model(makeMesh({{"dp", 2}, {"mp", 2}}));
  TensorLayout from = layout({{0}, {1}}), to = layout({{1}, {0}});
  ReshardPlan plan = planAndRun(model, {64, 64}, from, to);
  ASSERT_EQ(kindsOf(plan), std::vector<K>{K::Permute});
  // (0,1) and (1,0) exchange their blocks; the diagonal stays.
  std::vector<std::pair<int64_t, int64_t>> expected = {{2, 1}, {1, 2}};
  EXPECT_EQ(plan.steps[0].pairs, expected);
  EXPECT_EQ(plan.steps[0].axes, (std::vector<int64_t>{0, 1}));
  // One point-to-point shard move: alpha + 32*32*4 bytes / beta.
  EXPECT_DOUBLE_EQ(plan.timeUs, 2.0 + 32 * 32 * 4 / 150e3);
}

TEST(ReshardPlanner, GatherSliceWhenPermuteIsSlower) {
  // With a very slow link on both axes but latency-dominated costs, a swap
  // still must be correct; on a mesh where a permute is impossible (axes of
  // different sizes) the planner falls back to collectives.
  CostModel model(makeMesh({{"a", 2}, {"b", 4}}));
  TensorLayout from = layout({{0}, {1}}), to = layout({{1}, {0}});
  ReshardPlan plan = planAndRun(model, {16, 16}, from, to);
  EXPECT_GE(plan.steps.size(), 2u);
  PlannerOptions on;
  on.enableAllToAll = true;
  planAndRun(model, {16, 16}, from, to, on);
}

TEST(ReshardPlanner, HierarchicalAllReduceAcrossNodes) {
  // Reducing over node and gpu at once sends everything over the slow
  // inter-node link; reduce_scatter inside the node, all_reduce the 1/8
  // shard across nodes, all_gather inside the node is much cheaper.
  CostModel model(makeMesh({{"node", 2}, {"gpu", 8}}));
  ReshardPlan plan =
      planAndRun(model, {256, 256}, layout({{}, {}}, {0, 1}), layout({{}, {}}));
  EXPECT_EQ(kindsOf(plan),
            (std::vector<K>{K::ReduceScatter, K::AllReduce, K::AllGather}));
  EXPECT_EQ(plan.steps[0].axes, std::vector<int64_t>{1});
  EXPECT_EQ(plan.steps[1].axes, std::vector<int64_t>{0});
  double direct = 10.0 + 2.0 * 15 / 16 * 262144.0 / 25e3;
  EXPECT_LT(plan.timeUs * 1.5, direct);
}

TEST(ReshardPlanner, SeveralAxesOnOneDimAndNonSuffixAxes) {
  CostModel model(makeMesh({{"x", 2}, {"y", 2}, {"z", 2}}));
  // Drop the major axis x of [x, y]: it is not a suffix, so gather y then x
  // and re-slice y, or gather all at once and slice y.
  ReshardPlan plan =
      planAndRun(model, {8, 8}, layout({{0, 1}, {}}), layout({{1}, {}}));
  EXPECT_FALSE(plan.steps.empty());
  // Reverse the order of two axes on one dim.
  planAndRun(model, {8, 8}, layout({{0, 1}, {2}}), layout({{1, 0}, {2}}));
  planAndRun(model, {8, 8}, layout({{0, 1, 2}, {}}), layout({{2}, {0, 1}}));
}

TEST(ReshardPlanner, UnevenSplits) {
  CostModel model(makeMesh({{"x", 2}, {"y", 2}}));
  TensorLayout uneven = layout({{0}, {}});
  uneven.unevenSizes = {{1, 5}, {}};
  // Gathering an uneven dim gives the replicated tensor.
  ReshardPlan gather = planAndRun(model, {6, 4}, uneven, layout({{}, {}}));
  EXPECT_EQ(kindsOf(gather), std::vector<K>{K::AllGather});
  // Slicing into the target's uneven sizes.
  ReshardPlan slice = planAndRun(model, {6, 4}, layout({{}, {}}), uneven);
  EXPECT_EQ(kindsOf(slice), std::vector<K>{K::AllSlice});
  // Uneven over two axes, reached by slicing x then y.
  TensorLayout four = layout({{0, 1}, {}});
  four.unevenSizes = {{1, 0, 2, 3}, {}};
  planAndRun(model, {6, 4}, uneven, four);
  planAndRun(model, {6, 4}, four, layout({{1}, {0}}));
  // Partial into uneven.
  TensorLayout partial = layout({{}, {}}, {0});
  ReshardPlan rs = planAndRun(model, {6, 4}, partial, uneven);
  EXPECT_EQ(kindsOf(rs), std::vector<K>{K::ReduceScatter});
}

TEST(ReshardPlanner, MakePartialAndReductionKinds) {
  CostModel model(makeMesh({{"x", 2}, {"y", 2}}));
  ReshardPlan mk =
      planAndRun(model, {4, 4}, layout({{}, {}}), layout({{}, {}}, {0, 1}));
  EXPECT_EQ(kindsOf(mk), std::vector<K>{K::MakePartial});
  EXPECT_EQ(mk.steps[0].axes, (std::vector<int64_t>{0, 1}));
  // A pending sum cannot become a pending max without reducing first.
  ReshardPlan kinds = planAndRun(model, {4, 4}, layout({{}, {}}, {0}),
                                 layout({{}, {}}, {0}, ReductionKind::Max));
  EXPECT_EQ(kinds.steps.front().kind, K::AllReduce);
  EXPECT_EQ(kinds.steps.back().kind, K::MakePartial);
  EXPECT_EQ(kinds.steps.back().reduction, ReductionKind::Max);
  planAndRun(model, {4, 4}, layout({{1}, {}}, {0}, ReductionKind::Product),
             layout({{0}, {}}, {1}, ReductionKind::Product));
  planAndRun(model, {4, 4}, layout({{}, {}}, {0, 1}, ReductionKind::Min),
             layout({{0}, {}}, {1}, ReductionKind::Min));
}

TEST(ReshardPlanner, IdenticalLayoutsNeedNoStep) {
  CostModel model(makeMesh({{"x", 2}}));
  std::string error;
  auto plan =
      planReshard(model, {4}, 4, layout({{0}}), layout({{0}}), {}, error);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->steps.empty());
  EXPECT_EQ(plan->timeUs, 0.0);
}

TEST(ReshardPlanner, InvalidLayoutsAreErrors) {
  CostModel model(makeMesh({{"x", 4}}));
  std::string error;
  EXPECT_FALSE(
      planReshard(model, {6}, 4, layout({{}}), layout({{0}}), {}, error));
  EXPECT_NE(error.find("invalid target layout"), std::string::npos) << error;
  EXPECT_NE(error.find("not divisible"), std::string::npos) << error;
  EXPECT_FALSE(
      planReshard(model, {8}, 4, layout({{3}}), layout({{0}}), {}, error));
  EXPECT_NE(error.find("invalid source layout"), std::string::npos) << error;
  EXPECT_FALSE(
      planReshard(model, {8, 8}, 4, layout({{0}}), layout({{0}}), {}, error));
  EXPECT_NE(error.find("rank"), std::string::npos) << error;
  EXPECT_FALSE(
      planReshard(model, {-1}, 4, layout({{}}), layout({{0}}), {}, error));
  EXPECT_NE(error.find("dynamic"), std::string::npos) << error;

  // costUs by ids reports the same errors; registering never fails.
  ReshardPlanner planner(model);
  auto byId = [&](const std::vector<int64_t> &shape, const TensorLayout &from,
                  const TensorLayout &to, int64_t elemBytes = 4) {
    error.clear();
    uint32_t f = planner.layoutId(shape, from);
    return planner.costUs(shape, elemBytes, f, planner.layoutId(shape, to),
                          error);
  };
  EXPECT_FALSE(byId({-1}, layout({{}}), layout({{0}})));
  EXPECT_NE(error.find("dynamic"), std::string::npos) << error;
  EXPECT_FALSE(byId({8}, layout({{3}}), layout({{0}})));
  EXPECT_NE(error.find("invalid source layout"), std::string::npos) << error;
  EXPECT_FALSE(byId({8}, layout({{}}), layout({{0}}), 0));
  EXPECT_NE(error.find("element size"), std::string::npos) << error;
  auto ok = byId({8}, layout({{0}}), layout({{}}));
  ASSERT_TRUE(ok) << error;
  EXPECT_GT(*ok, 0.0);
}

TEST(ReshardPlanner, DeterministicAndMemoised) {
  CostModel model(makeMesh({{"x", 2}, {"y", 2}, {"z", 2}}));
  ReshardPlanner planner(model);
  TensorLayout from = layout({{0, 2}, {}}, {1}), to = layout({{1}, {2, 0}});
  std::string error;
  auto a = planner.plan({8, 8}, 4, from, to, error);
  auto b = planner.plan({8, 8}, 4, from, to, error);
  auto c = planReshard(model, {8, 8}, 4, from, to, {}, error);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(planner.getNumCacheHits(), 1u);
  EXPECT_EQ(planner.getNumCacheEntries(), 1u);
  ASSERT_EQ(a->steps.size(), c->steps.size());
  for (size_t i = 0; i < a->steps.size(); ++i)
    EXPECT_EQ(a->steps[i].str(model.getMesh()),
              c->steps[i].str(model.getMesh()));
  EXPECT_EQ(a->timeUs, c->timeUs);
  // Errors are memoised too.
  EXPECT_FALSE(planner.plan({7, 8}, 4, from, to, error));
  EXPECT_FALSE(error.empty());
}

using testutil::allLayouts;

struct CostConfig {
  std::vector<MeshAxis> axes;
  std::vector<int64_t> shape;
  std::vector<ReductionKind> kinds;
  /// Check one pair in `sample` (deterministically chosen).
  int64_t sample = 1;
};

TEST(ReshardPlanner, CostUsEqualsPlanTimeExactly) {
  const ReductionKind Sum = ReductionKind::Sum, Max = ReductionKind::Max;
  // Per-axis links of 0 take the cluster's defaults. Equal links on several
  // axes make many plans tie, which is where a different path could change
  // the summed double.
  MeshAxis x2{"x", 2, 0, 0}, y4{"y", 4, 0, 0}, y2{"y", 2, 0, 0},
      z2{"z", 2, 0, 0}, one{"u", 1, 0, 0}, x4{"x", 4, 0, 0};
  MeshAxis slowX2{"x", 2, 25.0, 10.0}, fastY2{"y", 2, 150.0, 2.0},
      fastZ2{"z", 2, 150.0, 2.0}, oddY4{"y", 4, 37.0, 3.3};
  std::vector<CostConfig> configs = {
      {{x4}, {8}, {Sum, Max}},
      {{x4}, {8, 4}, {Sum}},
      {{x4}, {6, 4}, {Sum}},
      {{x2, y2}, {4}, {Sum, Max}},
      {{x2, y2}, {4, 8}, {Sum, Max}},
      {{x2, y2}, {6, 4}, {Sum}},
      {{slowX2, fastY2}, {4, 8, 12}, {Sum}},
      {{one, x4}, {8, 4}, {Sum}},
      {{x2, y4}, {8}, {Sum, Max}},
      {{x2, y4}, {8, 4}, {Sum, Max}},
      {{slowX2, oddY4}, {8, 4}, {Sum}},
      {{x2, y4}, {6, 8}, {Sum}},
      {{x2, y4}, {8, 4, 8}, {Sum}, 11},
      {{x2, y2, z2}, {8}, {Sum, Max}},
      {{slowX2, fastY2, fastZ2}, {4, 8}, {Sum, Max}, 5},
      {{x2, y2, z2}, {4, 8, 12}, {Sum}, 29},
      {{slowX2, fastY2, fastZ2}, {8, 4, 8}, {Sum}, 23},
  };
  int64_t pairs = 0, feasible = 0, failures = 0;
  std::mt19937 rng(11);
  for (const CostConfig &c : configs) {
    CostModel model{DeviceMesh(c.axes)};
    const DeviceMesh &mesh = model.getMesh();
    std::vector<TensorLayout> layouts =
        allLayouts(mesh, c.shape.size(), c.kinds);
    // Invalid and uneven layouts go through the checks and plan().
    TensorLayout twice = TensorLayout::replicated(c.shape.size());
    twice.dimAxes[0] = {0, 0};
    layouts.push_back(twice);
    layouts.push_back(TensorLayout::replicated(c.shape.size() + 1));
    TensorLayout uneven = TensorLayout::replicated(c.shape.size());
    uneven.dimAxes[0] = {0};
    uneven.unevenSizes.assign(c.shape.size(), {});
    uneven.unevenSizes[0].assign(mesh.getAxisSize(0), 0);
    uneven.unevenSizes[0].back() = c.shape[0];
    layouts.push_back(uneven);

    std::vector<std::pair<size_t, size_t>> todo;
    for (size_t i = 0; i < layouts.size(); ++i)
      for (size_t j = 0; j < layouts.size(); ++j)
        if ((i * 31 + j * 17) % c.sample == 0)
          todo.emplace_back(i, j);
    // Any order: sources interleave, and a source's search is resumed for
    // targets in no particular order.
    std::shuffle(todo.begin(), todo.end(), rng);
    for (int withAllToAll = 0; withAllToAll < 2; ++withAllToAll) {
      PlannerOptions options;
      options.enableAllToAll = withAllToAll;
      // By layouts, and by ids registered in first-use order.
      ReshardPlanner costs(model, options), byId(model, options);
      for (auto [i, j] : todo) {
        const TensorLayout &from = layouts[i], &to = layouts[j];
        std::string planError, costError, idError;
        auto plan =
            planReshard(model, c.shape, 4, from, to, options, planError);
        auto cost = costs.costUs(c.shape, 4, from, to, costError);
        uint32_t fromId = byId.layoutId(c.shape, from);
        auto idCost = byId.costUs(c.shape, 4, fromId,
                                  byId.layoutId(c.shape, to), idError);
        ++pairs;
        feasible += plan.has_value();
        auto agrees = [&](const std::optional<double> &x,
                          const std::string &xError) {
          return plan.has_value() == x.has_value() && planError == xError &&
                 (!plan || plan->timeUs == *x);
        };
        bool same = agrees(cost, costError) && agrees(idCost, idError);
        EXPECT_TRUE(same) << mesh.str() << " " << from.str(mesh) << " -> "
                          << to.str(mesh) << (withAllToAll ? " (a2a)" : "")
                          << ": plan "
                          << (plan ? std::to_string(plan->timeUs) : planError)
                          << ", costUs "
                          << (cost ? std::to_string(*cost) : costError)
                          << ", by id "
                          << (idCost ? std::to_string(*idCost) : idError)
                          << describe(mesh, plan ? *plan : ReshardPlan());
        failures += !same;
        ASSERT_LT(failures, 5) << "stopping after 5 failures";
      }
      // Asking again gives the same answer.
      for (size_t k = 0; k < std::min<size_t>(todo.size(), 50); ++k) {
        auto [i, j] = todo[k];
        std::string e1, e2;
        auto a = costs.costUs(c.shape, 4, layouts[i], layouts[j], e1);
        auto b = costs.costUs(c.shape, 4, layouts[i], layouts[j], e2);
        EXPECT_EQ(a.has_value(), b.has_value());
        EXPECT_EQ(e1, e2);
        if (a && b)
          EXPECT_EQ(*a, *b);
      }
    }
  }
  std::printf("[ costUs ] %lld layout pairs compared, %lld feasible\n",
              static_cast<long long>(pairs), static_cast<long long>(feasible));
  EXPECT_GT(feasible, 10000);
  EXPECT_GT(pairs - feasible, 1000);
}

TEST(ReshardPlanner, CostUsTiesGoToTheEarlierSettledState) {
  // Here the cheapest plans into [[b, a], [], [c]] tie in picoseconds and in
  // step counts but not in the summed double: one goes through the search's
  // own path, one permutes straight to the target from a state settled
  // earlier. The single-target search takes the earlier one; so must
  // costUs().
  CostModel model{
      DeviceMesh({MeshAxis{"a", 2, 10.0, 1.0}, MeshAxis{"b", 2, 25.0, 10.0},
                  MeshAxis{"c", 2, 150.0, 2.0}})};
  const DeviceMesh &mesh = model.getMesh();
  std::vector<int64_t> shape = {12, 6, 16};
  PlannerOptions options;
  options.enableAllToAll = true;
  std::vector<TensorLayout> targets;
  for (TensorLayout &l : allLayouts(mesh, 3, {ReductionKind::Sum}))
    if (l.validate(mesh, &shape).empty())
      targets.push_back(std::move(l));
  for (const TensorLayout &from :
       {layout({{2}, {1}, {}}), layout({{0}, {1}, {}})}) {
    ReshardPlanner costs(model, options);
    for (const TensorLayout &to : targets) {
      std::string error;
      auto plan = planReshard(model, shape, 2, from, to, options, error);
      auto cost = costs.costUs(shape, 2, from, to, error);
      ASSERT_TRUE(plan && cost) << error;
      EXPECT_EQ(plan->timeUs, *cost)
          << from.str(mesh) << " -> " << to.str(mesh) << describe(mesh, *plan);
    }
  }
}

TEST(ReshardPlanner, CostUsMixesElementSizes) {
  // One planner pricing the same layouts with two element sizes, in any
  // order: each size has its own shared graphs, and a target keeps its state
  // id in one of them at a time (the pass mixes f32 and bf16 tensors).
  CostModel model(makeMesh({{"x", 2}, {"y", 2}}));
  const DeviceMesh &mesh = model.getMesh();
  std::vector<int64_t> shape = {8, 4};
  std::vector<TensorLayout> layouts;
  for (TensorLayout &l :
       allLayouts(mesh, shape.size(), {ReductionKind::Sum, ReductionKind::Max}))
    if (l.validate(mesh, &shape).empty())
      layouts.push_back(std::move(l));
  std::vector<std::tuple<size_t, size_t, int64_t>> todo;
  for (size_t i = 0; i < layouts.size(); ++i)
    for (size_t j = 0; j < layouts.size(); ++j)
      for (int64_t elemBytes : {2, 4})
        todo.emplace_back(i, j, elemBytes);
  std::mt19937 rng(5);
  std::shuffle(todo.begin(), todo.end(), rng);
  ReshardPlanner costs(model);
  int failures = 0;
  for (auto [i, j, elemBytes] : todo) {
    std::string planError, costError;
    auto plan = planReshard(model, shape, elemBytes, layouts[i], layouts[j],
                            PlannerOptions(), planError);
    auto cost =
        costs.costUs(shape, elemBytes, costs.layoutId(shape, layouts[i]),
                     costs.layoutId(shape, layouts[j]), costError);
    bool same = plan.has_value() == cost.has_value() &&
                planError == costError && (!plan || plan->timeUs == *cost);
    EXPECT_TRUE(same) << layouts[i].str(mesh) << " -> " << layouts[j].str(mesh)
                      << " (" << elemBytes << " bytes)";
    failures += !same;
    ASSERT_LT(failures, 5) << "stopping after 5 failures";
  }
}

TEST(ReshardPlanner, CostUsSearchesOncePerSource) {
  // All pairs of the valid layouts of a GPT-like activation on a 2x4 mesh,
  // priced as the propagation pass does, through plan() and through costUs().
  CostModel model(makeMesh({{"dp", 2}, {"mp", 4}}));
  const DeviceMesh &mesh = model.getMesh();
  std::vector<std::vector<int64_t>> shapes = {
      {64, 32}, {32, 128}, {4, 8, 32}, {4, 8, 4, 8}};
  std::vector<std::vector<TensorLayout>> layouts;
  size_t numPairs = 0, numSources = 0;
  for (const auto &shape : shapes) {
    layouts.emplace_back();
    for (TensorLayout &l : allLayouts(mesh, shape.size(),
                                      {ReductionKind::Sum, ReductionKind::Max}))
      if (l.validate(mesh, &shape).empty())
        layouts.back().push_back(std::move(l));
    numSources += layouts.back().size();
    numPairs += layouts.back().size() * layouts.back().size();
  }
  using Clock = std::chrono::steady_clock;
  for (int withAllToAll = 0; withAllToAll < 2; ++withAllToAll) {
    PlannerOptions options;
    options.enableAllToAll = withAllToAll;
    ReshardPlanner byPlan(model, options), byCost(model, options);
    std::vector<double> planned, costed;
    std::string error;
    auto t0 = Clock::now();
    for (size_t s = 0; s < shapes.size(); ++s)
      for (const TensorLayout &from : layouts[s])
        for (const TensorLayout &to : layouts[s]) {
          auto p = byPlan.plan(shapes[s], 4, from, to, error);
          planned.push_back(p ? p->timeUs : -1.0);
        }
    auto t1 = Clock::now();
    for (size_t s = 0; s < shapes.size(); ++s)
      for (const TensorLayout &from : layouts[s])
        for (const TensorLayout &to : layouts[s]) {
          auto c = byCost.costUs(shapes[s], 4, from, to, error);
          costed.push_back(c ? *c : -1.0);
        }
    auto t2 = Clock::now();
    EXPECT_EQ(planned, costed);
    // One search per pair (but the identical ones) against at most one per
    // source and kind of partial target (none, sum or max on each subset).
    EXPECT_EQ(byPlan.getNumSearches(), numPairs);
    EXPECT_LE(byCost.getNumSearches(), numSources * 7);
    EXPECT_LT(byCost.getNumSearches() * 5, byPlan.getNumSearches());
    std::printf("[ costUs ] %zu pairs%s: plan() %zu searches %.1f ms, "
                "costUs() %zu searches %.1f ms\n",
                numPairs, withAllToAll ? " (all_to_all)" : "",
                byPlan.getNumSearches(),
                std::chrono::duration<double, std::milli>(t1 - t0).count(),
                byCost.getNumSearches(),
                std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
}

} // namespace
