//===- ExhaustiveReshardTest.cpp - Every layout pair, planned and run -----===//
//
// For small meshes and tensors, enumerates every valid layout (all axis
// assignments and orders, partial sums, a subset with other reductions and
// uneven splits), plans every (source, target) pair, runs the plan on real
// data in the collective simulator and requires the result to be exactly the
// target's shards. Also requires each plan to cost no more than the obvious
// plan (reduce everything, gather everything, slice, make partial), and
// ReshardPlanner::costUs to give exactly the plan's time.
//
//===----------------------------------------------------------------------===//

#include "CollectiveSimulator.h"
#include "LayoutEnumeration.h"

#include "autoshard/Analysis/ReshardPlanner.h"

#include "gtest/gtest.h"

#include <chrono>
#include <cstdio>

using namespace autoshard;

namespace {

DeviceMesh makeMesh(std::vector<int64_t> sizes) {
  std::vector<MeshAxis> axes;
  const char *names[] = {"x", "y", "z", "w"};
  for (size_t i = 0; i < sizes.size(); ++i)
    axes.push_back(MeshAxis{names[i], sizes[i], 0.0, 0.0});
  return DeviceMesh(axes);
}

/// Uneven sizes for `n` shards of `extent` that differ from the even split.
std::vector<int64_t> unevenSizes(int64_t extent, int64_t n) {
  std::vector<int64_t> sizes(n, extent / n);
  for (int64_t i = 0; i < extent % n; ++i)
    ++sizes[i];
  if (sizes[0] > 0) {
    --sizes[0];
    ++sizes[n - 1];
  }
  return sizes;
}

/// Every valid layout of `shape` on `mesh` (see testutil::allLayouts); with
/// `uneven`, each layout splitting dim 0 is followed by its uneven variant.
std::vector<TensorLayout> enumerateLayouts(const DeviceMesh &mesh,
                                           const std::vector<int64_t> &shape,
                                           std::vector<ReductionKind> kinds,
                                           bool uneven) {
  std::vector<TensorLayout> out;
  for (TensorLayout &v : testutil::allLayouts(mesh, shape.size(), kinds)) {
    if (v.validate(mesh, &shape).empty())
      out.push_back(v);
    if (uneven && !v.dimAxes[0].empty()) {
      v.unevenSizes.assign(shape.size(), {});
      v.unevenSizes[0] = unevenSizes(shape[0], v.getNumShards(mesh, 0));
      if (v.validate(mesh, &shape).empty())
        out.push_back(std::move(v));
    }
  }
  return out;
}

/// The plan anyone would write first: reduce all partial axes, gather every
/// dim, slice into the target, make the target's partial axes.
double obviousPlanTime(const CostModel &model,
                       const std::vector<int64_t> &shape,
                       const TensorLayout &from, const TensorLayout &to) {
  double time = 0;
  TensorLayout cur = from;
  auto step = [&](CollectiveKind kind, std::vector<int64_t> axes, int64_t dim,
                  TensorLayout next) {
    CollectiveStep s;
    s.kind = kind;
    s.axes = std::move(axes);
    s.dim = dim;
    s.before = cur;
    s.after = next;
    time += model.getStepTimeUs(s, shape, 4);
    cur = next;
  };
  if (from == to)
    return 0;
  if (cur.isPartial()) {
    TensorLayout next = cur;
    next.partialAxes.clear();
    step(CollectiveKind::AllReduce, cur.partialAxes.vec(), -1, next);
  }
  for (int64_t d = 0; d < cur.getRank(); ++d) {
    if (cur.dimAxes[d].empty())
      continue;
    TensorLayout next = cur;
    next.dimAxes[d].clear();
    if (next.hasUnevenDim(d))
      next.unevenSizes[d].clear();
    step(CollectiveKind::AllGather, cur.dimAxes[d].vec(), d, next);
  }
  // Slices and make_partial are free.
  return time;
}

struct Config {
  std::vector<int64_t> mesh;
  std::vector<int64_t> shape;
  std::vector<ReductionKind> kinds;
  bool uneven;
};

TEST(ExhaustiveReshard, EveryLayoutPairPlansAndSimulatesExactly) {
  const ReductionKind Sum = ReductionKind::Sum, Max = ReductionKind::Max,
                      Min = ReductionKind::Min, Prod = ReductionKind::Product;
  std::vector<Config> configs = {
      // 1-D meshes.
      {{4}, {8}, {Sum, Max, Min, Prod}, false},
      {{4}, {6}, {Sum}, true},
      {{4}, {8, 4}, {Sum, Max}, false},
      {{4}, {6, 4}, {Sum}, true},
      {{4}, {4, 8, 12}, {Sum}, false},
      {{8}, {8}, {Sum, Max}, false},
      {{8}, {16, 8}, {Sum, Max}, false},
      {{8}, {8, 2, 8}, {Sum}, false},
      // 2-D meshes.
      {{2, 2}, {4}, {Sum, Max, Min, Prod}, false},
      {{2, 2}, {6}, {Sum}, true},
      {{2, 2}, {4, 8}, {Sum, Max}, false},
      {{2, 2}, {6, 4}, {Sum}, true},
      {{2, 2}, {4, 8, 12}, {Sum}, false},
      {{2, 4}, {8}, {Sum, Max}, false},
      {{2, 4}, {8, 4}, {Sum, Max}, false},
      {{2, 4}, {6, 8}, {Sum}, true},
      {{2, 4}, {8, 4, 8}, {Sum}, false},
      // 3-D mesh.
      {{2, 2, 2}, {8}, {Sum, Max}, false},
      {{2, 2, 2}, {6}, {Sum}, true},
      {{2, 2, 2}, {4, 8}, {Sum, Max}, false},
      {{2, 2, 2}, {4, 8, 12}, {Sum}, false},
  };
  auto start = std::chrono::steady_clock::now();
  int64_t pairs = 0, steps = 0, permutes = 0, allToAlls = 0;
  double planSeconds = 0;
  std::mt19937 rng(2024);
  for (const Config &c : configs) {
    DeviceMesh mesh = makeMesh(c.mesh);
    CostModel model(mesh);
    sim::CollectiveSimulator simulator(mesh, c.shape);
    std::vector<TensorLayout> layouts =
        enumerateLayouts(mesh, c.shape, c.kinds, c.uneven);
    ASSERT_GT(layouts.size(), 1u);
    for (int withAllToAll = 0; withAllToAll < 2; ++withAllToAll) {
      PlannerOptions options;
      options.enableAllToAll = withAllToAll;
      ReshardPlanner planner(model, options), costs(model, options);
      int64_t failures = 0;
      for (const TensorLayout &from : layouts) {
        for (const TensorLayout &to : layouts) {
          std::string error;
          auto t0 = std::chrono::steady_clock::now();
          auto plan = planner.plan(c.shape, 4, from, to, error);
          planSeconds += std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
          ++pairs;
          auto where = [&] {
            std::string s = mesh.str() + " shape [";
            for (int64_t e : c.shape)
              s += std::to_string(e) + " ";
            s += "] " + from.str(mesh) + " -> " + to.str(mesh) +
                 (withAllToAll ? " (all_to_all)" : "");
            if (plan)
              for (const CollectiveStep &st : plan->steps)
                s += "\n  " + st.str(mesh);
            return s;
          };
          // costUs() must price every pair exactly as the plan's time.
          std::string costError;
          auto cost = costs.costUs(c.shape, 4, from, to, costError);
          if (cost.has_value() != plan.has_value() ||
              (plan && plan->timeUs != *cost)) {
            ADD_FAILURE() << where() << ": costUs "
                          << (cost ? std::to_string(*cost) : costError);
            ++failures;
          }
          if (!plan) {
            ADD_FAILURE() << where() << ": " << error;
            ++failures;
          } else {
            steps += plan->steps.size();
            for (const CollectiveStep &st : plan->steps) {
              permutes += st.kind == CollectiveKind::Permute;
              allToAlls += st.kind == CollectiveKind::AllToAll;
              if (!withAllToAll && st.kind == CollectiveKind::AllToAll) {
                ADD_FAILURE() << where() << ": all_to_all not enabled";
                ++failures;
              }
            }
            std::string err = simulator.simulate(plan->steps, from, to, rng);
            if (!err.empty()) {
              ADD_FAILURE() << where() << "\n" << err;
              ++failures;
            }
            double obvious = obviousPlanTime(model, c.shape, from, to);
            if (plan->timeUs > obvious * (1 + 1e-12)) {
              ADD_FAILURE() << where() << "\ncosts " << plan->timeUs
                            << " us, the obvious plan " << obvious;
              ++failures;
            }
          }
          ASSERT_LT(failures, 5) << "stopping after 5 failures";
        }
      }
    }
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("[ exhaustive ] %lld layout pairs planned and simulated, %lld "
              "steps (%lld permute, %lld all_to_all), %.2f s (planning "
              "%.2f s)\n",
              static_cast<long long>(pairs), static_cast<long long>(steps),
              static_cast<long long>(permutes),
              static_cast<long long>(allToAlls), seconds, planSeconds);
  EXPECT_GT(pairs, 10000);
}

} // namespace
