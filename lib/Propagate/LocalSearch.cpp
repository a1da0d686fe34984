//===- LocalSearch.cpp - Forest DP then descent -----------------------------===//
//
// See SolverInternal.h.
//
//===----------------------------------------------------------------------===//

#include "SolverInternal.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

using namespace autoshard;

namespace autoshard::solver {

/// Iterated conditional modes in rank order until no single-node move
/// improves. A node is evaluated only when it or a neighbour changed since
/// its last evaluation: an evaluated node is left at a best candidate given
/// its neighbours (a tie keeps it), so evaluating it again would not move
/// it. Sweeps, moves and the result are those of evaluating every node in
/// every sweep; on a model's thousands of nodes a sweep after the first
/// then costs a few evaluations instead of one per node, pair columns
/// included.
class Icm {
public:
  explicit Icm(const Problem &pb) : pb(pb), dirty(pb.n, true) {}

  /// Runs the sweeps from `x`; whether anything changed. The moves made on
  /// `x` between two runs are found by comparing it with the last run's
  /// result.
  bool run(std::vector<unsigned> &x) {
    if (!last.empty())
      for (unsigned v = 0; v < pb.n; ++v)
        if (x[v] != last[v])
          markAround(v);
    bool changedAny = false;
    for (unsigned sweep = 0; sweep < 1000; ++sweep) {
      bool changed = false;
      for (unsigned v : pb.rankOrder) {
        if (!dirty[v])
          continue;
        dirty[v] = false;
        unsigned kv = pb.k(v);
        if (kv < 2)
          continue;
        costsGiven(pb, v, x, local);
        unsigned arg = bestMove(local.data(), kv, x[v]);
        if (arg != x[v]) {
          x[v] = arg;
          markAround(v);
          dirty[v] = false;
          changed = changedAny = true;
        }
      }
      if (!changed)
        break;
    }
    last = x;
    return changedAny;
  }

private:
  void markAround(unsigned v) {
    dirty[v] = true;
    for (unsigned id : pb.incident(v))
      dirty[pb.other(pb.pairs[id], v)] = true;
  }

  const Problem &pb;
  /// Whether a node may not be at a best candidate given its neighbours.
  std::vector<bool> dirty;
  /// x as the last run left it.
  std::vector<unsigned> last;
  std::vector<double> local;
};

/// A maximal set of nodes whose induced subgraph is a forest, grown greedily
/// in `order`: a node joins when its neighbours already in the set lie in
/// distinct trees.
std::vector<bool> inducedForest(const Problem &pb,
                                const std::vector<unsigned> &order) {
  std::vector<unsigned> parent(pb.n);
  std::iota(parent.begin(), parent.end(), 0u);
  auto find = [&](unsigned v) {
    while (parent[v] != v)
      v = parent[v] = parent[parent[v]];
    return v;
  };
  std::vector<bool> block(pb.n, false);
  std::vector<unsigned> roots;
  for (unsigned v : order) {
    roots.clear();
    for (unsigned id : pb.incident(v)) {
      unsigned w = pb.other(pb.pairs[id], v);
      if (block[w])
        roots.push_back(find(w));
    }
    std::sort(roots.begin(), roots.end());
    if (std::adjacent_find(roots.begin(), roots.end()) != roots.end())
      continue;
    block[v] = true;
    for (unsigned r : roots)
      parent[r] = v;
  }
  return block;
}

/// Breadth-first order over the pairs in `inTree`, roots in rank order: long
/// chains of the spanning forest stay together in the induced forests.
std::vector<unsigned> treeOrder(const Problem &pb,
                                const std::vector<bool> &inTree) {
  std::vector<bool> seen(pb.n, false);
  std::vector<unsigned> order;
  for (unsigned r : pb.rankOrder) {
    if (seen[r])
      continue;
    seen[r] = true;
    size_t head = order.size();
    order.push_back(r);
    while (head < order.size()) {
      unsigned v = order[head++];
      for (unsigned id : pb.incident(v)) {
        unsigned w = pb.other(pb.pairs[id], v);
        if (!inTree[id] || seen[w])
          continue;
        seen[w] = true;
        order.push_back(w);
      }
    }
  }
  return order;
}

/// neighbourhoodDP's domains (three candidates per node) and limits. Its
/// tables are small (3^(w+1) entries for a graph of width w), so it runs
/// where the full elimination cannot; the limits only bound it on graphs
/// far wider than programs, where it is skipped.
constexpr unsigned kNeighbourhoodWidth = 3;
constexpr uint64_t kNeighbourhoodTable = uint64_t(1) << 12;
constexpr uint64_t kNeighbourhoodWork = uint64_t(1) << 26;

/// Descent from a start: every move is taken only when it improves the
/// total; stops when a round improves nothing. Block moves solve an induced
/// forest exactly with the rest held fixed; blocks come from four node
/// orders (spanning-forest BFS and rank, each both ways) so that a chain
/// the spanning forest cut is whole in some block. Neighbourhood moves
/// (neighbourhoodDP) eliminate exactly over a few candidates per node, so
/// they move a whole cycle at once. ICM moves single nodes in between.
class Descent {
public:
  Descent(const Problem &pb, const SolverOptions &options,
          ForestSolver &forests, const std::vector<bool> &inTree)
      : pb(pb), options(options), forests(forests), inTree(inTree) {
    std::vector<unsigned> order = treeOrder(pb, inTree);
    blocks.push_back(inducedForest(pb, order));
    std::reverse(order.begin(), order.end());
    blocks.push_back(inducedForest(pb, order));
    order = pb.rankOrder;
    blocks.push_back(inducedForest(pb, order));
    std::reverse(order.begin(), order.end());
    blocks.push_back(inducedForest(pb, order));
  }

