//===- Solver.cpp - Strategy selection over a cost graph ------------------===//
//
// See Solver.h. Internally the graph is normalised once: restrictions are
// resolved to a list of allowed candidates per node, parallel edges between
// the same two nodes are merged into one dense matrix over the allowed
// candidates, and nodes are ranked by their canonical key. Every loop below
// walks nodes and edges in rank order so the result is order-independent.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Propagate/Solver.h"

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

//===----------------------------------------------------------------------===//
// SolverGraph
//===----------------------------------------------------------------------===//

unsigned SolverGraph::addNode(std::string key, std::vector<double> costs) {
  return addNode(std::move(key),
                 std::make_shared<const std::vector<double>>(std::move(costs)));
}

unsigned
SolverGraph::addNode(std::string key,
                     std::shared_ptr<const std::vector<double>> costs) {
  nodes.push_back({std::move(key), std::move(costs)});
  return nodes.size() - 1;
}

void SolverGraph::addEdge(unsigned src, unsigned dst,
                          std::vector<unsigned> srcClass,
                          std::vector<unsigned> dstClass,
                          unsigned numSrcClasses, unsigned numDstClasses,
                          std::vector<double> cost) {
  auto table = std::make_shared<EdgeTable>();
  table->srcClass = std::move(srcClass);
  table->dstClass = std::move(dstClass);
  table->numSrcClasses = numSrcClasses;
  table->numDstClasses = numDstClasses;
  table->cost = std::move(cost);
  addEdge(src, dst, std::move(table));
}

void SolverGraph::addEdge(unsigned src, unsigned dst,
                          std::shared_ptr<const EdgeTable> table) {
  edges.push_back({src, dst, std::move(table)});
}

void SolverGraph::addEdge(unsigned src, unsigned dst,
                          std::vector<double> matrix) {
  unsigned ns = src < nodes.size() ? getNumCandidates(src) : 0;
  unsigned nd = dst < nodes.size() ? getNumCandidates(dst) : 0;
  std::vector<unsigned> sc(ns), dc(nd);
  std::iota(sc.begin(), sc.end(), 0u);
  std::iota(dc.begin(), dc.end(), 0u);
  addEdge(src, dst, std::move(sc), std::move(dc), ns, nd, std::move(matrix));
}

void SolverGraph::restrict(unsigned node, std::vector<unsigned> allowed,
                           int64_t priority) {
  std::sort(allowed.begin(), allowed.end());
  allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
  restrictions.push_back({node, std::move(allowed), priority});
}

std::string SolverGraph::validate() const {
  for (unsigned n = 0; n < nodes.size(); ++n)
    if (!nodes[n].costs || nodes[n].costs->empty())
      return "node '" + nodes[n].key + "' has no candidate";
  // A shared table is checked once (its sizes against each edge's nodes).
  std::unordered_set<const EdgeTable *> checked;
  checked.reserve(edges.size());
  for (const Edge &e : edges) {
    if (e.src >= nodes.size() || e.dst >= nodes.size())
      return "edge refers to a node that does not exist";
    if (e.src == e.dst)
      return "edge from node '" + nodes[e.src].key + "' to itself";
    if (!e.table)
      return "edge '" + nodes[e.src].key + "' -> '" + nodes[e.dst].key +
             "' has no cost table";
    const EdgeTable &t = *e.table;
    if (t.srcClass.size() != getNumCandidates(e.src) ||
        t.dstClass.size() != getNumCandidates(e.dst))
      return "edge '" + nodes[e.src].key + "' -> '" + nodes[e.dst].key +
             "' does not map every candidate to a class";
    if (!checked.insert(&t).second)
      continue;
    if (t.cost.size() != static_cast<size_t>(t.numSrcClasses) * t.numDstClasses)
      return "edge '" + nodes[e.src].key + "' -> '" + nodes[e.dst].key +
             "' has a cost table of the wrong size";
    for (unsigned c : t.srcClass)
      if (c >= t.numSrcClasses)
        return "edge class out of range";
    for (unsigned c : t.dstClass)
      if (c >= t.numDstClasses)
        return "edge class out of range";
  }
  for (const Restriction &r : restrictions) {
    if (r.node >= nodes.size())
      return "restriction on a node that does not exist";
    for (unsigned c : r.allowed)
      if (c >= getNumCandidates(r.node))
        return "restriction of node '" + nodes[r.node].key +
               "' names a candidate that does not exist";
  }
  return "";
}

double SolverGraph::evaluate(const std::vector<unsigned> &assignment) const {
  double total = 0.0;
  for (unsigned n = 0; n < nodes.size(); ++n)
    total += (*nodes[n].costs)[assignment[n]];
  for (const Edge &e : edges)
    total += e.get(assignment[e.src], assignment[e.dst]);
  return total;
}

std::string_view autoshard::stringifySolverKind(SolverKind kind) {
  switch (kind) {
  case SolverKind::DP:
    return "dp";
  case SolverKind::Exact:
    return "exact";
  case SolverKind::Local:
    return "local";
  }
  return "dp";
}

std::optional<SolverKind>
autoshard::symbolizeSolverKind(std::string_view name) {
  if (name == "dp")
    return SolverKind::DP;
  if (name == "exact")
    return SolverKind::Exact;
  if (name == "local")
    return SolverKind::Local;
  return std::nullopt;
}

/// resolveRestrictions, with an empty list for every node that keeps all
/// its candidates (most of them: no list is built for those).
static std::vector<std::vector<unsigned>>
resolveRestrictionsSparse(const SolverGraph &graph) {
  unsigned n = graph.getNumNodes();
  std::vector<std::vector<unsigned>> allowed(n);
  // Highest priority first; among equals the smaller candidate set (the more
  // specific constraint), then the lexicographically smaller set, so the
  // order restrictions were added in does not matter.
  std::vector<const SolverGraph::Restriction *> order;
  for (const auto &r : graph.getRestrictions())
    order.push_back(&r);
  std::sort(order.begin(), order.end(), [&](auto *a, auto *b) {
    if (a->priority != b->priority)
      return a->priority > b->priority;
    if (a->node != b->node)
      return graph.getNode(a->node).key < graph.getNode(b->node).key;
    if (a->allowed.size() != b->allowed.size())
      return a->allowed.size() < b->allowed.size();
    return a->allowed < b->allowed;
  });
  for (const auto *r : order) {
    std::vector<unsigned> &current = allowed[r->node];
    if (current.empty()) {
      // Every candidate: the meet is the restriction's set (less any
      // candidate that does not exist, in a graph not validated).
      unsigned k = graph.getNumCandidates(r->node);
      for (unsigned c : r->allowed)
        if (c < k)
          current.push_back(c);
      continue;
    }
    std::vector<unsigned> meet;
    std::set_intersection(current.begin(), current.end(), r->allowed.begin(),
                          r->allowed.end(), std::back_inserter(meet));
    if (!meet.empty())
      current = std::move(meet);
  }
  // A restriction to every candidate leaves the node unrestricted.
  for (unsigned v = 0; v < n; ++v)
    if (allowed[v].size() == graph.getNumCandidates(v))
      allowed[v].clear();
  return allowed;
}

std::vector<std::vector<unsigned>>
autoshard::resolveRestrictions(const SolverGraph &graph) {
  std::vector<std::vector<unsigned>> allowed = resolveRestrictionsSparse(graph);
  for (unsigned v = 0; v < graph.getNumNodes(); ++v)
    if (allowed[v].empty()) {
      allowed[v].resize(graph.getNumCandidates(v));
      std::iota(allowed[v].begin(), allowed[v].end(), 0u);
    }
  return allowed;
}

//===----------------------------------------------------------------------===//
// Normalised problem
//===----------------------------------------------------------------------===//

namespace {

/// Pair matrices and elimination tables end with kPad unused entries, so the
/// elimination kernel may read a whole vector past the end of a row.
constexpr size_t kPad = 4;

/// A merged edge between nodes a and b (rank(a) < rank(b)) over their
/// allowed candidates: m[i * kb + j]. Pairs built from the same edge table
/// (the layers of a model) share one matrix.
struct Pair {
  unsigned a = 0, b = 0;
  std::shared_ptr<const std::vector<double>> matrix;
  const double *m = nullptr; // matrix->data()
  /// The spread of the matrix's finite entries (largest less least), or
  /// kInfeasibleCost when it forbids a combination: the spanning forest's
  /// weight (see spanningForest), taken while the matrix is built and in
  /// cache rather than by reading every matrix again.
  double spread = 0.0;
};

struct Problem {
  unsigned n = 0;
  /// Each node's allowed candidates (see candidate()), and how many.
  std::vector<std::vector<unsigned>> allowed;
  std::vector<unsigned> numAllowed;
  /// Whether v may take every candidate (no restriction bit); allowed[v] is
  /// then empty rather than a list of them all.
  std::vector<bool> unrestricted;
  /// Each node's unary costs (over its allowed candidates); nodes with the
  /// same costs share one vector.
  std::vector<std::shared_ptr<const std::vector<double>>> unary;
  /// Copies of every node's unary costs, for the searches that update them.
  std::vector<std::vector<double>> unaryCopy() const {
    std::vector<std::vector<double>> out;
    out.reserve(n);
    for (const auto &u : unary)
      out.push_back(*u);
    return out;
  }
  std::vector<unsigned> rankOrder; // nodes sorted by canonical key
  std::vector<unsigned> rank;      // node -> position in rankOrder
  /// node -> longest path to it from a source along the edges (0 on a
  /// cycle): equal positions in repeated layers differ by a constant.
  std::vector<unsigned> depth;
  std::vector<Pair> pairs;
  /// node -> incident pair ids (see incident()), in one array: node v's
  /// are incidentIds[incidentBegin[v]] up to incidentBegin[v + 1].
  std::vector<unsigned> incidentIds, incidentBegin;

