//===- SolverProblem.cpp - The normalised problem ---------------------------===//
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

static bool finite(double c) { return std::fabs(c) < kInfeasibleCost / 2; }

/// A cost in internal units: whole multiples of 1/scale, infeasible kept.
static double quantiseCost(double c, double scale) {
  return finite(c) ? roundToWhole(c * scale) : kInfeasibleCost;
}

/// Restrictions resolved (each node's allowed candidates) and node costs
/// quantised; returns the scale (internal units per unit of the graph's
/// costs).
static double resolveAndQuantiseNodes(const SolverGraph &graph, Problem &pb) {
  pb.n = graph.getNumNodes();
  pb.allowed = resolveRestrictionsSparse(graph);
  pb.unrestricted.resize(pb.n);
  pb.numAllowed.resize(pb.n);
  for (unsigned v = 0; v < pb.n; ++v) {
    pb.unrestricted[v] = pb.allowed[v].empty();
    pb.numAllowed[v] =
        pb.unrestricted[v] ? graph.getNumCandidates(v) : pb.allowed[v].size();
  }
  pb.unary.resize(pb.n);
  // Costs become whole multiples of 2^-s, with s as large as keeps every
  // finite sum of one cost per node and per edge below 2^51: all sums are
  // then exact, so they do not depend on the order of the additions, ties
  // stay ties, and adding a constant to a table commutes with everything
  // (the elimination memo matches tables up to a constant). The rounding is
  // below 2^-52 of the largest possible total.
  auto largest = [&](const std::vector<double> &costs) {
    double most = 0.0;
    for (double c : costs)
      if (finite(c))
        most = std::max(most, std::fabs(c));
    return most;
  };
  // Nodes share cost vectors (the layers of a model): each is scanned once.
  std::unordered_map<const void *, double> costsLargest;
  double bound = 0.0;
  for (unsigned v = 0; v < pb.n; ++v) {
    const std::vector<double> &costs = *graph.getNode(v).costs;
    auto [it, inserted] = costsLargest.try_emplace(&costs, 0.0);
    if (inserted)
      it->second = largest(costs);
    bound += it->second;
  }
  // Edges share tables (the layers of a model): each is scanned once.
  std::unordered_map<const SolverGraph::EdgeTable *, double> tableLargest;
  for (const SolverGraph::Edge &e : graph.getEdges()) {
    auto [it, inserted] = tableLargest.try_emplace(e.table.get(), 0.0);
    if (inserted)
      it->second = largest(e.table->cost);
    bound += it->second;
  }
  int exp = 0;
  std::frexp(bound, &exp); // bound < 2^exp
  // Internal units per unit of the graph's costs; results are reported in
  // the graph's own units (solve() evaluates the graph).
  const double scale = bound > 0.0 ? std::ldexp(1.0, 51 - exp) : 1.0;
  auto quantise = [&](double c) { return quantiseCost(c, scale); };
  // Unrestricted nodes with the same cost vector share its quantised copy.
  std::unordered_map<const void *, std::shared_ptr<const std::vector<double>>>
      quantisedUnary;
  for (unsigned v = 0; v < pb.n; ++v) {
    const std::vector<double> &costs = *graph.getNode(v).costs;
    std::shared_ptr<const std::vector<double>> *shared = nullptr;
    if (pb.unrestricted[v]) {
      shared = &quantisedUnary[&costs];
      if (*shared) {
        pb.unary[v] = *shared;
        continue;
      }
    }
    // Copied first, then quantised in place: a loop that vectorises.
    auto unary = std::make_shared<std::vector<double>>();
    if (pb.unrestricted[v]) {
      *unary = costs;
    } else {
      unary->resize(pb.k(v));
      for (unsigned i = 0; i < pb.k(v); ++i)
        (*unary)[i] = costs[pb.allowed[v][i]];
    }
    for (double &c : *unary)
      c = quantise(c);
    pb.unary[v] = unary;
    if (shared)
      *shared = std::move(unary);
  }
  return scale;
}