  /// Descends from x (updated in place) and returns its cost; `rounds`
  /// counts the improvement rounds run.
  double run(std::vector<unsigned> &x, uint64_t &rounds) {
    Icm icm(pb);
    double cost = pb.evaluate(x);
    // A move depends on x alone: one that did not help is not tried again
    // until x changes (`version` counts the changes), as it would propose
    // the same assignment.
    uint64_t version = 0;
    std::vector<uint64_t> triedAt(2 + blocks.size(), ~uint64_t(0));
    auto tryMove = [&](size_t move, auto propose) {
      if (triedAt[move] == version)
        return;
      std::vector<unsigned> z = propose();
      if (double c = pb.evaluate(z); strictlyBetter(c, cost)) {
        x = std::move(z);
        cost = c;
        ++version;
      } else {
        triedAt[move] = version;
      }
    };
    // Joint moves around cycles first: on a model's layers they reach
    // what the forest moves cannot, and the rounds after them are fewer.
    // A neighbourhood that went over its limits is not tried again: its
    // plan, which sizes the tables, depends on the graph alone.
    auto neighbourhood = [&] {
      std::optional<std::vector<unsigned>> z = neighbourhoodDP(
          pb, x, kNeighbourhoodWidth, kNeighbourhoodTable, kNeighbourhoodWork);
      neighbourhoodFits = z.has_value();
      return z ? std::move(*z) : x;
    };
    const size_t neighbourhoodMove = 1 + blocks.size();
    if (neighbourhoodFits)
      tryMove(neighbourhoodMove, neighbourhood);
    for (unsigned round = 0; round < options.maxRounds; ++round) {
      ++rounds;
      double before = cost;
      if (icm.run(x))
        ++version;
      cost = pb.evaluate(x);
      // The old heuristic move: forest DP with off-forest pairs conditioned
      // on x. Not monotone, so only taken when it helps.
      tryMove(0, [&] { return forests.forestDP(inTree, x); });
      for (size_t i = 0; i < blocks.size(); ++i)
        tryMove(1 + i, [&] { return forests.blockDP(blocks[i], x); });
      if (neighbourhoodFits)
        tryMove(neighbourhoodMove, neighbourhood);
      if (!strictlyBetter(cost, before))
        break;
    }
    return cost;
  }

private:
  const Problem &pb;
  const SolverOptions &options;
  ForestSolver &forests;
  const std::vector<bool> &inTree;
  std::vector<std::vector<bool>> blocks;
  bool neighbourhoodFits = true;
};

/// The fallback when elimination would need tables that are too large:
/// forest DP on a maximum-weight spanning forest, then descent. The forest
/// start drops the pairs off the forest, and on a recurrence it can hold a
/// region no move leaves; the start that follows the annotations
/// (propagationSeed) then descends too, and the cheaper end is kept. The
/// seed is given up as soon as its part built costs as much as the first
/// descent's end, so where the forest start descends well (the GPT
/// benchmark's) little of it is built.
SolverResult solveLocal(const Problem &pb, const SolverOptions &options) {
  SolverResult res;
  std::vector<bool> inTree = spanningForest(pb);
  bool isForest =
      std::all_of(inTree.begin(), inTree.end(), [](bool b) { return b; });
  ForestSolver forests(pb, options.verifyRecipes);
  std::vector<unsigned> x = forests.forestDP(inTree, {});
  double cost = pb.evaluate(x);
  res.optimal = isForest;
  if (!isForest) {
    Descent descent(pb, options, forests, inTree);
    cost = descent.run(x, res.work);
    std::optional<std::vector<unsigned>> seed = propagationSeed(pb, x, cost);
    if (seed) {
      double seedCost = descent.run(*seed, res.work);
      if (strictlyBetter(seedCost, cost)) {
        x = std::move(*seed);
        cost = seedCost;
      }
    }
  }
  res.assignment = std::move(x);
  res.cost = cost;
  res.reusedSteps = forests.replays();
  res.memoMismatches = forests.mismatches();
  return res;
}

} // namespace autoshard::solver