  struct IdRange {
    const unsigned *first, *last;
    const unsigned *begin() const { return first; }
    const unsigned *end() const { return last; }
  };
  /// Pair ids incident to v, in increasing order.
  IdRange incident(unsigned v) const {
    const unsigned *ids = incidentIds.data();
    return {ids + incidentBegin[v], ids + incidentBegin[v + 1]};
  }

  unsigned k(unsigned v) const { return numAllowed[v]; }
  /// The candidate of v (in the graph) at local index i.
  unsigned candidate(unsigned v, unsigned i) const {
    return unrestricted[v] ? i : allowed[v][i];
  }
  /// Cost of pair p with node v at local candidate cv and the other end at co.
  double pairCost(const Pair &p, unsigned v, unsigned cv, unsigned co) const {
    return p.a == v ? p.m[cv * k(p.b) + co] : p.m[co * k(p.b) + cv];
  }
  unsigned other(const Pair &p, unsigned v) const {
    return p.a == v ? p.b : p.a;
  }
  double evaluate(const std::vector<unsigned> &x) const {
    double total = 0.0;
    for (unsigned v = 0; v < n; ++v)
      total += (*unary[v])[x[v]];
    for (const Pair &p : pairs)
      total += p.m[x[p.a] * k(p.b) + x[p.b]];
    return total;
  }
};

/// A hash of n 8-byte values' bit patterns (doubles or integers), mixed
/// in four independent lanes: the local search hashes a belief per message
/// and elimination a table per step, and one serial chain costs a
/// multiply's latency per entry.
template <typename T> uint64_t hashEntries(const T *x, size_t n) {
  static_assert(sizeof(T) == sizeof(uint64_t), "hashes 8-byte values");
  uint64_t h[4] = {0x9e3779b97f4a7c15ull ^ n, 0xc2b2ae3d27d4eb4full,
                   0x165667b19e3779f9ull, 0xff51afd7ed558ccdull};
  auto mix = [&](int lane, const T *at) {
    uint64_t b;
    std::memcpy(&b, at, sizeof(b));
    h[lane] = (h[lane] ^ b) * 0xff51afd7ed558ccdull;
    h[lane] ^= h[lane] >> 32;
  };
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int lane = 0; lane < 4; ++lane)
      mix(lane, x + i + lane);
  for (; i < n; ++i)
    mix(0, x + i);
  uint64_t out = h[0];
  for (int lane = 1; lane < 4; ++lane) {
    out = (out ^ h[lane]) * 0x9e3779b97f4a7c15ull;
    out ^= out >> 29;
  }
  return out;
}

/// hashEntries of a word vector, for unordered containers keyed by one.
struct WordsHash {
  size_t operator()(const std::vector<uint64_t> &words) const {
    return static_cast<size_t>(hashEntries(words.data(), words.size()));
  }
};

/// std::nearbyint in the default rounding mode (to nearest, ties to even)
/// without a library call, so that quantising a table vectorises: below
/// 2^52, adding 2^52 rounds away the fraction and subtracting it back is
/// exact. The sign is restored as nearbyint keeps it (-0.3 gives -0.0).
inline double roundToWhole(double x) {
  constexpr double kTwo52 = 4503599627370496.0;
  double magnitude = std::fabs(x);
  if (!(magnitude < kTwo52))
    return x; // already whole (or not a number)
  return std::copysign((magnitude + kTwo52) - kTwo52, x);
}

Problem normalise(const SolverGraph &graph, const ParallelFor &parallel) {
  auto parallelFor = [&](size_t n, const std::function<void(size_t)> &fn) {
    if (parallel && n > 1)
      return parallel(n, fn);
    for (size_t i = 0; i < n; ++i)
      fn(i);
  };
  Problem pb;
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
  auto finite = [](double c) { return std::fabs(c) < kInfeasibleCost / 2; };
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
  auto quantise = [&](double c) {
    return finite(c) ? roundToWhole(c * scale) : kInfeasibleCost;
  };
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

  // Rank = key order (ties by id). The keys' first 8 bytes, big-endian and
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

  // Group edges per unordered pair of nodes, in rank order of the pair
  // (then in the order the edges were added, as the sums below require).
  const auto &edges = graph.getEdges();
  std::vector<std::pair<uint64_t, unsigned>> byPair;
  byPair.reserve(edges.size());
  for (unsigned i = 0; i < edges.size(); ++i) {
    unsigned ra = pb.rank[edges[i].src], rb = pb.rank[edges[i].dst];
    if (ra > rb)
      std::swap(ra, rb);
    byPair.emplace_back((uint64_t(ra) << 32) | rb, i);
  }
  std::sort(byPair.begin(), byPair.end());

  // A pair's matrix depends only on its edges' tables and directions (in
  // order) and on its nodes' allowed candidates, which for an unrestricted
  // node follow from the tables: pairs with the same such key (the layers
  // of a model) share one matrix, built once. Sharing also lets the
  // elimination memo recognise them by pointer.
  struct Shared {
    std::vector<uint64_t> key;
    std::shared_ptr<const std::vector<double>> matrix;
    double spread = 0.0;
  };
  std::vector<Shared> shared;
  std::unordered_multimap<uint64_t, size_t> sharedByHash;
  std::vector<uint64_t> key;
  auto appendAllowed = [&](unsigned v) {
    // Unrestricted: the candidate count is the tables' (validated).
    key.push_back(pb.unrestricted[v] ? ~uint64_t(0) : pb.k(v));
    if (!pb.unrestricted[v])
      key.insert(key.end(), pb.allowed[v].begin(), pb.allowed[v].end());
  };
  // Each table's costs quantised once, by class pair, rather than once per
  // candidate pair of every matrix built from it.
  std::unordered_map<const SolverGraph::EdgeTable *, std::vector<double>>
      quantised;
  // The matrices to build: builds[i] makes shared[i]'s, from the edges
  // byPair[first, last). Found serially (sharing compares keys in order),
  // then built each on its own, possibly concurrently: they write disjoint
  // memory and read only the graph and `quantised`.
  struct Build {
    size_t first, last;
    unsigned a, b;
  };
  std::vector<Build> builds;
  std::vector<size_t> matrixOfPair;
  for (size_t first = 0; first < byPair.size();) {
    size_t last = first + 1;
    while (last < byPair.size() && byPair[last].first == byPair[first].first)
      ++last;
    const SolverGraph::Edge &e0 = edges[byPair[first].second];
    bool srcFirst0 = pb.rank[e0.src] < pb.rank[e0.dst];
    Pair p;
    p.a = srcFirst0 ? e0.src : e0.dst;
    p.b = srcFirst0 ? e0.dst : e0.src;
    unsigned a = p.a, b = p.b;

    key.assign(1, last - first);
    for (size_t i = first; i < last; ++i) {
      const SolverGraph::Edge &e = edges[byPair[i].second];
      key.push_back(reinterpret_cast<uintptr_t>(e.table.get()) * 2 +
                    (e.src == a));
    }
    appendAllowed(a);
    appendAllowed(b);
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
      builds.push_back({first, last, a, b});
    }
    pb.pairs.push_back(std::move(p));
    first = last;
  }
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
      to[j] = quantise(from[j]);
  });
  parallelFor(builds.size(), [&](size_t id) {
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
    shared[id].spread =
        infeasible ? kInfeasibleCost : (hi > lo ? hi - lo : 0.0);
    shared[id].matrix = std::move(m);
  });
  for (size_t id = 0; id < pb.pairs.size(); ++id) {
    Pair &p = pb.pairs[id];
    const Shared &sh = shared[matrixOfPair[id]];
    p.matrix = sh.matrix;
    p.m = p.matrix->data();
    p.spread = sh.spread;
  }

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

//===----------------------------------------------------------------------===//
// Min-plus kernel
//===----------------------------------------------------------------------===//

/// Four doubles and their comparison mask (GCC/Clang vector extensions:
/// lowered to SSE2 pairs, or one AVX2 register in the avx2 clone).
typedef double V4 __attribute__((vector_size(32)));
typedef long long M4 __attribute__((vector_size(32)));

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define AUTOSHARD_VECTOR_CLONES                                                \
  __attribute__((target_clones("avx2", "default")))
#else
#define AUTOSHARD_VECTOR_CLONES
#endif