/// Rank = key order (ties by id).
static void rankNodes(const SolverGraph &graph, Problem &pb) {
  // The keys' first 8 bytes, big-endian and
  // zero-padded, order them as the strings do wherever they differ, so most
  // comparisons never touch the strings.
  std::vector<std::pair<uint64_t, unsigned>> byKey(pb.n);
  for (unsigned v = 0; v < pb.n; ++v) {
    const std::string &key = graph.getNode(v).key;
    uint64_t prefix = 0;
    for (size_t i = 0; i < 8; ++i)
      prefix = (prefix << 8) |
               (i < key.size() ? static_cast<unsigned char>(key[i]) : 0u);
    byKey[v] = {prefix, v};
  }
  std::sort(byKey.begin(), byKey.end(), [&](const auto &x, const auto &y) {
    if (x.first != y.first)
      return x.first < y.first;
    int c = graph.getNode(x.second).key.compare(graph.getNode(y.second).key);
    return c != 0 ? c < 0 : x.second < y.second;
  });
  pb.rankOrder.resize(pb.n);
  for (unsigned i = 0; i < pb.n; ++i)
    pb.rankOrder[i] = byKey[i].second;
  pb.rank.resize(pb.n);
  for (unsigned i = 0; i < pb.n; ++i)
    pb.rank[pb.rankOrder[i]] = i;
}

/// Each node's depth along the edges (the elimination's tie-break).
static void computeDepths(const SolverGraph &graph, Problem &pb) {
  // Depths by Kahn's algorithm (the order of the sweep does not matter).
  {
    const auto &es = graph.getEdges();
    std::vector<unsigned> indeg(pb.n, 0), first(pb.n + 1, 0), succ(es.size());
    for (const SolverGraph::Edge &e : es)
      ++indeg[e.dst], ++first[e.src + 1];
    for (unsigned v = 0; v < pb.n; ++v)
      first[v + 1] += first[v];
    std::vector<unsigned> fill(first.begin(), first.end() - 1);
    for (const SolverGraph::Edge &e : es)
      succ[fill[e.src]++] = e.dst;
    pb.depth.assign(pb.n, 0);
    std::vector<unsigned> ready;
    for (unsigned v = 0; v < pb.n; ++v)
      if (!indeg[v])
        ready.push_back(v);
    while (!ready.empty()) {
      unsigned v = ready.back();
      ready.pop_back();
      for (unsigned i = first[v]; i < first[v + 1]; ++i) {
        unsigned w = succ[i];
        pb.depth[w] = std::max(pb.depth[w], pb.depth[v] + 1);
        if (--indeg[w] == 0)
          ready.push_back(w);
      }
    }
  }
}

namespace {

/// Builds the pairs of nodes joined by edges, with their summed, quantised
/// matrices (shared between pairs of equal content) and spreads, in four
/// phases: group the edges by pair, find which pairs share a matrix,
/// quantise the tables those matrices read, build each matrix once.
class PairBuilder {
public:
  PairBuilder(const SolverGraph &graph, Problem &pb, double scale,
              const ParallelFor &parallel)
      : edges(graph.getEdges()), pb(pb), scale(scale), parallel(parallel) {}

  void run() {
    groupEdgesByPair();
    findSharedMatrices();
    quantiseTables();
    parallelFor(builds.size(), [&](size_t id) { buildMatrix(id); });
    for (size_t id = 0; id < pb.pairs.size(); ++id) {
      Pair &p = pb.pairs[id];
      const Shared &sh = shared[matrixOfPair[id]];
      p.matrix = sh.matrix;
      p.m = p.matrix->data();
      p.spread = sh.spread;
    }
  }

private:
  /// A matrix several pairs may share: the key it is found by, and what
  /// buildMatrix makes.
  struct Shared {
    std::vector<uint64_t> key;
    std::shared_ptr<const std::vector<double>> matrix;
    double spread = 0.0;
  };
  /// shared[i]'s matrix is the sum of the edges byPair[first, last), from
  /// pair node a (rows) to b (columns).
  struct Build {
    size_t first, last;
    unsigned a, b;
  };

  void parallelFor(size_t n, const std::function<void(size_t)> &fn) {
    if (parallel && n > 1)
      return parallel(n, fn);
    for (size_t i = 0; i < n; ++i)
      fn(i);
  }
  void groupEdgesByPair();
  void findSharedMatrices();
  void appendAllowed(std::vector<uint64_t> &key, unsigned v) const;
  void quantiseTables();
  void buildMatrix(size_t id);

  const std::vector<SolverGraph::Edge> &edges;
  Problem &pb;
  double scale;
  const ParallelFor &parallel;
  /// (rank pair, edge id), sorted: the edges of each unordered pair of
  /// nodes, pairs in rank order, then in the order the edges were added (as
  /// the sums require).
  std::vector<std::pair<uint64_t, unsigned>> byPair;
  std::vector<Shared> shared;
  std::vector<Build> builds;
  /// Each pb.pairs entry's index into `shared`.
  std::vector<size_t> matrixOfPair;
  /// Each table's costs quantised once, by class pair, rather than once per
  /// candidate pair of every matrix built from it.
  std::unordered_map<const SolverGraph::EdgeTable *, std::vector<double>>
      quantised;
};

} // namespace

