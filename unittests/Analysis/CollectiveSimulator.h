//===- CollectiveSimulator.h - N virtual ranks executing steps --*- C++ -*-===//
//
// A reference for the planner's output: N virtual ranks in one process, each
// holding its local shard as a row-major std::vector<double>, executing each
// CollectiveStep with the semantics of Collective.h. It is written from the
// DeviceMesh/TensorLayout primitives (local shapes, offsets, groups) only and
// shares no code with the planner, so a plan that the simulator turns into
// the target's shards is a correct plan.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_UNITTESTS_ANALYSIS_COLLECTIVESIMULATOR_H
#define AUTOSHARD_UNITTESTS_ANALYSIS_COLLECTIVESIMULATOR_H

#include "autoshard/Analysis/Collective.h"

#include <random>
#include <string>
#include <vector>

namespace autoshard::sim {

/// One rank's local tensor.
struct Buffer {
  std::vector<int64_t> shape;
  std::vector<double> data;
};

class CollectiveSimulator {
public:
  CollectiveSimulator(DeviceMesh mesh, std::vector<int64_t> globalShape);

  /// A global tensor of small random integers (exact in double arithmetic).
  std::vector<double> makeGlobal(std::mt19937 &rng) const;

  /// Cuts `global` into every rank's shard of `layout`. For a partial layout
  /// each partial group gets random terms that reduce to the shard.
  std::vector<Buffer> scatter(const std::vector<double> &global,
                              const TensorLayout &layout,
                              std::mt19937 &rng) const;

  /// Executes `step` on every rank. Checks first that the step is legal on
  /// step.before and that step.after is the layout its semantics produce
  /// (uneven sizes aside: the data check covers them). Returns "" or what is
  /// wrong.
  std::string apply(const CollectiveStep &step,
                    std::vector<Buffer> &ranks) const;

  /// Checks every rank holds what `layout` says it holds of `global`: its
  /// exact shard, or for a partial layout, terms of the right shape whose
  /// reduction over each partial group is the shard. Returns "" or the first
  /// mismatch.
  std::string check(const std::vector<Buffer> &ranks,
                    const std::vector<double> &global,
                    const TensorLayout &layout) const;

  /// Scatters a random global tensor in `from`, runs `steps`, checking every
  /// intermediate layout and that the steps chain (`before` of each is the
  /// previous `after`), and checks the result against `to`. Returns "" or
  /// the first problem, naming the step.
  std::string simulate(const std::vector<CollectiveStep> &steps,
                       const TensorLayout &from, const TensorLayout &to,
                       std::mt19937 &rng) const;

private:
  std::string checkStructure(const CollectiveStep &step) const;
  Buffer block(const std::vector<double> &global,
               const std::vector<int64_t> &offsets,
               const std::vector<int64_t> &sizes) const;

  DeviceMesh mesh;
  std::vector<int64_t> globalShape;
};

} // namespace autoshard::sim

#endif // AUTOSHARD_UNITTESTS_ANALYSIS_COLLECTIVESIMULATOR_H
