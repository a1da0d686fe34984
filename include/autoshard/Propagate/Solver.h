//===- Solver.h - Strategy selection over a cost graph ----------*- C++ -*-===//
//
// The MLIR-free core of propagation. Every operation (and every function
// argument/result) is a node with candidate strategies, each with a node cost
// (compute time, optional memory penalty). Every producer-result ->
// consumer-operand use is an edge whose cost depends on the pair of chosen
// candidates: the time of the reshard between the producer's result layout
// and the consumer's operand layout. The solver picks one candidate per node
// minimising the sum of node and edge costs.
//
// Edge costs are given per *layout class*: a candidate maps to the class of
// the layout it gives the value (many candidates share a layout), and the
// edge stores one cost per (source class, target class) pair. The pass prices
// each class pair once with the reshard planner.
//
// Default solver (`SolverKind::DP`): exact min-sum by variable elimination
// (bucket elimination, smallest-new-table-first order). Computation graphs
// are long but narrow (a residual stream with diamonds such as the Q/K/V
// branches of attention or layer-norm statistics), so the tables stay small
// and the run is linear in the graph's length; the result is then proven
// optimal. When a table would exceed SolverOptions' limits it falls back to
// `SolverKind::Local`: exact DP on a maximum-weight spanning forest, then
// descent until no move improves the total: block coordinate descent (exact
// DP on induced forests from four node orders, the rest held fixed),
// neighbourhood moves (elimination over every node's current candidate and
// its two cheapest others, which moves whole cycles; bounded by fixed
// limits of its own, as its tables are small) and iterated conditional
// modes. `SolverKind::Exact` is elimination with larger limits, else a
// branch and bound seeded with the local search (within a budget,
// SolverOptions::maxSearchNodes); an oracle.
//
// Results depend only on the graph's content, the edges' directions (which
// order ties in the elimination) and the nodes' keys, never on the order
// nodes or edges were added. Costs are rounded once, to whole multiples of
// a power of two small enough that every total stays exact (below 2^-52 of
// the largest possible total), so sums never depend on their order.
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_PROPAGATE_SOLVER_H
#define AUTOSHARD_PROPAGATE_SOLVER_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autoshard {

/// Cost of a forbidden combination. Finite so sums stay ordered.
constexpr double kInfeasibleCost = 1e18;

class SolverGraph {
public:
  struct Node {
    /// Canonical key: nodes are visited in key order (ties by the edges'
    /// structure, then insertion), so results do not depend on op order.
    std::string key;
    /// One cost per candidate; nodes with the same costs (the layers of a
    /// model) may share one vector.
    std::shared_ptr<const std::vector<double>> costs;
  };
  /// An edge's costs by layout class. Edges whose endpoints repeat an
  /// earlier edge's layouts (the layers of a model) share one table, and the
  /// solver builds each distinct table's dense form once.
  struct EdgeTable {
    /// Candidate -> layout class on each side.
    std::vector<unsigned> srcClass, dstClass;
    unsigned numSrcClasses = 0, numDstClasses = 0;
    /// cost[srcClass * numDstClasses + dstClass].
    std::vector<double> cost;

    double get(unsigned cs, unsigned cd) const {
      return cost[srcClass[cs] * numDstClasses + dstClass[cd]];
    }
  };
  struct Edge {
    unsigned src = 0, dst = 0;
    std::shared_ptr<const EdgeTable> table;

    double get(unsigned cs, unsigned cd) const { return table->get(cs, cd); }
  };
  /// "Node `node` must take one of `allowed` candidates", with a priority.
  /// Restrictions are applied from the highest priority down; one that
  /// would leave a node without a candidate loses (its constraint is then
  /// met by a reshard instead).
  struct Restriction {
    unsigned node = 0;
    std::vector<unsigned> allowed;
    int64_t priority = 0;
  };