/// The inner loops of an elimination over N factor rows (the common counts
/// get unrolled instances whose row pointers stay in registers; N < 0: `n`
/// rows). Row j for candidate cv of v starts at rows[j] + cv * vStride[j].
/// Two loop orders, with the same sums and the same ties (every entry's sum
/// is formed in row order, v's candidates are compared in order, and the
/// first minimum wins):
///  - Blocked (the rows of one call fit in L1): four candidates w of the
///    scope's last node at a time, the running minimum and argmin in
///    registers while v's candidates go by.
///  - Streaming (larger rows, e.g. the local search's messages on 3-axis
///    meshes, ~150 candidates a side): v's candidates outermost, each row
///    read once, the minima kept in `best`/`arg` — re-reading every row
///    once per block of four would spill out of L1.
template <int N, bool Blocked>
inline void minRowN(unsigned kv, unsigned kw4, size_t n, const double *unary,
                    const double *const *rows, const size_t *vStride,
                    double *best, double *arg) {
  constexpr size_t kMax = N >= 0 ? (N > 0 ? N : 1) : 8;
  const size_t count = N >= 0 ? N : n;
  const double *fixedP[kMax];
  std::vector<const double *> manyP;
  const double **p = fixedP;
  if (N < 0 && count > kMax) {
    manyP.resize(count);
    p = manyP.data();
  }
  const double inf = std::numeric_limits<double>::infinity();
  const V4 one = {1.0, 1.0, 1.0, 1.0};
  if (!Blocked) {
    for (unsigned w = 0; w < kw4; ++w) {
      best[w] = inf;
      arg[w] = 0.0;
    }
    for (unsigned cv = 0; cv < kv; ++cv) {
      const double u = unary[cv];
      const double cvd = cv;
      const V4 c = {cvd, cvd, cvd, cvd};
      for (size_t j = 0; j < count; ++j)
        p[j] = rows[j] + cv * vStride[j];
      for (unsigned w = 0; w < kw4; w += 4) {
        V4 sum = {u, u, u, u};
        for (size_t j = 0; j < count; ++j) {
          V4 r;
          std::memcpy(&r, p[j] + w, sizeof(r));
          sum += r;
        }
        V4 b, g;
        std::memcpy(&b, best + w, sizeof(b));
        std::memcpy(&g, arg + w, sizeof(g));
        M4 lower = sum < b;
        b = (V4)(((M4)sum & lower) | ((M4)b & ~lower));
        g = (V4)(((M4)c & lower) | ((M4)g & ~lower));
        std::memcpy(best + w, &b, sizeof(b));
        std::memcpy(arg + w, &g, sizeof(g));
      }
    }
    return;
  }
  for (unsigned w = 0; w < kw4; w += 4) {
    for (size_t j = 0; j < count; ++j)
      p[j] = rows[j] + w;
    V4 b = {inf, inf, inf, inf}, g = {0.0, 0.0, 0.0, 0.0};
    V4 c = g;
    for (unsigned cv = 0; cv < kv; ++cv, c += one) {
      const double u = unary[cv];
      V4 sum = {u, u, u, u};
      for (size_t j = 0; j < count; ++j) {
        V4 r;
        std::memcpy(&r, p[j], sizeof(r));
        sum += r;
        p[j] += vStride[j];
      }
      // Ties keep the earlier candidate, as a scalar `if (sum < best)` scan.
      M4 lower = sum < b;
      b = (V4)(((M4)sum & lower) | ((M4)b & ~lower));
      g = (V4)(((M4)c & lower) | ((M4)g & ~lower));
    }
    std::memcpy(best + w, &b, sizeof(b));
    std::memcpy(arg + w, &g, sizeof(g));
  }
}

/// The inner loops of an elimination, for one assignment of the scope's
/// outer nodes: for every candidate w < kw of the scope's last node, the
/// minimum over v's candidates cv of unary[cv] plus each live factor's
/// entry, and the first cv reaching it. Factor i's entry for (cv, w) is
/// tab[i][base[i] + cv * vStride[i] + w * wStride[i]] with wStride 0 or 1.
/// best and arg get kw entries rounded up to 4. The factors without the
/// last node (wStride 0) are added to v's unary costs first, once per cv,
/// in `rowUnary` (kv entries; unused when every wStride is 1): costs are
/// whole units (see normalise()), so every finite sum is exact in any
/// order, and the minima and argmins are those of the sums in factor order.
AUTOSHARD_VECTOR_CLONES
void minRow(unsigned kv, unsigned kw, size_t numLive, const double *unary,
            const double *const *tab, const size_t *base, const size_t *vStride,
            const size_t *wStride, double *best, double *arg,
            double *rowUnary) {
  const unsigned kw4 = (kw + 3) & ~3u;
  const double *fixedRows[8];
  size_t fixedStrides[8];
  std::vector<const double *> manyRows;
  std::vector<size_t> manyStrides;
  const double **rows = fixedRows;
  size_t *strides = fixedStrides;
  if (numLive > 8) {
    manyRows.resize(numLive);
    manyStrides.resize(numLive);
    rows = manyRows.data();
    strides = manyStrides.data();
  }
  size_t m = 0;
  bool splats = false;
  for (size_t i = 0; i < numLive; ++i) {
    if (!wStride[i]) {
      splats = true;
      continue;
    }
    rows[m] = tab[i] + base[i];
    strides[m++] = vStride[i];
  }
  const double *u = unary;
  if (splats) {
    for (unsigned cv = 0; cv < kv; ++cv)
      rowUnary[cv] = unary[cv];
    for (size_t i = 0; i < numLive; ++i)
      if (!wStride[i])
        for (unsigned cv = 0; cv < kv; ++cv)
          rowUnary[cv] += tab[i][base[i] + cv * vStride[i]];
    u = rowUnary;
  }
  // The instances are called here, not through a helper, so that each
  // target clone inlines its own: a helper without the clones would run the
  // default target's code.
  // The blocked order re-reads every row once per block of four: it wins
  // while the rows stay in L1 (a 32 KiB budget).
  const bool blocked =
      size_t(kv) * kw4 * std::max<size_t>(m, 1) * sizeof(double) <= 32 * 1024;
#define AUTOSHARD_MIN_ROW(N)                                                   \
  return blocked ? minRowN<N, true>(kv, kw4, m, u, rows, strides, best, arg)   \
                 : minRowN<N, false>(kv, kw4, m, u, rows, strides, best, arg)
  switch (m) {
  case 0:
    AUTOSHARD_MIN_ROW(0);
  case 1:
    AUTOSHARD_MIN_ROW(1);
  case 2:
    AUTOSHARD_MIN_ROW(2);
  case 3:
    AUTOSHARD_MIN_ROW(3);
  case 4:
    AUTOSHARD_MIN_ROW(4);
  default:
    AUTOSHARD_MIN_ROW(-1);
  }
#undef AUTOSHARD_MIN_ROW
}

//===----------------------------------------------------------------------===//
// Forest DP
//===----------------------------------------------------------------------===//

/// A spanning forest: for every node its tree pairs, chosen by Kruskal on
/// decreasing pair weight (ties in rank order).
std::vector<bool> spanningForest(const Problem &pb) {
  // A pair's weight is the spread of its finite costs (Pair::spread); pairs
  // that forbid combinations come first, as they must be solved exactly.
  std::vector<double> weight(pb.pairs.size());
  for (size_t id = 0; id < pb.pairs.size(); ++id)
    weight[id] = pb.pairs[id].spread;
  std::vector<unsigned> order(pb.pairs.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](unsigned x, unsigned y) {
    return weight[x] > weight[y];
  });
  std::vector<unsigned> parent(pb.n);
  std::iota(parent.begin(), parent.end(), 0u);
  auto find = [&](unsigned x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<bool> inTree(pb.pairs.size(), false);
  for (unsigned id : order) {
    unsigned ra = find(pb.pairs[id].a), rb = find(pb.pairs[id].b);
    if (ra == rb)
      continue;
    parent[std::max(ra, rb)] = std::min(ra, rb);
    inTree[id] = true;
  }
  return inTree;
}

/// belief[c] += costs[c * stride] for every c.
void addCosts(std::vector<double> &belief, const double *costs,
              size_t stride = 1) {
  for (size_t c = 0; c < belief.size(); ++c)
    belief[c] += costs[c * stride];
}

/// The message kernel for a pair stored parent-major (m[cp * kv + cv]): for
/// every parent candidate cp, the least belief[cv] + m[cp * kv + cv] over
/// cv and the first cv reaching it: the sums, minima and ties of minRow
/// over the transposed matrix. Sixteen lanes (four independent vectors, so
/// that the compare-and-select chains overlap) keep the first minimum of
/// the cv of their residue; the lanes then meet on the least value, the
/// lowest cv among equals, and the tail follows in order. The loops over
/// the four vectors are unrolled, and the lanes' candidates are kept as
/// block starts (one vector for all): otherwise GCC keeps the vectors on
/// the stack, and a message costs half as much again.
AUTOSHARD_VECTOR_CLONES
void minParentMajor(unsigned kv, unsigned kp, const double *belief,
                    const double *m, double *cost, unsigned *arg) {
  const double inf = std::numeric_limits<double>::infinity();
  const unsigned kv16 = kv & ~15u;
  const V4 sixteen = {16.0, 16.0, 16.0, 16.0};
  for (unsigned cp = 0; cp < kp; ++cp) {
    const double *row = m + size_t(cp) * kv;
    // Each lane keeps its least sum and the start of the block of sixteen
    // that gave it; its candidate is that start plus the lane's offset.
    V4 b[4], g[4];
    V4 start = {0.0, 0.0, 0.0, 0.0};
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      b[j] = (V4){inf, inf, inf, inf};
      g[j] = start;
    }
    for (unsigned cv = 0; cv < kv16; cv += 16, start += sixteen) {
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        V4 x, y;
        std::memcpy(&x, belief + cv + 4 * j, sizeof(x));
        std::memcpy(&y, row + cv + 4 * j, sizeof(y));
        V4 sum = x + y;
        M4 lower = sum < b[j];
        b[j] = (V4)(((M4)sum & lower) | ((M4)b[j] & ~lower));
        g[j] = (V4)(((M4)start & lower) | ((M4)g[j] & ~lower));
      }
    }
    double best = inf;
    unsigned at = 0;
    if (kv16)
      for (int j = 0; j < 4; ++j)
        for (int lane = 0; lane < 4; ++lane) {
          unsigned idx = static_cast<unsigned>(g[j][lane]) + 4 * j + lane;
          if (b[j][lane] < best || (b[j][lane] == best && idx < at)) {
            best = b[j][lane];
            at = idx;
          }
        }
    for (unsigned cv = kv16; cv < kv; ++cv) {
      double sum = belief[cv] + row[cv];
      if (sum < best) {
        best = sum;
        at = cv;
      }
    }
    cost[cp] = best;
    arg[cp] = at;
  }
}

/// What the tree passes of one local search share: the upward messages, by
/// content and by recipe. A child's message to its parent depends only on
/// the child's belief (up to a constant, see message()) and the pair's
/// costs, and the layers of a model send the same ones pass after pass, so
/// equal inputs (checked entry by entry on a hit, never trusted to the
/// hash) share the earlier result; a belief made of the same parts (see
/// solveForest()) finds it without being built. The memo stops growing
/// once its entries hold kMemoValues values (already stored ones still
/// hit), the recipes at kMaxRecipes.
struct ForestCache {
  struct Message {
    const double *tab; // the pair's matrix it was computed from
    bool childIsA;     // ... and the end the child is
    std::vector<double> belief;
    std::vector<double> cost; // per parent candidate
    std::vector<unsigned> arg;
    /// Kept in the memo (so for the cache's lifetime), not spilled.
    bool stored = false;
  };
  static constexpr size_t kMemoValues = size_t(1) << 23;
  std::unordered_multimap<uint64_t, Message> memo;
  size_t memoValues = 0;

