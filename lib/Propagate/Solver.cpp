//===- Solver.cpp - Strategy selection over a cost graph ------------------===//
//
// See Solver.h. Internally the graph is normalised once: restrictions are
// resolved to a list of allowed candidates per node, parallel edges between
// the same two nodes are merged into one dense matrix over the allowed
// candidates, and nodes are ranked by their canonical key (SolverProblem.cpp).
// Every solver walks nodes and edges in rank order so the result is
// order-independent. This file picks the solver (SolverInternal.h lists them,
// each in its own file) and maps its result back to the graph's candidates.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Propagate/Solver.h"

#include "SolverInternal.h"

#include <optional>
#include <utility>

using namespace autoshard;

namespace autoshard::solver {

/// Default solver: exact elimination when its tables fit, else solveLocal.
static SolverResult solveDP(const Problem &pb, const SolverOptions &options) {
  if (std::optional<SolverResult> res = eliminate(
          pb, options.maxEliminationTable, options.maxEliminationWork))
    return std::move(*res);
  return solveLocal(pb, options);
}

/// The oracle: elimination with 16x the default limits proves optimality on
/// its own; beyond that, branch and bound with the local search's plan (the
/// cheaper end of its two descents) as the incumbent to beat.
static SolverResult solveExact(const Problem &pb,
                               const SolverOptions &options) {
  if (std::optional<SolverResult> res =
          eliminate(pb, options.maxEliminationTable * 16,
                    options.maxEliminationWork * 16)) {
    res->reusedSteps = 0;
    return std::move(*res);
  }
  return solveBranchAndBound(pb, options.maxSearchNodes,
                             solveLocal(pb, options).assignment);
}

} // namespace autoshard::solver

using namespace autoshard::solver;

SolverResult autoshard::solve(const SolverGraph &graph,
                              const SolverOptions &options) {
  SolverResult res;
  res.error = graph.validate();
  if (!res.error.empty())
    return res;
  Problem pb = normalise(graph, options.parallelFor);
  switch (options.kind) {
  case SolverKind::DP:
    res = solveDP(pb, options);
    break;
  case SolverKind::Local:
    res = solveLocal(pb, options);
    break;
  case SolverKind::Exact:
    res = solveExact(pb, options);
    break;
  }
  // Back from allowed-local indices to the nodes' candidate indices.
  for (unsigned v = 0; v < pb.n; ++v)
    res.assignment[v] = pb.candidate(v, res.assignment[v]);
  res.cost = graph.evaluate(res.assignment);
  return res;
}