  /// Adds a node with one cost per candidate (at least one). Returns its id.
  unsigned addNode(std::string key, std::vector<double> costs);
  /// The same with costs that other nodes may share (not copied).
  unsigned addNode(std::string key,
                   std::shared_ptr<const std::vector<double>> costs);
  /// Adds an edge with class-based costs (see EdgeTable).
  void addEdge(unsigned src, unsigned dst, std::vector<unsigned> srcClass,
               std::vector<unsigned> dstClass, unsigned numSrcClasses,
               unsigned numDstClasses, std::vector<double> cost);
  /// Adds an edge with a table that other edges may share.
  void addEdge(unsigned src, unsigned dst,
               std::shared_ptr<const EdgeTable> table);
  /// Adds an edge with a dense matrix cost[cs * numCandidates(dst) + cd].
  void addEdge(unsigned src, unsigned dst, std::vector<double> matrix);
  void restrict(unsigned node, std::vector<unsigned> allowed,
                int64_t priority = 0);
  /// Shorthand for restrict(node, {candidate}, priority).
  void fix(unsigned node, unsigned candidate, int64_t priority = 0) {
    restrict(node, {candidate}, priority);
  }

  unsigned getNumNodes() const { return nodes.size(); }
  unsigned getNumCandidates(unsigned node) const {
    return nodes[node].costs->size();
  }
  const Node &getNode(unsigned node) const { return nodes[node]; }
  const std::vector<Node> &getNodes() const { return nodes; }
  const std::vector<Edge> &getEdges() const { return edges; }
  const std::vector<Restriction> &getRestrictions() const {
    return restrictions;
  }

  /// Total cost of an assignment (one candidate per node).
  double evaluate(const std::vector<unsigned> &assignment) const;
  /// Checks ids and sizes; returns an error message or "".
  std::string validate() const;

private:
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<Restriction> restrictions;
};

enum class SolverKind { DP, Exact, Local };

std::string_view stringifySolverKind(SolverKind kind);
std::optional<SolverKind> symbolizeSolverKind(std::string_view name);

/// Runs fn(i) for every i in [0, n), possibly concurrently and in any
/// order; returns when all are done.
using ParallelFor =
    std::function<void(size_t n, const std::function<void(size_t)> &fn)>;

struct SolverOptions {
  SolverKind kind = SolverKind::DP;
  /// Where the solver may use threads (building its pair matrices); empty:
  /// one thread. Results do not depend on it.
  ParallelFor parallelFor;
  /// Exact solver: its branch and bound gives up (returning the best plan
  /// found, optimal = false) once its lower bounds have visited this many
  /// graph nodes in all (each search node's bound visits the nodes of its
  /// component not yet placed, 25-50 ns each: the default is under a
  /// minute). Counted, not timed, so the result is deterministic.
  uint64_t maxSearchNodes = 1000000000;
  /// Local search: at most this many improvement rounds after the forest DP.
  unsigned maxRounds = 64;
  /// Variable elimination gives up (falling back to the local search) when
  /// one table would exceed this many entries (the tables it keeps for
  /// decoding: 16 times as many), or all tables it computes together this
  /// much work (entries times factors; reused tables are not counted). The
  /// first is checked on the planned order, before any table is computed.
  uint64_t maxEliminationTable = uint64_t(1) << 22;
  uint64_t maxEliminationWork = uint64_t(1) << 30;
  /// Local search, for tests: every message or root decision taken from a
  /// recipe (see SolverResult::reusedSteps) is also computed from the built
  /// belief, and disagreements are counted in SolverResult::memoMismatches.
  bool verifyRecipes = false;
};

struct SolverResult {
  std::vector<unsigned> assignment;
  double cost = 0.0;
  /// True when the result is proven optimal (elimination succeeded; forests
  /// under the local search; branch and bound within its budget).
  bool optimal = false;
  /// Elimination: table entries times factors visited in the steps it
  /// computed (reused steps are free, see reusedSteps). Branch and bound:
  /// search nodes explored. Local search: improvement rounds run.
  uint64_t work = 0;
  /// Elimination: steps whose table was shared with an identical earlier
  /// step (the repeated layers of a model) instead of being recomputed.
  /// Local search: tree-pass messages and root decisions replayed by recipe.
  uint64_t reusedSteps = 0;
  /// With SolverOptions::verifyRecipes: replays that disagreed with the
  /// computation (always 0 unless the recipes are wrong).
  uint64_t memoMismatches = 0;
  /// Set when the graph is malformed; the assignment is then empty.
  std::string error;
};

/// Candidates each node may take after applying the restrictions.
std::vector<std::vector<unsigned>>
resolveRestrictions(const SolverGraph &graph);

SolverResult solve(const SolverGraph &graph, const SolverOptions &options = {});

} // namespace autoshard

#endif // AUTOSHARD_PROPAGATE_SOLVER_H