  /// Adds pair `id`'s costs for every candidate of its end `v`, with the
  /// other end at candidate `co`, to `belief` (a row of the matrix, or a
  /// column when `v` is its first end).
  static void addGiven(const Problem &pb, unsigned id, unsigned v, unsigned co,
                       std::vector<double> &belief) {
    const Pair &p = pb.pairs[id];
    if (p.a == v)
      addCosts(belief, p.m + co, pb.k(p.b));
    else
      addCosts(belief, p.m + size_t(co) * pb.k(p.b));
  }

  /// The message of a child with `belief` over pair `id` to its parent
  /// `par`: for every parent candidate cp the least belief[cv] + cost(cp, cv)
  /// and the first cv reaching it (minRow's order of operations and ties,
  /// so the same as a scalar scan), up to a constant: the message is that
  /// of `belief` less its least finite entry, which is returned in `shift`
  /// (exact, as costs are whole units; see normalise()). A repeated layer's
  /// belief carries the cost of more layers than the earlier one's but is
  /// otherwise the same, so the memo shares its message, as the
  /// elimination memo shares tables kept up to a constant.
  const Message &message(const Problem &pb, unsigned id, unsigned child,
                         unsigned par, const std::vector<double> &rawBelief,
                         double &shift) {
    const Pair &p = pb.pairs[id];
    const double *tab = p.m;
    const bool childIsA = p.a == child;
    shift =
        std::min(kInfeasibleCost, leastOf(rawBelief.data(), rawBelief.size()));
    const std::vector<double> *in = &rawBelief;
    if (shift >= kInfeasibleCost / 2) {
      shift = 0.0;
    } else if (shift != 0.0) {
      shifted.resize(rawBelief.size());
      for (size_t c = 0; c < rawBelief.size(); ++c)
        shifted[c] = rawBelief[c] < kInfeasibleCost / 2 ? rawBelief[c] - shift
                                                        : rawBelief[c];
      in = &shifted;
    }
    const std::vector<double> &belief = *in;
    const unsigned kp = pb.k(par), kv = belief.size();
    uint64_t key =
        hashEntries(belief.data(), kv) ^
        ((reinterpret_cast<uintptr_t>(tab) + childIsA) * 0x9e3779b97f4a7c15ull);
    auto range = memo.equal_range(key);
    for (auto it = range.first; it != range.second; ++it)
      if (it->second.tab == tab && it->second.childIsA == childIsA &&
          it->second.cost.size() == kp && it->second.belief == belief)
        return it->second;
    Message msg;
    msg.tab = tab;
    msg.childIsA = childIsA;
    msg.belief = belief;
    if (childIsA) {
      // Child-major: a row per child candidate, contiguous over the
      // parent's, as minRow reads them.
      msg.cost.resize(kp + kPad);
      std::vector<double> arg(kp + kPad);
      const size_t zero = 0, one = 1, stride = kp;
      minRow(kv, kp, 1, belief.data(), &tab, &zero, &stride, &one,
             msg.cost.data(), arg.data(), nullptr);
      msg.cost.resize(kp);
      msg.arg.assign(arg.begin(), arg.begin() + kp);
    } else {
      msg.cost.resize(kp);
      msg.arg.resize(kp);
      minParentMajor(kv, kp, belief.data(), tab, msg.cost.data(),
                     msg.arg.data());
    }
    if (memoValues < kMemoValues) {
      memoValues += kv + 2 * kp;
      msg.stored = true;
      return memo.emplace(key, std::move(msg))->second;
    }
    spill.push_back(std::move(msg));
    return spill.back();
  }

  /// A message by its recipe (see solveForest()): the stored message and
  /// the least entry of the belief it came from, less the children's
  /// shifts. Bounded like the memo.
  struct Cooked {
    const Message *msg;
    double shift;
  };
  static constexpr size_t kMaxRecipes = size_t(1) << 20;
  std::unordered_map<std::vector<uint64_t>, Cooked, WordsHash> recipes;
  /// A root's candidate by its recipe and the candidate it keeps on ties
  /// (~0 for the first least entry); ~0u when the belief must be built.
  std::unordered_map<std::vector<uint64_t>, unsigned, WordsHash> roots;
  /// Replays so far, and with `verify` (SolverOptions::verifyRecipes) how
  /// many disagreed with the computation.
  uint64_t replays = 0, mismatches = 0;
  bool verify = false;

  /// Starts a tree pass: messages from earlier passes that did not fit in
  /// the memo are dropped (references to stored ones stay valid).
  void beginPass() { spill.clear(); }

private:
  std::deque<Message> spill;
  /// message()'s shifted belief.
  std::vector<double> shifted;
};

/// Node v's costs with every neighbour held at its candidate in `x`: its
/// unary costs plus each incident pair's row or column (single-node and
/// neighbourhood moves).
void costsGiven(const Problem &pb, unsigned v, const std::vector<unsigned> &x,
                std::vector<double> &out) {
  out.assign(pb.unary[v]->begin(), pb.unary[v]->end());
  for (unsigned id : pb.incident(v))
    ForestCache::addGiven(pb, id, v, x[pb.other(pb.pairs[id], v)], out);
}

/// The pairs of a tree pass whose other end is held at a candidate (its
/// off-tree pairs, or a block's boundary): node v's belief adds
/// terms[begin[v] .. begin[v + 1]), each a pair and the other end's
/// candidate.
struct Givens {
  struct Term {
    unsigned id, other;
  };
  std::vector<unsigned> begin;
  std::vector<Term> terms;
  /// From (node, pair id, other end's candidate) triples in any order.
  void build(unsigned n,
             std::vector<std::tuple<unsigned, unsigned, unsigned>> &triples) {
    std::stable_sort(triples.begin(), triples.end(),
                     [](const auto &x, const auto &y) {
                       return std::get<0>(x) < std::get<0>(y);
                     });
    begin.assign(n + 1, 0);
    terms.clear();
    terms.reserve(triples.size());
    for (auto [v, id, other] : triples) {
      ++begin[v + 1];
      terms.push_back({id, other});
    }
    for (unsigned v = 0; v < n; ++v)
      begin[v + 1] += begin[v];
  }
  llvm::ArrayRef<Term> of(unsigned v) const {
    if (begin.empty())
      return {};
    return llvm::ArrayRef<Term>(terms).slice(begin[v], begin[v + 1] - begin[v]);
  }
};

