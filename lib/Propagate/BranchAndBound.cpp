//===- BranchAndBound.cpp - The exact oracle's search -----------------------===//
//
// See SolverInternal.h. Depth-first branch and bound, started from the
// local search's plan (the cheaper end of its two descents) as the
// incumbent, one connected component at a time, with a lower bound that is
// exact on trees: a min-sum pass over a forest of the unplaced nodes' pairs
// (each node's tree pair goes to an earlier node in the search order), the
// other pairs bounded by their least entry. The per-pair bound it replaces
// let every pair take its cheapest entry on its own; a layout that is
// cheap at a node but must be resharded further along a chain (a weight's
// slices feeding a batch-split recurrence) was then refuted only by
// placing the whole chain, and the bidirectional LSTM with only its inputs
// annotated (test/Propagate/bilstm-inputs.test) took 3,069,427 search nodes
// to prove the plan the local search had already found; the forest bound
// proves it in 1,604.
//
//===----------------------------------------------------------------------===//

#include "SolverInternal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

using namespace autoshard;

namespace autoshard::solver {

namespace {

/// Nodes with one candidate are placed before the search: their pairs are
/// unary costs of their neighbours, and the other (free) nodes fall apart
/// into components that do not interact, so each is searched alone and
/// their optima add up (a gap left open in one would otherwise have the
/// search enumerate the ties of every component placed after it).
class BranchAndBound {
public:
  BranchAndBound(const Problem &pb, uint64_t budget,
                 std::vector<unsigned> seed);
  /// Searches every component; false when the budget ran out (a component
  /// not finished keeps the best assignment found, at worst the seed's).
  bool run();
  const std::vector<unsigned> &best() const { return bestX; }
  uint64_t explored() const { return numExplored; }

private:
  void orderComponents();
  void prepareBounds();
  double componentCost(unsigned begin, unsigned end) const;
  double lowerBound(unsigned depth);
  void search(unsigned depth, double soFar);

