//===- Seed.cpp - A start that follows the annotations -----------------===//
//
// See SolverInternal.h (propagationSeed).
//
// The local search descends from the forest DP's assignment, which drops
// the pairs off the spanning forest. On a recurrence (an unrolled LSTM:
// every step reads the previous step's h and c) most pairs lie on cycles,
// and that start can hold a whole region at a layout its annotated inputs
// do not have (the batch replicated, the hidden dim split); no move of a
// few nodes, nor of a forest, leaves it, since changing any part of the
// region alone costs a reshard at its border. Shardy and GSPMD start from
// the annotations instead and let each op follow the layouts its
// neighbours already have. This is that start in the solver's terms: from
// the nodes with one candidate (annotations, node strategies), best first
// along the pairs (the node whose choice is clearest goes next; plain
// breadth first let a replicated weight's cheap slices decide first and
// ended at 46 us on the bidirectional LSTM), every node takes the candidate
// cheapest with its neighbours assigned so far (its own cost plus those
// pairs' costs), so a split that costs nothing to follow is followed from
// op to op.
//
//===----------------------------------------------------------------------===//

#include "SolverInternal.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <queue>

using namespace autoshard;

namespace autoshard::solver {

namespace {
/// The best-first propagation: each unassigned node next to an assigned
/// one keeps its costs given the neighbours assigned so far, and the node
/// whose choice is clearest (the largest gap between its cheapest
/// candidate and the next) is assigned next.
class Propagation {
public:
  explicit Propagation(const Problem &pb)
      : pb(pb), x(pb.n, kUnset), begin(pb.n + 1, 0), started(pb.n, false),
        stamp(pb.n, 0) {
    for (unsigned v = 0; v < pb.n; ++v)
      begin[v + 1] = begin[v] + pb.k(v);
    costs.resize(begin[pb.n]);
  }

  std::optional<std::vector<unsigned>>
  run(const std::vector<unsigned> &fallback, double limit) {
    // Nodes with one candidate (annotations, node strategies) come first.
    for (unsigned v : pb.rankOrder)
      if (pb.k(v) == 1)
        touch(v);
    auto rankIt = pb.rankOrder.begin();
    while (true) {
      if (heap.empty()) {
        // Nodes nothing assigned reaches start from the fallback, one
        // component at a time (lowest rank first).
        while (rankIt != pb.rankOrder.end() && x[*rankIt] != kUnset)
          ++rankIt;
        if (rankIt == pb.rankOrder.end())
          break;
        assign(*rankIt, fallback[*rankIt]);
      } else {
        Entry e = heap.top();
        heap.pop();
        if (x[e.node] != kUnset || e.stamp != stamp[e.node])
          continue;
        const double *c = costsOf(e.node);
        // The first least candidate: ties keep the lower index.
        unsigned arg = 0;
        for (unsigned i = 1, k = pb.k(e.node); i < k; ++i)
          if (c[i] < c[arg])
            arg = i;
        assign(e.node, arg);
      }
      // Costs are not negative: the whole seed costs at least as much as
      // the part assigned so far.
      if (!strictlyBetter(partial, limit))
        return std::nullopt;
    }
    return std::move(x);
  }

private:
  static constexpr unsigned kUnset = ~0u;
  struct Entry {
    double gap;
    unsigned rank, node;
    uint64_t stamp;
    /// Largest gap first, then lowest rank.
    bool operator<(const Entry &o) const {
      return gap != o.gap ? gap < o.gap : rank > o.rank;
    }
  };

  /// Node v's costs given the neighbours assigned so far (its unary costs
  /// until one is).
  double *costsOf(unsigned v) {
    double *c = costs.data() + begin[v];
    if (!started[v]) {
      std::copy(pb.unary[v]->begin(), pb.unary[v]->end(), c);
      started[v] = true;
    }
    return c;
  }

  /// (Re)queues unassigned node v with the gap of its current costs.
  void touch(unsigned v) {
    const double *c = costsOf(v);
    double least = kInfeasibleCost * 4, next = kInfeasibleCost * 4;
    for (unsigned i = 0, k = pb.k(v); i < k; ++i) {
      double ci = c[i];
      if (ci < least) {
        next = least;
        least = ci;
      } else if (ci < next) {
        next = ci;
      }
    }
    heap.push({next - least, pb.rank[v], v, ++stamp[v]});
  }

  /// Assigns v, adding its cost with the nodes assigned before it to
  /// `partial` and its pair costs to its unassigned neighbours'.
  void assign(unsigned v, unsigned cand) {
    x[v] = cand;
    partial += costsOf(v)[cand];
    for (unsigned id : pb.incident(v)) {
      const Pair &p = pb.pairs[id];
      unsigned w = pb.other(p, v);
      if (x[w] != kUnset)
        continue;
      double *c = costsOf(w);
      unsigned kw = pb.k(w);
      if (p.a == w) { // w's candidates down a column
        const double *m = p.m + cand;
        for (unsigned i = 0, kb = pb.k(v); i < kw; ++i)
          c[i] += m[size_t(i) * kb];
      } else { // along a row
        const double *m = p.m + size_t(cand) * kw;
        for (unsigned i = 0; i < kw; ++i)
          c[i] += m[i];
      }
      touch(w);
    }
  }

  const Problem &pb;
  std::vector<unsigned> x;
  /// Every node's costs, node v's at [begin[v], begin[v + 1]).
  std::vector<size_t> begin;
  std::vector<double> costs;
  std::vector<bool> started;
  std::vector<uint64_t> stamp;
  std::priority_queue<Entry> heap;
  /// The cost of the assigned nodes and the pairs between them.
  double partial = 0.0;
};
} // namespace

std::optional<std::vector<unsigned>>
propagationSeed(const Problem &pb, const std::vector<unsigned> &fallback,
                double limit) {
  return Propagation(pb).run(fallback, limit);
}

} // namespace autoshard::solver