/// Exact min-sum over the trees of the pairs in `inTree` among the nodes in
/// `member` (every node when null), a node's belief being its unary costs,
/// its `givens` and its tree children's messages: a breadth-first pass from
/// each tree's lowest-ranked node, then each node's best candidate for
/// every candidate of its parent, bottom up. Roots take their belief's
/// first least entry, or with `keep` their candidate in `*keep` unless
/// another is strictly better (bestMove: descent keeps ties); every other
/// member node its best given its parent, written to `out`.
///
/// A belief is kept as a bracket (unary costs, givens, the children's
/// messages as the memo stores them) plus an offset (the children's
/// shifts): costs are whole units, so the belief is exactly the bracket
/// plus the offset, and the message, computed on the belief less its least
/// entry, is the bracket's. A bracket follows from its recipe — the unary
/// vector, each given's pair, end and candidate, and the children's stored
/// messages — so a recipe seen before (the nodes of a model's repeated
/// layers) gives its message and least entry without building the belief,
/// hashing it or comparing it. Only roots build theirs.
void solveForest(const Problem &pb, ForestCache &cache,
                 const std::vector<bool> &inTree,
                 const std::vector<bool> *member, const Givens &givens,
                 const std::vector<unsigned> *keep,
                 std::vector<unsigned> &out) {
  unsigned n = pb.n;
  std::vector<int> parentPair(n, -1);
  std::vector<bool> seen(n, false);
  std::vector<unsigned> bfs;
  bfs.reserve(n);
  for (unsigned r : pb.rankOrder) {
    if ((member && !(*member)[r]) || seen[r])
      continue;
    seen[r] = true;
    size_t head = bfs.size();
    bfs.push_back(r);
    while (head < bfs.size()) {
      unsigned v = bfs[head++];
      for (unsigned id : pb.incident(v)) {
        if (!inTree[id])
          continue;
        unsigned w = pb.other(pb.pairs[id], v);
        if (seen[w])
          continue;
        seen[w] = true;
        parentPair[w] = id;
        bfs.push_back(w);
      }
    }
  }
  // Each node's children's messages, as lists threaded through `received`
  // (the last one first), and the sum of their shifts.
  struct Received {
    const ForestCache::Message *msg;
    int next;
  };
  std::vector<Received> received;
  received.reserve(bfs.size());
  std::vector<int> firstReceived(n, -1);
  std::vector<double> offset(n, 0.0);
  std::vector<double> bracket;
  auto build = [&](unsigned v) {
    bracket.assign(pb.unary[v]->begin(), pb.unary[v]->end());
    for (const Givens::Term &t : givens.of(v))
      ForestCache::addGiven(pb, t.id, v, t.other, bracket);
    for (int r = firstReceived[v]; r >= 0; r = received[r].next)
      addMessage(bracket.data(), received[r].msg->cost.data(), 0.0,
                 bracket.size());
  };
  std::vector<uint64_t> key;
  llvm::SmallVector<uint64_t, 8> children;
  llvm::SmallVector<std::pair<uint64_t, uint64_t>, 8> held;
  // Node v's recipe into `key`, its parts sorted so that equal sums give
  // one key; whether it may be kept (its messages are all stored).
  auto recipe = [&](unsigned v) {
    key.clear();
    key.push_back(reinterpret_cast<uintptr_t>(pb.unary[v].get()));
    llvm::ArrayRef<Givens::Term> terms = givens.of(v);
    held.clear();
    for (const Givens::Term &t : terms) {
      const Pair &q = pb.pairs[t.id];
      held.push_back({reinterpret_cast<uintptr_t>(q.m) | (q.a == v), t.other});
    }
    std::sort(held.begin(), held.end());
    for (auto [matrix, other] : held) {
      key.push_back(matrix);
      key.push_back(other);
    }
    bool cacheable = true;
    children.clear();
    for (int r = firstReceived[v]; r >= 0; r = received[r].next) {
      children.push_back(reinterpret_cast<uintptr_t>(received[r].msg));
      cacheable &= received[r].msg->stored;
    }
    std::sort(children.begin(), children.end());
    key.push_back(terms.size());
    key.insert(key.end(), children.begin(), children.end());
    return cacheable;
  };
  // Upward pass: best[v][cp] = child v's best candidate given its parent.
  cache.beginPass();
  std::vector<const unsigned *> best(n, nullptr);
  for (auto it = bfs.rbegin(); it != bfs.rend(); ++it) {
    unsigned v = *it;
    if (parentPair[v] < 0)
      continue;
    const unsigned id = parentPair[v];
    const Pair &p = pb.pairs[id];
    unsigned par = pb.other(p, v);
    bool cacheable = recipe(v);
    key.push_back(reinterpret_cast<uintptr_t>(p.m) | (p.a == v));
    const ForestCache::Message *msg = nullptr;
    double shift = 0.0;
    auto hit = cacheable ? cache.recipes.find(key) : cache.recipes.end();
    if (hit != cache.recipes.end()) {
      msg = hit->second.msg;
      shift = hit->second.shift;
      ++cache.replays;
      if (cache.verify) {
        build(v);
        double computedShift;
        const ForestCache::Message &computed =
            cache.message(pb, id, v, par, bracket, computedShift);
        if (computedShift != shift || computed.cost != msg->cost ||
            computed.arg != msg->arg)
          ++cache.mismatches;
      }
    } else {
      build(v);
      msg = &cache.message(pb, id, v, par, bracket, shift);
      if (cacheable && msg->stored &&
          cache.recipes.size() < ForestCache::kMaxRecipes)
        cache.recipes.emplace(key, ForestCache::Cooked{msg, shift});
    }
    best[v] = msg->arg.data();
    // An infeasible entry stays infeasible whatever the offset; a finite
    // one carries the child's least entry up.
    offset[par] += shift + offset[v];
    received.push_back({msg, firstReceived[par]});
    firstReceived[par] = static_cast<int>(received.size()) - 1;
  }
  // Downward pass. A root takes the first least entry of its belief, or
  // with `keep`, keeps its candidate there unless another is strictly
  // better (bestMove). Both follow from the bracket when the kept
  // candidate's entry is the least (the offset shifts every finite entry
  // alike; strictly better needs a difference, which bestMove weighs
  // against the magnitude): by recipe, only other roots build the belief.
  for (unsigned v : bfs) {
    if (parentPair[v] >= 0) {
      out[v] = best[v][out[pb.other(pb.pairs[parentPair[v]], v)]];
      continue;
    }
    bool cacheable = recipe(v);
    key.push_back(keep ? (*keep)[v] : ~uint64_t(0));
    auto hit = cacheable ? cache.roots.find(key) : cache.roots.end();
    bool replay = hit != cache.roots.end() && hit->second != ~0u;
    if (replay) {
      ++cache.replays;
      if (!cache.verify) {
        out[v] = hit->second;
        continue;
      }
    }
    build(v);
    unsigned least = static_cast<unsigned>(
        std::min_element(bracket.begin(), bracket.end()) - bracket.begin());
    unsigned decided = ~0u;
    if (!keep)
      decided = least;
    else if (bracket[(*keep)[v]] == bracket[least])
      decided = (*keep)[v];
    if (cacheable && hit == cache.roots.end() &&
        cache.roots.size() < ForestCache::kMaxRecipes)
      cache.roots.emplace(key, decided);
    if (replay && decided != hit->second)
      ++cache.mismatches;
    if (decided != ~0u) {
      out[v] = decided;
      continue;
    }
    // The belief as the tree pass used to add it up: the children's
    // messages and shifts were added with each sum stopping at
    // kInfeasibleCost (a childless node's infeasible givens stay as added).
    if (firstReceived[v] >= 0)
      for (double &b : bracket)
        b = std::min(kInfeasibleCost, b + offset[v]);
    out[v] = bestMove(bracket.data(), pb.k(v), (*keep)[v]);
  }
}

/// Exact min-sum over the forest given by `inTree`; every off-forest pair
/// contributes a unary term from the current assignment `x` of its other end
/// (ignored when `x` is empty). Returns the forest-optimal assignment.
std::vector<unsigned> forestDP(const Problem &pb, ForestCache &cache,
                               const std::vector<bool> &inTree,
                               const std::vector<unsigned> &x) {
  unsigned n = pb.n;
  Givens givens;
  if (!x.empty()) {
    std::vector<std::tuple<unsigned, unsigned, unsigned>> triples;
    for (unsigned id = 0; id < pb.pairs.size(); ++id) {
      if (inTree[id])
        continue;
      const Pair &p = pb.pairs[id];
      triples.emplace_back(p.a, id, x[p.b]);
      triples.emplace_back(p.b, id, x[p.a]);
    }
    givens.build(n, triples);
  }
  std::vector<unsigned> out(n, 0);
  solveForest(pb, cache, inTree, nullptr, givens, nullptr, out);
  return out;
}

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

//===----------------------------------------------------------------------===//
// Variable elimination
//===----------------------------------------------------------------------===//

/// Exact min-sum by bucket elimination. Computation graphs are long but
/// narrow (a residual stream with diamonds: Q/K/V branches, layer-norm
/// statistics), so eliminating the node whose new table is smallest keeps
/// every table small and the whole run linear in the graph's length. Fails
/// (returns false) when a table would exceed `maxTable` entries, the kept
/// argmin tables 16 * `maxTable`, or the total work `maxWork`; the caller
/// then falls back to the local search.
struct Eliminator {
  const Problem &pb;
  uint64_t maxTable, maxWork;
  uint64_t work = 0, stored = 0;

  using Table = std::shared_ptr<const std::vector<double>>;
  /// A list of nodes stored elsewhere (a step's scope in `scopes`, a pair's
  /// ends in `pairScopes`), which outlives the factors that refer to it.
  struct Scope {
    const unsigned *nodes = nullptr;
    size_t size = 0;
    const unsigned *begin() const { return nodes; }
    const unsigned *end() const { return nodes + size; }
    unsigned operator[](size_t i) const { return nodes[i]; }
  };
  struct Factor {
    Scope scope; // nodes, row-major (last is minor)
    /// Shared with the problem's pair matrices for the initial factors, and
    /// between repeated eliminations (see Memo). Computed tables with equal
    /// entries are one object (see intern()), as are most equal pair
    /// matrices (see normalise()).
    Table table;
    /// Hash of the table's entries (for the memo).
    uint64_t hash = 0;
    bool alive = true;
  };
  /// Models repeat their layers, and so do eliminations: the same unary
  /// costs and the same factor tables, laid out the same way, give the same
  /// new table and argmin. A memo keyed by a hash of those inputs (checked
  /// entry by entry on a hit, never trusted alone) shares the earlier
  /// result. Entries keep their inputs alive for the check, so the memo
  /// stops growing after kMemoEntries entries (already stored ones still
  /// hit).
  struct MemoEntry {
    const std::vector<double> *unary; // the problem's, which outlives us
    std::vector<size_t> layout;       // strides of every input, see eliminate()
    std::vector<Table> inputs;
    Table table;
    uint64_t hash = 0;
    std::shared_ptr<const std::vector<unsigned>> argmin;
  };
  static constexpr size_t kMemoEntries = 1 << 16;
  std::unordered_multimap<uint64_t, MemoEntry> memo;
  size_t memoHits = 0;
  /// Every distinct table so far by the hash of its entries (bounded with
  /// the memo, whose entries keep the tables alive anyway).
  std::unordered_multimap<uint64_t, Table> interned;
  std::vector<Factor> factors;
  /// node -> the factors on it, in creation order: factorsOf[v] is
  /// factorIds[factorBegin[v]] up to factorEnd[v]. Each node's room is
  /// counted from the plan (its pairs and the scopes it is in), so adding a
  /// factor never allocates.
  std::vector<unsigned> factorIds;
  std::vector<size_t> factorBegin, factorEnd;
  std::vector<unsigned> pairScopes; // pair i's ends at 2 * i
  struct Step {
    unsigned node;
    Scope scope;
    std::shared_ptr<const std::vector<unsigned>> argmin;
  };
  std::vector<Step> steps;

  Eliminator(const Problem &pb, uint64_t maxTable, uint64_t maxWork)
      : pb(pb), maxTable(maxTable), maxWork(maxWork) {}

  /// The elimination order and every step's scope (see plan()).
  std::vector<unsigned> order;
  std::vector<std::vector<unsigned>> scopes;

