//===- BranchAndBound.cpp - The exact oracle's search -----------------------===//
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
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

using namespace autoshard;

namespace autoshard::solver {

//===----------------------------------------------------------------------===//
// Branch and bound
//===----------------------------------------------------------------------===//

struct BranchAndBound {
  const Problem &pb;
  uint64_t budget;
  uint64_t explored = 0;
  bool exhausted = false;
  std::vector<unsigned> order; // search order
  std::vector<unsigned> pos;   // node -> position in order
  /// fwd[v][c]: least cost of v's pairs to later nodes with v at c; each
  /// pair between unplaced nodes is bounded once, at its earlier end.
  std::vector<std::vector<double>> fwd;
  std::vector<std::vector<double>> partial; // unary + edges to assigned
  std::vector<unsigned> x, bestX;
  double bestCost;

  BranchAndBound(const Problem &pb, uint64_t budget, std::vector<unsigned> seed)
      : pb(pb), budget(budget), x(pb.n, 0), bestX(std::move(seed)) {
    bestCost = pb.evaluate(bestX);
    // Order: repeatedly the unplaced node with most placed neighbours,
    // ties by rank; so edges are paid for as early as possible.
    unsigned n = pb.n;
    pos.assign(n, n);
    std::vector<unsigned> placedNbrs(n, 0);
    for (unsigned step = 0; step < n; ++step) {
      unsigned pick = n;
      for (unsigned v : pb.rankOrder)
        if (pos[v] == n && (pick == n || placedNbrs[v] > placedNbrs[pick]))
          pick = v;
      pos[pick] = step;
      order.push_back(pick);
      for (unsigned id : pb.incident(pick))
        ++placedNbrs[pb.other(pb.pairs[id], pick)];
    }
    fwd.resize(n);
    for (unsigned v = 0; v < n; ++v)
      fwd[v].assign(pb.k(v), 0.0);
    for (const Pair &p : pb.pairs) {
      unsigned first = pos[p.a] < pos[p.b] ? p.a : p.b;
      unsigned second = pb.other(p, first);
      for (unsigned c = 0; c < pb.k(first); ++c) {
        double lo = std::numeric_limits<double>::infinity();
        for (unsigned c2 = 0; c2 < pb.k(second); ++c2)
          lo = std::min(lo, pb.pairCost(p, first, c, c2));
        fwd[first][c] += lo;
      }
    }
    partial = pb.unaryCopy();
  }

  void search(unsigned depth, double soFar) {
    if (exhausted)
      return;
    if (++explored > budget) {
      exhausted = true;
      return;
    }
    if (depth == pb.n) {
      if (soFar < bestCost) {
        bestCost = soFar;
        bestX = x;
      }
      return;
    }
    // Lower bound: pairs between placed nodes are in soFar, pairs from a
    // placed to an unplaced node are in the unplaced node's partial costs,
    // pairs between unplaced nodes are bounded by fwd at their earlier end.
    double bound = soFar;
    for (unsigned d = depth; d < pb.n; ++d) {
      unsigned w = order[d];
      double lo = std::numeric_limits<double>::infinity();
      for (unsigned c = 0; c < pb.k(w); ++c)
        lo = std::min(lo, partial[w][c] + fwd[w][c]);
      bound += lo;
    }
    if (bound >= bestCost - 1e-9 * std::max(1.0, std::fabs(bestCost)))
      return;
    unsigned v = order[depth];
    unsigned kv = pb.k(v);
    std::vector<unsigned> cands(kv);
    std::iota(cands.begin(), cands.end(), 0u);
    std::stable_sort(cands.begin(), cands.end(), [&](unsigned a, unsigned b) {
      return partial[v][a] + fwd[v][a] < partial[v][b] + fwd[v][b];
    });
    // Charges (sign 1) or takes back (sign -1) the pairs from v's choice c
    // to later nodes in their partial costs.
    auto charge = [&](unsigned c, double sign) {
      for (unsigned id : pb.incident(v)) {
        const Pair &p = pb.pairs[id];
        unsigned w = pb.other(p, v);
        if (pos[w] <= depth)
          continue;
        for (unsigned cw = 0; cw < pb.k(w); ++cw)
          partial[w][cw] += sign * pb.pairCost(p, w, cw, c);
      }
    };
    for (unsigned c : cands) {
      double here = partial[v][c];
      x[v] = c;
      charge(c, 1.0);
      search(depth + 1, soFar + here);
      charge(c, -1.0);
      if (exhausted)
        return;
    }
  }
};

SolverResult solveBranchAndBound(const Problem &pb, uint64_t maxSearchNodes,
                                 std::vector<unsigned> seed) {
  BranchAndBound bb(pb, maxSearchNodes, std::move(seed));
  bb.search(0, 0.0);
  SolverResult res;
  res.assignment = bb.bestX;
  res.cost = bb.bestCost;
  res.optimal = !bb.exhausted;
  res.work = bb.explored;
  return res;
}

} // namespace autoshard::solver