void PairBuilder::groupEdgesByPair() {
  byPair.reserve(edges.size());
  for (unsigned i = 0; i < edges.size(); ++i) {
    unsigned ra = pb.rank[edges[i].src], rb = pb.rank[edges[i].dst];
    if (ra > rb)
      std::swap(ra, rb);
    byPair.emplace_back((uint64_t(ra) << 32) | rb, i);
  }
  std::sort(byPair.begin(), byPair.end());
}

/// A node's allowed candidates, as part of a pair's key.
void PairBuilder::appendAllowed(std::vector<uint64_t> &key, unsigned v) const {
  // Unrestricted: the candidate count is the tables' (validated).
  key.push_back(pb.unrestricted[v] ? ~uint64_t(0) : pb.k(v));
  if (!pb.unrestricted[v])
    key.insert(key.end(), pb.allowed[v].begin(), pb.allowed[v].end());
}

/// A pair's matrix depends only on its edges' tables and directions (in
/// order) and on its nodes' allowed candidates, which for an unrestricted
/// node follow from the tables: pairs with the same such key (the layers of
/// a model) share one matrix, built once. Sharing also lets the elimination
/// memo recognise them by pointer. Serial: sharing compares keys in order.
void PairBuilder::findSharedMatrices() {
  std::unordered_multimap<uint64_t, size_t> sharedByHash;
  std::vector<uint64_t> key;
  for (size_t first = 0; first < byPair.size();) {
    size_t last = first + 1;
    while (last < byPair.size() && byPair[last].first == byPair[first].first)
      ++last;
    const SolverGraph::Edge &e0 = edges[byPair[first].second];
    bool srcFirst0 = pb.rank[e0.src] < pb.rank[e0.dst];
    Pair p;
    p.a = srcFirst0 ? e0.src : e0.dst;
    p.b = srcFirst0 ? e0.dst : e0.src;

    key.assign(1, last - first);
    for (size_t i = first; i < last; ++i) {
      const SolverGraph::Edge &e = edges[byPair[i].second];
      key.push_back(reinterpret_cast<uintptr_t>(e.table.get()) * 2 +
                    (e.src == p.a));
    }
    appendAllowed(key, p.a);
    appendAllowed(key, p.b);
    uint64_t hash = hashEntries(key.data(), key.size());
    auto range = sharedByHash.equal_range(hash);
    auto found = std::find_if(range.first, range.second, [&](const auto &it) {
      return shared[it.second].key == key;
    });
    if (found != range.second) {
      matrixOfPair.push_back(found->second);
    } else {
      for (size_t i = first; i < last; ++i)
        quantised.try_emplace(edges[byPair[i].second].table.get());
      matrixOfPair.push_back(shared.size());
      sharedByHash.emplace(hash, shared.size());
      shared.push_back({key, nullptr});
      builds.push_back({first, last, p.a, p.b});
    }
    pb.pairs.push_back(std::move(p));
    first = last;
  }
}

void PairBuilder::quantiseTables() {
  std::vector<std::pair<const SolverGraph::EdgeTable *, std::vector<double> *>>
      toQuantise;
  toQuantise.reserve(quantised.size());
  for (auto &[table, costs] : quantised)
    toQuantise.emplace_back(table, &costs);
  parallelFor(toQuantise.size(), [&](size_t i) {
    const std::vector<double> &from = toQuantise[i].first->cost;
    std::vector<double> &to = *toQuantise[i].second;
    to.resize(from.size());
    for (size_t j = 0; j < from.size(); ++j)
      to[j] = quantiseCost(from[j], scale);
  });
}