  /// Plans the elimination: min-weight order (the node whose new table,
  /// counting its own candidates, is smallest; ties by depth, then rank). The
  /// order and the scopes follow from the graph's structure and the candidate
  /// counts alone, never from the costs, so the whole plan is known before any
  /// table is computed. Returns false when a step's table would exceed
  /// `maxTable`.
  bool plan() {
    unsigned n = pb.n;
    // Nodes by (depth, rank): the repeated layers of a model are then
    // eliminated alike, one after the other, with their scopes in the same
    // order, so the memo shares their steps.
    std::vector<uint64_t> pos(n);
    for (unsigned v = 0; v < n; ++v)
      pos[v] = (uint64_t(pb.depth[v]) << 32) | pb.rank[v];
    auto byPos = [&](unsigned x, unsigned y) { return pos[x] < pos[y]; };
    std::vector<std::vector<unsigned>> adj(n); // sorted by pos
    {
      std::vector<unsigned> degree(n, 0);
      for (const Pair &p : pb.pairs)
        ++degree[p.a], ++degree[p.b];
      for (unsigned v = 0; v < n; ++v)
        adj[v].reserve(degree[v]);
    }
    for (const Pair &p : pb.pairs) {
      adj[p.a].push_back(p.b);
      adj[p.b].push_back(p.a);
    }
    for (auto &a : adj) {
      std::sort(a.begin(), a.end(), byPos);
      a.erase(std::unique(a.begin(), a.end()), a.end());
    }
    auto tableSize = [&](unsigned v) {
      double size = pb.k(v);
      for (unsigned u : adj[v])
        size *= pb.k(u);
      return size;
    };
    // The remaining nodes in a binary heap on (score, pos), with each node's
    // slot in it, so a changed score moves the node's one entry (no stale
    // entries). Positions are distinct, so the order is total. Entries hold
    // their keys, so comparisons do not chase node ids.
    struct Entry {
      double score;
      uint64_t pos;
      unsigned v;
      bool operator<(const Entry &o) const {
        return score != o.score ? score < o.score : pos < o.pos;
      }
    };
    std::vector<Entry> heap(n);
    std::vector<unsigned> slot(n);
    auto place = [&](size_t i, const Entry &e) {
      heap[i] = e;
      slot[e.v] = i;
    };
    auto siftUp = [&](size_t i) {
      Entry e = heap[i];
      for (; i > 0 && e < heap[(i - 1) / 2]; i = (i - 1) / 2)
        place(i, heap[(i - 1) / 2]);
      place(i, e);
    };
    auto siftDown = [&](size_t i) {
      Entry e = heap[i];
      for (size_t child; (child = 2 * i + 1) < heap.size(); i = child) {
        if (child + 1 < heap.size() && heap[child + 1] < heap[child])
          ++child;
        if (!(heap[child] < e))
          break;
        place(i, heap[child]);
      }
      place(i, e);
    };
    for (unsigned v = 0; v < n; ++v)
      place(v, {tableSize(v), pos[v], v});
    for (size_t i = n / 2; i-- > 0;)
      siftDown(i);
    order.clear();
    scopes.clear();
    order.reserve(n);
    scopes.reserve(n);
    std::vector<unsigned> merged;
    while (!heap.empty()) {
      unsigned v = heap[0].v;
      if (heap[0].score > static_cast<double>(maxTable))
        return false;
      place(0, heap.back());
      heap.pop_back();
      if (!heap.empty())
        siftDown(0);
      order.push_back(v);
      scopes.push_back(std::move(adj[v]));
      const std::vector<unsigned> &nbrs = scopes.back();
      // The neighbours now form a clique (the new factor's scope): each
      // one's list becomes the union of it and the scope, less itself and
      // v, merged in one pass (the buffers are swapped, not reallocated).
      for (unsigned u : nbrs) {
        const std::vector<unsigned> &au = adj[u];
        merged.clear();
        auto x = au.begin(), xe = au.end();
        auto y = nbrs.begin(), ye = nbrs.end();
        while (x != xe || y != ye) {
          unsigned w;
          if (y == ye || (x != xe && pos[*x] < pos[*y]))
            w = *x++;
          else if (x == xe || pos[*y] < pos[*x])
            w = *y++;
          else
            w = (++y, *x++);
          if (w != u && w != v)
            merged.push_back(w);
        }
        adj[u].swap(merged);
      }
      for (unsigned u : nbrs) {
        Entry &e = heap[slot[u]];
        double updated = tableSize(u);
        if (updated == e.score)
          continue;
        bool up = updated < e.score;
        e.score = updated;
        if (up)
          siftUp(slot[u]);
        else
          siftDown(slot[u]);
      }
    }
    return true;
  }