  const Problem &pb;
  /// Node visits the lower bounds may make in all (see lowerBound), and
  /// those made so far: a search node's cost grows with its component.
  uint64_t budget, visits = 0;
  uint64_t numExplored = 0;
  bool exhausted = false;
  /// Free nodes in search order, component after component; component i
  /// is order[compBegin[i], compBegin[i + 1]).
  std::vector<unsigned> order, compBegin;
  /// node -> position in `order`; -1 for the fixed nodes (placed first).
  std::vector<int> pos;
  /// Each free node's tree pair to an earlier node of its component (the
  /// one with the widest spread), or -1.
  std::vector<int> treePair;
  /// offTree[v][c]: the least entries of v's pairs to later nodes that are
  /// not their tree pair, with v at c.
  std::vector<std::vector<double>> offTree;
  /// Unary costs plus the pairs to placed nodes (fixed ones included).
  std::vector<std::vector<double>> partial;
  /// The tree pass's messages into each node, and a scratch belief.
  std::vector<std::vector<double>> inbox;
  std::vector<double> belief;
  /// Each search level's candidate keys and order and its neighbours'
  /// saved partial costs (see search).
  std::vector<double> stack;
  std::vector<unsigned> candStack;
  std::vector<unsigned> x, bestX;
  /// The component being searched, order[compFirst, compEnd), and the cost
  /// of its best assignment so far.
  unsigned compFirst = 0, compEnd = 0;
  double bestCost = 0.0;
};

} // namespace

BranchAndBound::BranchAndBound(const Problem &pb, uint64_t budget,
                               std::vector<unsigned> seed)
    : pb(pb), budget(budget), x(seed), bestX(std::move(seed)) {
  orderComponents();
  prepareBounds();
}

/// Components by breadth-first search over the pairs between free nodes,
/// smallest first (a budget spent on a large one leaves the small ones
/// solved); within one, repeatedly the unplaced node with most placed
/// neighbours, ties by rank, so pairs are paid for as early as possible.
void BranchAndBound::orderComponents() {
  unsigned n = pb.n;
  pos.assign(n, -1);
  std::vector<bool> seen(n, false);
  std::vector<std::vector<unsigned>> comps;
  for (unsigned r : pb.rankOrder) {
    if (pb.k(r) < 2 || seen[r])
      continue;
    seen[r] = true;
    std::vector<unsigned> members{r};
    for (size_t head = 0; head < members.size(); ++head)
      for (unsigned id : pb.incident(members[head])) {
        unsigned w = pb.other(pb.pairs[id], members[head]);
        if (pb.k(w) >= 2 && !seen[w]) {
          seen[w] = true;
          members.push_back(w);
        }
      }
    std::sort(members.begin(), members.end(),
              [&](unsigned a, unsigned b) { return pb.rank[a] < pb.rank[b]; });
    comps.push_back(std::move(members));
  }
  std::stable_sort(comps.begin(), comps.end(),
                   [](const auto &a, const auto &b) {
                     return a.size() < b.size();
                   });
  std::vector<unsigned> placedNbrs(n, 0);
  for (const std::vector<unsigned> &members : comps) {
    compBegin.push_back(order.size());
    for (size_t step = 0; step < members.size(); ++step) {
      unsigned pick = n;
      for (unsigned v : members)
        if (pos[v] < 0 && (pick == n || placedNbrs[v] > placedNbrs[pick]))
          pick = v;
      pos[pick] = order.size();
      order.push_back(pick);
      for (unsigned id : pb.incident(pick))
        ++placedNbrs[pb.other(pb.pairs[id], pick)];
    }
  }
  compBegin.push_back(order.size());
}

/// Fixed nodes' pairs into their neighbours' partial costs, the tree pairs
/// (see treePair), and offTree.
void BranchAndBound::prepareBounds() {
  partial = pb.unaryCopy();
  treePair.assign(pb.n, -1);
  offTree.resize(pb.n);
  inbox.resize(pb.n);
  for (unsigned v = 0; v < pb.n; ++v) {
    offTree[v].assign(pb.k(v), 0.0);
    inbox[v].assign(pb.k(v), 0.0);
    for (unsigned id : pb.incident(v)) {
      unsigned w = pb.other(pb.pairs[id], v);
      if (pos[v] < 0 || pos[w] < 0 || pos[w] > pos[v])
        continue;
      int cur = treePair[v];
      if (cur < 0 || pb.pairs[id].spread > pb.pairs[cur].spread)
        treePair[v] = id;
    }
  }
  for (unsigned id = 0; id < pb.pairs.size(); ++id) {
    const Pair &p = pb.pairs[id];
    unsigned first = pos[p.a] < pos[p.b] ? p.a : p.b;
    unsigned second = pb.other(p, first);
    if (pos[first] < 0) {
      if (pos[second] >= 0)
        for (unsigned c = 0; c < pb.k(second); ++c)
          partial[second][c] += pb.pairCost(p, second, c, x[first]);
      continue;
    }
    if (treePair[second] == int(id))
      continue;
    for (unsigned c = 0; c < pb.k(first); ++c) {
      double lo = std::numeric_limits<double>::infinity();
      for (unsigned c2 = 0; c2 < pb.k(second); ++c2)
        lo = std::min(lo, pb.pairCost(p, first, c, c2));
      offTree[first][c] += lo;
    }
  }
}

/// The cost of order[begin, end) at x: their partial costs (nothing of
/// theirs is placed) plus the pairs between them.
double BranchAndBound::componentCost(unsigned begin, unsigned end) const {
  double total = 0.0;
  for (unsigned d = begin; d < end; ++d) {
    unsigned v = order[d];
    total += partial[v][x[v]];
    for (unsigned id : pb.incident(v)) {
      const Pair &p = pb.pairs[id];
      unsigned w = pb.other(p, v);
      if (pos[w] > pos[v])
        total += pb.pairCost(p, v, x[v], x[w]);
    }
  }
  return total;
}

/// A lower bound on the cost of the component's nodes from `depth` on,
/// given those placed: min-sum over the forest of tree pairs between
/// unplaced nodes, last node first, each node's belief (its partial costs,
/// offTree and its children's messages) sent to its tree parent while that
/// is unplaced and added at its least otherwise. Pairs to placed nodes are
/// exact in `partial`, the others are in offTree or a message once each.
/// Leaves inbox[order[depth]] for ordering that node's candidates.
double BranchAndBound::lowerBound(unsigned depth) {
  visits += compEnd - depth;
  for (unsigned d = depth; d < compEnd; ++d)
    std::fill(inbox[order[d]].begin(), inbox[order[d]].end(), 0.0);
  double bound = 0.0;
  for (unsigned d = compEnd; d-- > depth;) {
    unsigned w = order[d], kw = pb.k(w);
    belief.resize(kw);
    for (unsigned c = 0; c < kw; ++c)
      belief[c] = partial[w][c] + offTree[w][c] + inbox[w][c];
    int id = treePair[w];
    unsigned p = id >= 0 ? pb.other(pb.pairs[id], w) : w;
    if (id < 0 || pos[p] < int(depth)) {
      bound += leastOf(belief.data(), kw);
      continue;
    }
    for (unsigned cp = 0; cp < pb.k(p); ++cp) {
      double lo = std::numeric_limits<double>::infinity();
      for (unsigned c = 0; c < kw; ++c)
        lo = std::min(lo, belief[c] + pb.pairCost(pb.pairs[id], w, c, cp));
      inbox[p][cp] += lo;
    }
  }
  return bound;
}

void BranchAndBound::search(unsigned depth, double soFar) {
  ++numExplored;
  if (depth == compEnd) {
    if (soFar < bestCost) {
      bestCost = soFar;
      for (unsigned d = compFirst; d < compEnd; ++d)
        bestX[order[d]] = x[order[d]];
    }
    return;
  }
  if (visits >= budget) {
    exhausted = true;
    return;
  }
  double bound = soFar + lowerBound(depth);
  if (bound >= bestCost - 1e-9 * std::max(1.0, std::fabs(bestCost)))
    return;
  // Candidates by their bound (partial, offTree and the tree messages),
  // in a stack that the search's levels share, so a level allocates
  // nothing once the deepest has run.
  unsigned v = order[depth], kv = pb.k(v);
  size_t mark = stack.size(), candsAt = candStack.size();
  for (unsigned c = 0; c < kv; ++c) {
    stack.push_back(partial[v][c] + offTree[v][c] + inbox[v][c]);
    candStack.push_back(c);
  }
  const double *key = &stack[mark];
  std::stable_sort(candStack.begin() + candsAt, candStack.end(),
                   [&](unsigned a, unsigned b) { return key[a] < key[b]; });
  // The later neighbours' partial costs before v is placed, restored after
  // each candidate: taking a charge back by subtraction is not exact next
  // to an infeasible cost.
  size_t savedAt = stack.size();
  for (unsigned id : pb.incident(v)) {
    unsigned w = pb.other(pb.pairs[id], v);
    if (pos[w] > int(depth))
      stack.insert(stack.end(), partial[w].begin(), partial[w].end());
  }
  for (unsigned i = 0; i < kv; ++i) {
    unsigned c = candStack[candsAt + i];
    x[v] = c;
    for (unsigned id : pb.incident(v)) {
      const Pair &p = pb.pairs[id];
      unsigned w = pb.other(p, v);
      if (pos[w] > int(depth))
        for (unsigned cw = 0; cw < pb.k(w); ++cw)
          partial[w][cw] += pb.pairCost(p, w, cw, c);
    }
    search(depth + 1, soFar + partial[v][c]);
    const double *row = &stack[savedAt];
    for (unsigned id : pb.incident(v)) {
      unsigned w = pb.other(pb.pairs[id], v);
      if (pos[w] > int(depth)) {
        std::copy(row, row + pb.k(w), partial[w].begin());
        row += pb.k(w);
      }
    }
    if (exhausted)
      break;
  }
  stack.resize(mark);
  candStack.resize(candsAt);
}

bool BranchAndBound::run() {
  for (size_t i = 0; i + 1 < compBegin.size() && !exhausted; ++i) {
    compFirst = compBegin[i];
    compEnd = compBegin[i + 1];
    // The seed is the incumbent; only a strictly cheaper assignment
    // replaces it, so an optimal seed is returned as it is.
    x = bestX;
    bestCost = componentCost(compFirst, compEnd);
    search(compFirst, 0.0);
  }
  return !exhausted;
}

SolverResult solveBranchAndBound(const Problem &pb, uint64_t budget,
                                 std::vector<unsigned> seed) {
  BranchAndBound bb(pb, budget, std::move(seed));
  SolverResult res;
  res.optimal = bb.run();
  res.assignment = bb.best();
  res.cost = pb.evaluate(res.assignment);
  res.work = bb.explored();
  return res;
}

} // namespace autoshard::solver