/// shared[id]'s matrix and spread. Runs concurrently with the other builds:
/// each writes its own entry and reads only the graph and `quantised`.
void PairBuilder::buildMatrix(size_t id) {
  const Build &bd = builds[id];
  unsigned a = bd.a, b = bd.b, ka = pb.k(a), kb = pb.k(b);
  auto m = std::make_shared<std::vector<double>>();
  m->assign(size_t(ka) * kb + kPad, 0.0);
  // Entry (x, y) of an edge's table is cost[rowOff[x] + colOff[y]]: the
  // class lookups are done once per candidate, not once per entry.
  std::vector<size_t> rowOff(ka), colOff(kb);
  for (size_t i = bd.first; i < bd.last; ++i) {
    const SolverGraph::Edge &e = edges[byPair[i].second];
    bool srcFirst = e.src == a;
    const SolverGraph::EdgeTable &t = *e.table;
    size_t nd = t.numDstClasses;
    for (unsigned x = 0; x < ka; ++x) {
      unsigned c = pb.candidate(a, x);
      rowOff[x] = srcFirst ? t.srcClass[c] * nd : t.dstClass[c];
    }
    for (unsigned y = 0; y < kb; ++y) {
      unsigned c = pb.candidate(b, y);
      colOff[y] = srcFirst ? t.dstClass[c] : t.srcClass[c] * nd;
    }
    const double *cost = quantised.find(&t)->second.data();
    for (unsigned x = 0; x < ka; ++x) {
      double *row = m->data() + size_t(x) * kb;
      const double *from = cost + rowOff[x];
      for (unsigned y = 0; y < kb; ++y)
        row[y] = std::min(kInfeasibleCost, row[y] + from[colOff[y]]);
    }
  }
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  bool infeasible = false;
  for (size_t i = 0, e = size_t(ka) * kb; i < e; ++i) {
    double c = (*m)[i];
    lo = std::min(lo, c);
    if (c >= kInfeasibleCost / 2)
      infeasible = true;
    else
      hi = std::max(hi, c);
  }
  shared[id].spread = infeasible ? kInfeasibleCost : (hi > lo ? hi - lo : 0.0);
  shared[id].matrix = std::move(m);
}

/// Each node's pairs, as a CSR index.
static void indexIncidentPairs(Problem &pb) {
  pb.incidentBegin.assign(pb.n + 1, 0);
  for (const Pair &p : pb.pairs)
    ++pb.incidentBegin[p.a + 1], ++pb.incidentBegin[p.b + 1];
  for (unsigned v = 0; v < pb.n; ++v)
    pb.incidentBegin[v + 1] += pb.incidentBegin[v];
  pb.incidentIds.resize(2 * pb.pairs.size());
  {
    std::vector<unsigned> fill(pb.incidentBegin.begin(),
                               pb.incidentBegin.end() - 1);
    for (unsigned id = 0; id < pb.pairs.size(); ++id) {
      pb.incidentIds[fill[pb.pairs[id].a]++] = id;
      pb.incidentIds[fill[pb.pairs[id].b]++] = id;
    }
  }
}

Problem normalise(const SolverGraph &graph, const ParallelFor &parallel) {
  Problem pb;
  double scale = resolveAndQuantiseNodes(graph, pb);
  rankNodes(graph, pb);
  computeDepths(graph, pb);
  PairBuilder(graph, pb, scale, parallel).run();
  indexIncidentPairs(pb);
  return pb;
}

bool strictlyBetter(double candidate, double current) {
  return candidate < current - 1e-9 * std::max(1.0, std::fabs(current));
}

/// The least of x[0..n) (NaN-free; +infinity when n = 0), in four
/// independent chains: one serial std::min chain costs a compare's latency
/// per entry, and the local search takes the least of every belief it
/// touches.
double leastOf(const double *x, size_t n) {
  const double inf = std::numeric_limits<double>::infinity();
  double lo[4] = {inf, inf, inf, inf};
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j)
      lo[j] = std::min(lo[j], x[i + j]);
  for (; i < n; ++i)
    lo[0] = std::min(lo[0], x[i]);
  return std::min(std::min(lo[0], lo[1]), std::min(lo[2], lo[3]));
}

/// belief[c] += cost[c] + shift for c < k, where an infeasible cost (at
/// least kInfeasibleCost / 2) adds kInfeasibleCost and every sum stops at
/// kInfeasibleCost: a message received in a tree pass.
void addMessage(double *belief, const double *cost, double shift, size_t k) {
  for (size_t c = 0; c < k; ++c) {
    double m = cost[c];
    double add = m < kInfeasibleCost / 2 ? m + shift : kInfeasibleCost;
    belief[c] = std::min(kInfeasibleCost, belief[c] + add);
  }
}

/// The candidate a node moves to from `current` given its `costs`: a scan
/// in index order takes each candidate strictly better than the one held,
/// so ties keep `current` (descent then terminates). Most nodes keep theirs,
/// which the least cost shows without the scan: no candidate is strictly
/// better than `current` when the least one is not.
unsigned bestMove(const double *costs, unsigned k, unsigned current) {
  if (!strictlyBetter(leastOf(costs, k), costs[current]))
    return current;
  unsigned arg = current;
  for (unsigned c = 0; c < k; ++c)
    if (strictlyBetter(costs[c], costs[arg]))
      arg = c;
  return arg;
}

} // namespace autoshard::solver