  /// Plans and runs the elimination and decodes the optimum into `out`. A
  /// plan over the table cap fails before any table is computed: the run
  /// would give up at that step (or sooner, on work), so the work before it
  /// would be wasted.
  bool run(std::vector<unsigned> &out) {
    unsigned n = pb.n;
    if (!plan())
      return false;
    factorBegin.assign(n + 1, 0);
    for (const Pair &p : pb.pairs)
      ++factorBegin[p.a + 1], ++factorBegin[p.b + 1];
    for (const std::vector<unsigned> &scope : scopes)
      for (unsigned u : scope)
        ++factorBegin[u + 1];
    for (unsigned v = 0; v < n; ++v)
      factorBegin[v + 1] += factorBegin[v];
    factorIds.resize(factorBegin[n]);
    factorEnd.assign(factorBegin.begin(), factorBegin.end() - 1);
    factors.reserve(pb.pairs.size() + n);
    steps.reserve(n);
    pairScopes.resize(2 * pb.pairs.size());
    // Pair matrices are already shared by content key (see normalise()), so
    // only the computed tables are interned.
    std::unordered_map<const void *, uint64_t> pairHashes;
    for (size_t i = 0; i < pb.pairs.size(); ++i) {
      const Pair &p = pb.pairs[i];
      pairScopes[2 * i] = p.a;
      pairScopes[2 * i + 1] = p.b;
      auto [it, inserted] = pairHashes.try_emplace(p.matrix.get(), 0);
      if (inserted)
        it->second = hashEntries(p.m, size_t(pb.k(p.a)) * pb.k(p.b));
      addFactor({&pairScopes[2 * i], 2}, p.matrix, it->second);
    }
    for (size_t i = 0; i < n; ++i)
      if (!eliminate(order[i], {scopes[i].data(), scopes[i].size()}))
        return false;
    // Decode in reverse elimination order.
    out.assign(n, 0);
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      size_t index = 0;
      for (unsigned u : it->scope)
        index = index * pb.k(u) + out[u];
      out[it->node] = (*it->argmin)[index];
    }
    return true;
  }

  void addFactor(Scope scope, Table table, uint64_t hash) {
    for (unsigned u : scope)
      factorIds[factorEnd[u]++] = factors.size();
    factors.push_back({scope, std::move(table), hash, true});
  }

  /// Whether two tables hold the same entries, bit for bit (the memo's
  /// hashes are of the bits).
  static bool sameEntries(const std::vector<double> &x,
                          const std::vector<double> &y) {
    return x.size() == y.size() &&
           std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
  }

  /// `table` (a computed one), or an earlier computed table with the same
  /// entries (`hash` is theirs, see hashEntries). Equal tables are then one
  /// object, so the memo's check of a repeated step's inputs is a pointer
  /// comparison however the tables were made (a layer computed before the
  /// memo settled makes copies of the tables of the one before).
  Table intern(Table table, uint64_t hash) {
    auto range = interned.equal_range(hash);
    for (auto it = range.first; it != range.second; ++it)
      if (sameEntries(*it->second, *table))
        return it->second;
    if (memo.size() < kMemoEntries)
      interned.emplace(hash, table);
    return table;
  }

  /// Strides of factor `f`'s table for the positions of `scope` (0 where
  /// absent) and for `v`, in `strides` and `vStride`.
  void stridesOf(Scope fScope, Scope scope, unsigned v, size_t *strides,
                 size_t &vStride) const {
    std::fill(strides, strides + scope.size, 0);
    vStride = 0;
    size_t stride = 1;
    for (size_t j = fScope.size; j-- > 0;) {
      unsigned u = fScope[j];
      if (u == v)
        vStride = stride;
      else
        strides[std::find(scope.begin(), scope.end(), u) - scope.begin()] =
            stride;
      stride *= pb.k(u);
    }
  }

  /// `f`'s table with node `w` moved to the minor-most position (so rows
  /// over w are contiguous), and the matching scope.
  std::vector<double> minorCopy(const Factor &f, unsigned w,
                                std::vector<unsigned> &scope) const {
    scope.clear();
    for (unsigned u : f.scope)
      if (u != w)
        scope.push_back(u);
    scope.push_back(w);
    std::vector<size_t> oldStride(f.scope.size);
    size_t stride = 1;
    for (size_t j = f.scope.size; j-- > 0;) {
      oldStride[j] = stride;
      stride *= pb.k(f.scope[j]);
    }
    // Old strides in the new order.
    std::vector<size_t> from(scope.size());
    for (size_t j = 0; j < scope.size(); ++j)
      from[j] = oldStride[std::find(f.scope.begin(), f.scope.end(), scope[j]) -
                          f.scope.begin()];
    const std::vector<double> &in = *f.table;
    std::vector<double> out(in.size()); // padded as the input
    std::vector<unsigned> digit(scope.size(), 0);
    size_t src = 0;
    for (size_t i = 0; i < stride; ++i) {
      out[i] = in[src];
      for (size_t j = scope.size(); j-- > 0;) {
        src += from[j];
        if (++digit[j] < pb.k(scope[j]))
          break;
        src -= from[j] * digit[j];
        digit[j] = 0;
      }
    }
    return out;
  }

  /// Eliminates v: the new factor over v's neighbours (the scope) holds, for
  /// every assignment of the scope, min over v's candidates of v's unary plus
  /// every live factor on v (added in factor order), and the argmin (the
  /// first minimal candidate) is kept for decoding. The loops run over the
  /// scope's last node innermost, with every factor's row over it contiguous
  /// (or constant), so the additions and comparisons vectorise; each entry's
  /// sum is formed in the same order as a per-entry loop would, so the result
  /// does not depend on this layout.
  bool eliminate(unsigned v, Scope scope) {
    Step step;
    step.node = v;
    step.scope = scope;
    size_t size = 1;
    for (unsigned u : scope)
      size *= pb.k(u);
    unsigned kv = pb.k(v);
    // v's live factors, in id order (each list is in creation order, each
    // factor once).
    std::vector<unsigned> &live = liveScratch;
    live.clear();
    for (size_t i = factorBegin[v]; i < factorEnd[v]; ++i)
      if (factors[factorIds[i]].alive)
        live.push_back(factorIds[i]);
    // The innermost node w (the scope's last) and the outer positions.
    const size_t numOuter = scope.size ? scope.size - 1 : 0;
    const size_t rowStride = numOuter + 1;
    const unsigned kw = scope.size ? pb.k(scope[numOuter]) : 1;
    const size_t numLive = live.size();
    // Every input's strides (outer positions, w, then v): with the scope's
    // sizes, v's unary costs and the tables, they determine the result.
    std::vector<size_t> &layout = layoutScratch;
    layout.assign(numLive * (rowStride + 1), 0);
    for (size_t i = 0; i < numLive; ++i)
      stridesOf(factors[live[i]].scope, scope, v, &layout[i * (rowStride + 1)],
                layout[i * (rowStride + 1) + rowStride]);
    // The scope's sizes follow from the strides and the tables' sizes; they
    // are part of the key anyway.
    for (unsigned u : scope)
      layout.push_back(pb.k(u));
    const std::vector<double> &unaryV = *pb.unary[v];
    uint64_t key =
        hashEntries(unaryV.data(), kv) ^ (size * 0x9e3779b97f4a7c15ull);
    for (size_t i = 0; i < numLive; ++i) {
      key = (key ^ factors[live[i]].hash) * 0xc2b2ae3d27d4eb4full;
      key ^= key >> 29;
    }
    for (size_t x : layout) {
      key = (key ^ x) * 0x165667b19e3779f9ull;
      key ^= key >> 29;
    }

    Factor g;
    g.scope = scope;
    const MemoEntry *hit = nullptr;
    auto range = memo.equal_range(key);
    for (auto it = range.first; it != range.second && !hit; ++it) {
      const MemoEntry &e = it->second;
      if (e.inputs.size() != numLive || e.argmin->size() != size ||
          e.layout != layout ||
          (e.unary != &unaryV && !sameEntries(*e.unary, unaryV)))
        continue;
      // Equal tables are mostly one object (see intern()); the entries are
      // compared otherwise.
      bool same = true;
      for (size_t i = 0; i < numLive && same; ++i) {
        const Table &t = factors[live[i]].table;
        same = t == e.inputs[i] || sameEntries(*t, *e.inputs[i]);
      }
      if (same)
        hit = &e;
    }
    if (hit) {
      ++memoHits;
      g.table = hit->table;
      g.hash = hit->hash;
      step.argmin = hit->argmin;
    } else {
      // Only computed steps count towards the limits: a reused step costs
      // a comparison and shares the earlier step's tables.
      work += static_cast<uint64_t>(size) * kv * (numLive + 1);
      // The argmin tables are kept for decoding: bound them as well.
      stored += size;
      if (work > maxWork || stored > 16 * maxTable)
        return false;
      computeTable(v, scope, live, layout, size, kw, numOuter, g, step);
      g.hash = hashEntries(g.table->data(), size);
      g.table = intern(std::move(g.table), g.hash);
      if (memo.size() < kMemoEntries) {
        MemoEntry e;
        e.unary = &unaryV;
        e.layout = layout;
        for (unsigned id : live)
          e.inputs.push_back(factors[id].table);
        e.table = g.table;
        e.hash = g.hash;
        e.argmin = step.argmin;
        memo.emplace(key, std::move(e));
      }
    }
    for (unsigned id : live) {
      factors[id].alive = false;
      factors[id].table.reset();
    }
    if (scope.size)
      addFactor(scope, std::move(g.table), g.hash);
    steps.push_back(std::move(step));
    return true;
  }

  /// The new table and argmin of eliminating v (see eliminate()).
  /// `layout` holds each live factor's strides as eliminate() computed them
  /// (the scope's positions, then v).
  void computeTable(unsigned v, Scope scope, const std::vector<unsigned> &live,
                    const std::vector<size_t> &layout, size_t size, unsigned kw,
                    size_t numOuter, Factor &g, Step &step) {
    const size_t numLive = live.size();
    const size_t rowStride = numOuter + 1;
    // Per-step buffers, reused from step to step (see Scratch).
    std::vector<const double *> &tab = scratch.tab;
    std::vector<size_t> &strides = scratch.strides;
    std::vector<size_t> &vStride = scratch.vStride, &wStride = scratch.wStride;
    tab.assign(numLive, nullptr);
    strides.assign(numLive * rowStride, 0);
    vStride.assign(numLive, 0);
    wStride.assign(numLive, 0);
    std::vector<std::vector<double>> copies;
    copies.reserve(numLive);
    for (size_t i = 0; i < numLive; ++i) {
      const Factor &f = factors[live[i]];
      size_t *st = strides.data() + i * rowStride;
      const size_t *given = layout.data() + i * (rowStride + 1);
      std::copy(given, given + rowStride, st);
      vStride[i] = given[rowStride];
      size_t ws = scope.size ? st[numOuter] : 0;
      if (ws > 1) {
        // w is not minor in this factor: use a copy where it is.
        std::vector<unsigned> copyScope;
        copies.push_back(minorCopy(f, scope[numOuter], copyScope));
        tab[i] = copies.back().data();
        stridesOf({copyScope.data(), copyScope.size()}, scope, v, st,
                  vStride[i]);
        ws = 1;
      } else {
        tab[i] = f.table->data();
      }
      wStride[i] = ws;
    }
    auto table = std::make_shared<std::vector<double>>(size + kPad);
    auto argmin = std::make_shared<std::vector<unsigned>>(size);
    double *__restrict outTable = table->data();
    unsigned *__restrict outArg = argmin->data();
    const double *unary = pb.unary[v]->data();
    std::vector<double> &bestBuf = scratch.best, &argBuf = scratch.arg;
    std::vector<double> &rowUnary = scratch.rowUnary;
    bestBuf.resize(kw + kPad);
    argBuf.resize(kw + kPad);
    rowUnary.resize(pb.k(v));
    double *__restrict best = bestBuf.data();
    double *__restrict arg = argBuf.data();
    std::vector<unsigned> &digit = scratch.digit;
    std::vector<size_t> &base = scratch.base;
    digit.assign(numOuter, 0);
    base.assign(numLive, 0);
    const size_t numRows = size / kw;
    // The least entry, for the normalisation below.
    double least = kInfeasibleCost;
    for (size_t row = 0; row < numRows; ++row) {
      minRow(pb.k(v), kw, numLive, unary, tab.data(), base.data(),
             vStride.data(), wStride.data(), best, arg, rowUnary.data());
      double *o = outTable + row * kw;
      unsigned *oa = outArg + row * kw;
      // The argmins are candidate indices below 2^31: through int, the
      // conversion vectorises.
      for (unsigned w = 0; w < kw; ++w) {
        o[w] = std::min(kInfeasibleCost, best[w]);
        least = std::min(least, o[w]);
        oa[w] = static_cast<unsigned>(static_cast<int32_t>(arg[w]));
      }
      // Odometer over the outer positions, minor-most last.
      for (size_t j = numOuter; j-- > 0;) {
        for (size_t i = 0; i < numLive; ++i)
          base[i] += strides[i * rowStride + j];
        if (++digit[j] < pb.k(scope[j]))
          break;
        for (size_t i = 0; i < numLive; ++i)
          base[i] -= strides[i * rowStride + j] * digit[j];
        digit[j] = 0;
      }
    }
    // A table is kept up to a constant (less its least finite entry, exactly:
    // costs are whole units, see normalise()), which changes no later
    // argmin: a repeated layer's table then equals the earlier layer's
    // although it carries the cost of more layers before it, and the memo
    // shares it.
    if (least != 0.0 && least < kInfeasibleCost / 2)
      for (size_t i = 0; i < size; ++i)
        if (outTable[i] < kInfeasibleCost / 2)
          outTable[i] -= least;
    g.table = std::move(table);
    step.argmin = std::move(argmin);
  }

  std::vector<unsigned> liveScratch;
  std::vector<size_t> layoutScratch;
  /// computeTable's buffers: every step would otherwise allocate its own.
  struct Scratch {
    std::vector<const double *> tab;
    std::vector<size_t> strides, vStride, wStride, base;
    std::vector<double> best, arg, rowUnary;
    std::vector<unsigned> digit;
  } scratch;
};

/// Exact min-sum over a neighbourhood of `x`: every node keeps its current
/// candidate and the `width - 1` others that are cheapest with its
/// neighbours held at x (ties by index). Block moves change one forest at a
/// time, but a layer can need a joint move around a cycle (a branch and the
/// node where it rejoins) whose every node looks worse alone; elimination
/// over these small domains finds it. The domains hold x, so the result is
/// never worse. Returns std::nullopt when the elimination would exceed
/// `maxTable` or `maxWork` (see Eliminator).
std::optional<std::vector<unsigned>>
neighbourhoodDP(const Problem &pb, const std::vector<unsigned> &x,
                unsigned width, uint64_t maxTable, uint64_t maxWork) {
  Problem sub;
  sub.n = pb.n;
  sub.rankOrder = pb.rankOrder;
  sub.rank = pb.rank;
  sub.depth = pb.depth;
  sub.allowed.resize(pb.n);
  sub.numAllowed.resize(pb.n);
  sub.unrestricted.assign(pb.n, false);
  sub.unary.resize(pb.n);
  std::vector<double> local;
  std::vector<unsigned> best; // the cheapest others so far, in order
  // A node's domain and unary costs follow from its unary costs, its pair
  // matrices (and which end it is) and its neighbours' candidates in x: the
  // nodes of a model's repeated layers share one such context, which is
  // evaluated once. Sharing the vectors also lets the elimination's memo
  // match them by address rather than entry by entry.
  struct Context {
    std::vector<unsigned> dom;
    std::shared_ptr<const std::vector<double>> unary;
  };
  std::vector<Context> contexts;
  std::unordered_map<std::vector<uint64_t>, unsigned, WordsHash> contextIds;
  std::vector<unsigned> contextOf(pb.n);
  std::vector<uint64_t> key;
  for (unsigned v = 0; v < pb.n; ++v) {
    key.clear();
    key.push_back(reinterpret_cast<uintptr_t>(pb.unary[v].get()));
    key.push_back(x[v]);
    for (unsigned id : pb.incident(v)) {
      const Pair &p = pb.pairs[id];
      key.push_back(reinterpret_cast<uintptr_t>(p.m) | (p.a == v));
      key.push_back(x[pb.other(p, v)]);
    }
    auto [it, inserted] = contextIds.try_emplace(key, contexts.size());
    contextOf[v] = it->second;
    if (!inserted)
      continue;
    unsigned kv = pb.k(v);
    costsGiven(pb, v, x, local);
    best.clear();
    for (unsigned c = 0; c < kv; ++c) {
      if (c == x[v])
        continue;
      // Insertion into the short sorted list; equal costs keep index order.
      size_t pos = best.size();
      while (pos > 0 && local[c] < local[best[pos - 1]])
        --pos;
      if (pos + 1 >= width)
        continue;
      best.insert(best.begin() + pos, c);
      if (best.size() + 1 > width)
        best.pop_back();
    }
    // x's candidate first: elimination keeps the first of equal minima.
    Context &ctx = contexts.emplace_back();
    ctx.dom.reserve(1 + best.size());
    ctx.dom.push_back(x[v]);
    ctx.dom.insert(ctx.dom.end(), best.begin(), best.end());
    auto unary = std::make_shared<std::vector<double>>();
    unary->reserve(ctx.dom.size());
    for (unsigned c : ctx.dom)
      unary->push_back((*pb.unary[v])[c]);
    ctx.unary = std::move(unary);
  }
  for (unsigned v = 0; v < pb.n; ++v) {
    const Context &ctx = contexts[contextOf[v]];
    sub.allowed[v] = ctx.dom;
    sub.numAllowed[v] = ctx.dom.size();
    sub.unary[v] = ctx.unary;
  }
  // A pair's sub-matrix follows from its matrix and its ends' contexts.
  llvm::DenseMap<std::tuple<const double *, unsigned, unsigned>,
                 std::shared_ptr<const std::vector<double>>>
      subMatrices;
  sub.pairs.reserve(pb.pairs.size());
  for (const Pair &p : pb.pairs) {
    auto &m = subMatrices[{p.m, contextOf[p.a], contextOf[p.b]}];
    if (!m) {
      const std::vector<unsigned> &da = sub.allowed[p.a],
                                  &db = sub.allowed[p.b];
      size_t kb = pb.k(p.b);
      auto entries =
          std::make_shared<std::vector<double>>(da.size() * db.size() + kPad);
      double *out = entries->data();
      for (unsigned ca : da)
        for (unsigned cb : db)
          *out++ = p.m[ca * kb + cb];
      m = std::move(entries);
    }
    Pair q;
    q.a = p.a;
    q.b = p.b;
    q.m = m->data();
    q.matrix = m;
    sub.pairs.push_back(std::move(q));
  }
  Eliminator ve(sub, maxTable, maxWork);
  std::vector<unsigned> z;
  if (!ve.run(z))
    return std::nullopt;
  for (unsigned v = 0; v < pb.n; ++v)
    z[v] = sub.allowed[v][z[v]];
  return z;
}

/// Exact min-sum over the nodes in `block` (their induced subgraph must be a
/// forest) with every other node held at `x`. Returns the block-optimal
/// assignment (others unchanged).
std::vector<unsigned> blockDP(const Problem &pb, ForestCache &cache,
                              const std::vector<bool> &block,
                              const std::vector<unsigned> &x) {
  std::vector<bool> inTree(pb.pairs.size(), false);
  std::vector<std::tuple<unsigned, unsigned, unsigned>> triples;
  for (unsigned id = 0; id < pb.pairs.size(); ++id) {
    const Pair &p = pb.pairs[id];
    if (block[p.a] && block[p.b]) {
      inTree[id] = true;
      continue;
    }
    if (block[p.a])
      triples.emplace_back(p.a, id, x[p.b]);
    if (block[p.b])
      triples.emplace_back(p.b, id, x[p.a]);
  }
  Givens givens;
  givens.build(pb.n, triples);
  std::vector<unsigned> out = x;
  solveForest(pb, cache, inTree, &block, givens, &x, out);
  return out;
}

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

/// The fallback when elimination would need tables that are too large:
/// forest DP on a maximum-weight spanning forest, then descent. Block moves
/// solve an induced forest exactly with the rest held fixed; blocks come
/// from four node orders (spanning-forest BFS and rank, each both ways) so
/// that a chain the spanning forest cut is whole in some block.
/// Neighbourhood moves (neighbourhoodDP) eliminate exactly over a few
/// candidates per node, so they move a whole cycle at once. ICM moves single
/// nodes in between. Every move is taken only when it improves the total;
/// stops when a round improves nothing.
SolverResult solveLocal(const Problem &pb, const SolverOptions &options) {
  SolverResult res;
  std::vector<bool> inTree = spanningForest(pb);
  bool isForest =
      std::all_of(inTree.begin(), inTree.end(), [](bool b) { return b; });
  ForestCache cache;
  cache.verify = options.verifyRecipes;
  Icm icm(pb);
  std::vector<unsigned> x = forestDP(pb, cache, inTree, {});
  double cost = pb.evaluate(x);
  res.optimal = isForest;
  if (!isForest) {
    std::vector<std::vector<bool>> blocks;
    std::vector<unsigned> order = treeOrder(pb, inTree);
    blocks.push_back(inducedForest(pb, order));
    std::reverse(order.begin(), order.end());
    blocks.push_back(inducedForest(pb, order));
    order = pb.rankOrder;
    blocks.push_back(inducedForest(pb, order));
    std::reverse(order.begin(), order.end());
    blocks.push_back(inducedForest(pb, order));
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
    bool neighbourhoodFits = true;
    auto neighbourhood = [&] {
      std::optional<std::vector<unsigned>> z = neighbourhoodDP(
          pb, x, kNeighbourhoodWidth, kNeighbourhoodTable, kNeighbourhoodWork);
      neighbourhoodFits = z.has_value();
      return z ? std::move(*z) : x;
    };
    const size_t neighbourhoodMove = 1 + blocks.size();
    tryMove(neighbourhoodMove, neighbourhood);
    for (unsigned round = 0; round < options.maxRounds; ++round) {
      ++res.work;
      double before = cost;
      if (icm.run(x))
        ++version;
      cost = pb.evaluate(x);
      // The old heuristic move: forest DP with off-forest pairs conditioned
      // on x. Not monotone, so only taken when it helps.
      tryMove(0, [&] { return forestDP(pb, cache, inTree, x); });
      for (size_t i = 0; i < blocks.size(); ++i)
        tryMove(1 + i, [&] { return blockDP(pb, cache, blocks[i], x); });
      if (neighbourhoodFits)
        tryMove(neighbourhoodMove, neighbourhood);
      if (!strictlyBetter(cost, before))
        break;
    }
  }
  res.assignment = std::move(x);
  res.cost = cost;
  res.reusedSteps = cache.replays;
  res.memoMismatches = cache.mismatches;
  return res;
}

/// Default solver: exact elimination when its tables fit, else solveLocal.
SolverResult solveDP(const Problem &pb, const SolverOptions &options) {
  Eliminator ve(pb, options.maxEliminationTable, options.maxEliminationWork);
  std::vector<unsigned> x;
  if (ve.run(x)) {
    SolverResult res;
    res.cost = pb.evaluate(x);
    res.assignment = std::move(x);
    res.optimal = true;
    res.work = ve.work;
    res.reusedSteps = ve.memoHits;
    return res;
  }
  return solveLocal(pb, options);
}

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
    for (unsigned c : cands) {
      double here = partial[v][c];
      x[v] = c;
      // Charge the pairs to later nodes into their partial costs.
      for (unsigned id : pb.incident(v)) {
        const Pair &p = pb.pairs[id];
        unsigned w = pb.other(p, v);
        if (pos[w] <= depth)
          continue;
        for (unsigned cw = 0; cw < pb.k(w); ++cw)
          partial[w][cw] += pb.pairCost(p, w, cw, c);
      }
      search(depth + 1, soFar + here);
      for (unsigned id : pb.incident(v)) {
        const Pair &p = pb.pairs[id];
        unsigned w = pb.other(p, v);
        if (pos[w] <= depth)
          continue;
        for (unsigned cw = 0; cw < pb.k(w); ++cw)
          partial[w][cw] -= pb.pairCost(p, w, cw, c);
      }
      if (exhausted)
        return;
    }
  }
};

} // namespace

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
  case SolverKind::Exact: {
    // Elimination with 16x the default limits proves optimality on its own;
    // beyond that, branch and bound seeded with the local search.
    SolverOptions big = options;
    big.maxEliminationTable = options.maxEliminationTable * 16;
    big.maxEliminationWork = options.maxEliminationWork * 16;
    Eliminator ve(pb, big.maxEliminationTable, big.maxEliminationWork);
    std::vector<unsigned> x;
    if (ve.run(x)) {
      res.cost = pb.evaluate(x);
      res.assignment = std::move(x);
      res.optimal = true;
      res.work = ve.work;
      break;
    }
    BranchAndBound bb(pb, options.maxSearchNodes,
                      solveLocal(pb, options).assignment);
    bb.search(0, 0.0);
    res.assignment = bb.bestX;
    res.cost = bb.bestCost;
    res.optimal = !bb.exhausted;
    res.work = bb.explored;
    break;
  }
  }
  // Back from allowed-local indices to the nodes' candidate indices.
  for (unsigned v = 0; v < pb.n; ++v)
    res.assignment[v] = pb.candidate(v, res.assignment[v]);
  res.cost = graph.evaluate(res.assignment);
  return res;
}
