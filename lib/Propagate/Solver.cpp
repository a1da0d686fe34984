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

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <utility>

using namespace autoshard;

//===----------------------------------------------------------------------===//
// SolverGraph
//===----------------------------------------------------------------------===//

unsigned SolverGraph::addNode(std::string key, std::vector<double> costs) {
  nodes.push_back({std::move(key), std::move(costs)});
  return nodes.size() - 1;
}

void SolverGraph::addEdge(unsigned src, unsigned dst,
                          std::vector<unsigned> srcClass,
                          std::vector<unsigned> dstClass,
                          unsigned numSrcClasses, unsigned numDstClasses,
                          std::vector<double> cost) {
  Edge e;
  e.src = src;
  e.dst = dst;
  e.srcClass = std::move(srcClass);
  e.dstClass = std::move(dstClass);
  e.numSrcClasses = numSrcClasses;
  e.numDstClasses = numDstClasses;
  e.cost = std::move(cost);
  edges.push_back(std::move(e));
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
    if (nodes[n].costs.empty())
      return "node '" + nodes[n].key + "' has no candidate";
  for (const Edge &e : edges) {
    if (e.src >= nodes.size() || e.dst >= nodes.size())
      return "edge refers to a node that does not exist";
    if (e.src == e.dst)
      return "edge from node '" + nodes[e.src].key + "' to itself";
    if (e.srcClass.size() != getNumCandidates(e.src) ||
        e.dstClass.size() != getNumCandidates(e.dst))
      return "edge '" + nodes[e.src].key + "' -> '" + nodes[e.dst].key +
             "' does not map every candidate to a class";
    if (e.cost.size() != static_cast<size_t>(e.numSrcClasses) * e.numDstClasses)
      return "edge '" + nodes[e.src].key + "' -> '" + nodes[e.dst].key +
             "' has a cost table of the wrong size";
    for (unsigned c : e.srcClass)
      if (c >= e.numSrcClasses)
        return "edge class out of range";
    for (unsigned c : e.dstClass)
      if (c >= e.numDstClasses)
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
    total += nodes[n].costs[assignment[n]];
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

std::vector<std::vector<unsigned>>
autoshard::resolveRestrictions(const SolverGraph &graph) {
  unsigned n = graph.getNumNodes();
  std::vector<std::vector<unsigned>> allowed(n);
  for (unsigned v = 0; v < n; ++v) {
    allowed[v].resize(graph.getNumCandidates(v));
    std::iota(allowed[v].begin(), allowed[v].end(), 0u);
  }
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
    std::vector<unsigned> meet;
    std::set_intersection(allowed[r->node].begin(), allowed[r->node].end(),
                          r->allowed.begin(), r->allowed.end(),
                          std::back_inserter(meet));
    if (!meet.empty())
      allowed[r->node] = std::move(meet);
  }
  return allowed;
}

//===----------------------------------------------------------------------===//
// Normalised problem
//===----------------------------------------------------------------------===//

namespace {

/// A merged edge between nodes a and b (rank(a) < rank(b)) over their
/// allowed candidates: m[i * kb + j].
struct Pair {
  unsigned a = 0, b = 0;
  std::vector<double> m;
  double minEntry = 0.0;
  double weight = 0.0;
};

struct Problem {
  unsigned n = 0;
  std::vector<std::vector<unsigned>> allowed;
  std::vector<std::vector<double>> unary;
  std::vector<unsigned> rankOrder; // nodes sorted by canonical key
  std::vector<unsigned> rank;      // node -> position in rankOrder
  std::vector<Pair> pairs;
  /// node -> incident pair ids.
  std::vector<std::vector<unsigned>> incident;

  unsigned k(unsigned v) const { return allowed[v].size(); }
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
      total += unary[v][x[v]];
    for (const Pair &p : pairs)
      total += p.m[x[p.a] * k(p.b) + x[p.b]];
    return total;
  }
};

Problem normalise(const SolverGraph &graph) {
  Problem pb;
  pb.n = graph.getNumNodes();
  pb.allowed = resolveRestrictions(graph);
  pb.unary.resize(pb.n);
  for (unsigned v = 0; v < pb.n; ++v)
    for (unsigned c : pb.allowed[v])
      pb.unary[v].push_back(graph.getNode(v).costs[c]);

  pb.rankOrder.resize(pb.n);
  std::iota(pb.rankOrder.begin(), pb.rankOrder.end(), 0u);
  std::stable_sort(pb.rankOrder.begin(), pb.rankOrder.end(),
                   [&](unsigned x, unsigned y) {
                     return graph.getNode(x).key < graph.getNode(y).key;
                   });
  pb.rank.resize(pb.n);
  for (unsigned i = 0; i < pb.n; ++i)
    pb.rank[pb.rankOrder[i]] = i;

  // Merge edges per unordered pair of ranks; std::map keeps rank order.
  std::map<std::pair<unsigned, unsigned>, unsigned> pairIds;
  for (const auto &e : graph.getEdges()) {
    bool srcFirst = pb.rank[e.src] < pb.rank[e.dst];
    unsigned a = srcFirst ? e.src : e.dst, b = srcFirst ? e.dst : e.src;
    auto key = std::make_pair(pb.rank[a], pb.rank[b]);
    auto it = pairIds.find(key);
    if (it == pairIds.end()) {
      Pair p;
      p.a = a;
      p.b = b;
      p.m.assign(pb.k(a) * pb.k(b), 0.0);
      it = pairIds.emplace(key, pb.pairs.size()).first;
      pb.pairs.push_back(std::move(p));
    }
    Pair &p = pb.pairs[it->second];
    unsigned kb = pb.k(b);
    for (unsigned i = 0; i < pb.k(a); ++i)
      for (unsigned j = 0; j < kb; ++j) {
        unsigned cs = srcFirst ? pb.allowed[a][i] : pb.allowed[b][j];
        unsigned cd = srcFirst ? pb.allowed[b][j] : pb.allowed[a][i];
        double &slot = p.m[i * kb + j];
        slot = std::min(kInfeasibleCost, slot + e.get(cs, cd));
      }
  }
  // Re-sort pairs into rank order (pairIds is ordered by rank key).
  std::vector<Pair> sorted;
  sorted.reserve(pb.pairs.size());
  for (auto &[key, id] : pairIds)
    sorted.push_back(std::move(pb.pairs[id]));
  pb.pairs = std::move(sorted);

  pb.incident.resize(pb.n);
  for (unsigned id = 0; id < pb.pairs.size(); ++id) {
    Pair &p = pb.pairs[id];
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    bool infeasible = false;
    for (double c : p.m) {
      lo = std::min(lo, c);
      if (c >= kInfeasibleCost / 2)
        infeasible = true;
      else
        hi = std::max(hi, c);
    }
    p.minEntry = lo;
    // Edges that forbid combinations must be solved exactly first.
    p.weight = infeasible ? kInfeasibleCost : (hi > lo ? hi - lo : 0.0);
    pb.incident[p.a].push_back(id);
    pb.incident[p.b].push_back(id);
  }
  return pb;
}

bool strictlyBetter(double candidate, double current) {
  return candidate < current - 1e-9 * std::max(1.0, std::fabs(current));
}

//===----------------------------------------------------------------------===//
// Forest DP
//===----------------------------------------------------------------------===//

/// A spanning forest: for every node its tree pairs, chosen by Kruskal on
/// decreasing pair weight (ties in rank order).
std::vector<bool> spanningForest(const Problem &pb) {
  std::vector<unsigned> order(pb.pairs.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](unsigned x, unsigned y) {
    return pb.pairs[x].weight > pb.pairs[y].weight;
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

/// Exact min-sum over the forest given by `inTree`; every off-forest pair
/// contributes a unary term from the current assignment `x` of its other end
/// (ignored when `x` is empty). Returns the forest-optimal assignment.
std::vector<unsigned> forestDP(const Problem &pb,
                               const std::vector<bool> &inTree,
                               const std::vector<unsigned> &x) {
  unsigned n = pb.n;
  std::vector<std::vector<double>> belief = pb.unary;
  if (!x.empty())
    for (unsigned id = 0; id < pb.pairs.size(); ++id) {
      if (inTree[id])
        continue;
      const Pair &p = pb.pairs[id];
      for (unsigned c = 0; c < pb.k(p.a); ++c)
        belief[p.a][c] += pb.pairCost(p, p.a, c, x[p.b]);
      for (unsigned c = 0; c < pb.k(p.b); ++c)
        belief[p.b][c] += pb.pairCost(p, p.b, c, x[p.a]);
    }

  // BFS from the lowest-ranked node of each tree.
  std::vector<int> parentPair(n, -1);
  std::vector<bool> seen(n, false);
  std::vector<unsigned> bfs;
  bfs.reserve(n);
  for (unsigned r : pb.rankOrder) {
    if (seen[r])
      continue;
    seen[r] = true;
    size_t head = bfs.size();
    bfs.push_back(r);
    while (head < bfs.size()) {
      unsigned v = bfs[head++];
      for (unsigned id : pb.incident[v]) {
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

  // Upward pass: best[v][cp] = child v's best candidate given its parent.
  std::vector<std::vector<unsigned>> best(n);
  for (auto it = bfs.rbegin(); it != bfs.rend(); ++it) {
    unsigned v = *it;
    if (parentPair[v] < 0)
      continue;
    const Pair &p = pb.pairs[parentPair[v]];
    unsigned par = pb.other(p, v);
    unsigned kp = pb.k(par), kv = pb.k(v);
    best[v].assign(kp, 0);
    for (unsigned cp = 0; cp < kp; ++cp) {
      double bestCost = std::numeric_limits<double>::infinity();
      unsigned arg = 0;
      for (unsigned cv = 0; cv < kv; ++cv) {
        double c = belief[v][cv] + pb.pairCost(p, par, cp, cv);
        if (c < bestCost) {
          bestCost = c;
          arg = cv;
        }
      }
      best[v][cp] = arg;
      belief[par][cp] = std::min(kInfeasibleCost, belief[par][cp] + bestCost);
    }
  }
  // Downward pass.
  std::vector<unsigned> out(n, 0);
  for (unsigned v : bfs) {
    if (parentPair[v] < 0) {
      out[v] = std::min_element(belief[v].begin(), belief[v].end()) -
               belief[v].begin();
      continue;
    }
    unsigned par = pb.other(pb.pairs[parentPair[v]], v);
    out[v] = best[v][out[par]];
  }
  return out;
}

/// Iterated conditional modes in rank order until no single-node move
/// improves. Returns whether anything changed.
bool icm(const Problem &pb, std::vector<unsigned> &x) {
  bool changedAny = false;
  for (unsigned sweep = 0; sweep < 1000; ++sweep) {
    bool changed = false;
    for (unsigned v : pb.rankOrder) {
      unsigned kv = pb.k(v);
      if (kv < 2)
        continue;
      std::vector<double> local = pb.unary[v];
      for (unsigned id : pb.incident[v]) {
        const Pair &p = pb.pairs[id];
        unsigned w = pb.other(p, v);
        for (unsigned c = 0; c < kv; ++c)
          local[c] += pb.pairCost(p, v, c, x[w]);
      }
      unsigned arg = x[v];
      for (unsigned c = 0; c < kv; ++c)
        if (strictlyBetter(local[c], local[arg]))
          arg = c;
      if (arg != x[v]) {
        x[v] = arg;
        changed = changedAny = true;
      }
    }
    if (!changed)
      break;
  }
  return changedAny;
}

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

  struct Factor {
    std::vector<unsigned> scope; // nodes, row-major (last is minor)
    std::vector<double> table;
    bool alive = true;
  };
  std::vector<Factor> factors;
  std::vector<std::vector<unsigned>> factorsOf; // node -> factor ids
  std::vector<std::vector<unsigned>> adj;       // sorted by rank
  struct Step {
    unsigned node;
    std::vector<unsigned> scope;
    std::vector<unsigned> argmin;
  };
  std::vector<Step> steps;

  Eliminator(const Problem &pb, uint64_t maxTable, uint64_t maxWork)
      : pb(pb), maxTable(maxTable), maxWork(maxWork) {}

  double tableSize(unsigned v) const {
    double size = pb.k(v);
    for (unsigned u : adj[v])
      size *= pb.k(u);
    return size;
  }

  bool run(std::vector<unsigned> &out) {
    unsigned n = pb.n;
    factorsOf.resize(n);
    adj.resize(n);
    auto byRank = [&](unsigned x, unsigned y) {
      return pb.rank[x] < pb.rank[y];
    };
    for (const Pair &p : pb.pairs) {
      Factor f;
      f.scope = {p.a, p.b};
      f.table = p.m;
      factorsOf[p.a].push_back(factors.size());
      factorsOf[p.b].push_back(factors.size());
      factors.push_back(std::move(f));
      adj[p.a].push_back(p.b);
      adj[p.b].push_back(p.a);
    }
    for (auto &a : adj) {
      std::sort(a.begin(), a.end(), byRank);
      a.erase(std::unique(a.begin(), a.end()), a.end());
    }
    // Min-weight order: the node whose new table is smallest, ties by rank.
    std::set<std::pair<double, unsigned>> queue;
    std::vector<double> score(n);
    for (unsigned v = 0; v < n; ++v) {
      score[v] = tableSize(v);
      queue.insert({score[v], pb.rank[v]});
    }
    std::vector<bool> gone(n, false);
    while (!queue.empty()) {
      unsigned v = pb.rankOrder[queue.begin()->second];
      queue.erase(queue.begin());
      if (score[v] > static_cast<double>(maxTable))
        return false;
      if (!eliminate(v))
        return false;
      gone[v] = true;
      // The neighbours now form a clique (the new factor's scope).
      std::vector<unsigned> nbrs = adj[v];
      for (unsigned u : nbrs) {
        std::vector<unsigned> merged;
        std::set_union(adj[u].begin(), adj[u].end(), nbrs.begin(), nbrs.end(),
                       std::back_inserter(merged), byRank);
        merged.erase(
            std::remove_if(merged.begin(), merged.end(),
                           [&](unsigned w) { return w == u || w == v; }),
            merged.end());
        adj[u] = std::move(merged);
      }
      for (unsigned u : nbrs) {
        queue.erase({score[u], pb.rank[u]});
        score[u] = tableSize(u);
        queue.insert({score[u], pb.rank[u]});
      }
    }
    // Decode in reverse elimination order.
    out.assign(n, 0);
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      size_t index = 0;
      for (unsigned u : it->scope)
        index = index * pb.k(u) + out[u];
      out[it->node] = it->argmin[index];
    }
    return true;
  }

  bool eliminate(unsigned v) {
    Step step;
    step.node = v;
    step.scope = adj[v];
    const std::vector<unsigned> &scope = step.scope;
    size_t size = 1;
    for (unsigned u : scope)
      size *= pb.k(u);
    unsigned kv = pb.k(v);
    // Each factor on v: its stride for every scope position and for v.
    std::vector<unsigned> live;
    for (unsigned id : factorsOf[v])
      if (factors[id].alive)
        live.push_back(id);
    std::sort(live.begin(), live.end());
    live.erase(std::unique(live.begin(), live.end()), live.end());
    work += static_cast<uint64_t>(size) * kv * (live.size() + 1);
    // The argmin tables are kept for decoding: bound them as well.
    stored += size;
    if (work > maxWork || stored > 16 * maxTable)
      return false;
    std::vector<std::vector<size_t>> strides(
        live.size(), std::vector<size_t>(scope.size(), 0));
    std::vector<size_t> vStride(live.size(), 0);
    for (size_t i = 0; i < live.size(); ++i) {
      const Factor &f = factors[live[i]];
      size_t stride = 1;
      for (size_t j = f.scope.size(); j-- > 0;) {
        unsigned u = f.scope[j];
        if (u == v) {
          vStride[i] = stride;
        } else {
          auto pos = std::find(scope.begin(), scope.end(), u) - scope.begin();
          strides[i][pos] = stride;
        }
        stride *= pb.k(u);
      }
    }
    Factor g;
    g.scope = scope;
    g.table.assign(size, 0.0);
    step.argmin.assign(size, 0);
    std::vector<unsigned> digit(scope.size(), 0);
    std::vector<size_t> base(live.size(), 0);
    // Raw pointers hoisted out of the hot loop: the stores into g.table and
    // step.argmin would otherwise force reloading every vector's data
    // pointer (they may alias as far as the compiler knows). Same sums in the
    // same order, so the result is bit-identical.
    const size_t numLive = live.size();
    std::vector<const double *> tab(numLive);
    for (size_t i = 0; i < numLive; ++i)
      tab[i] = factors[live[i]].table.data();
    std::vector<unsigned> extent(scope.size());
    for (size_t j = 0; j < scope.size(); ++j)
      extent[j] = pb.k(scope[j]);
    const double *unary = pb.unary[v].data();
    double *outTable = g.table.data();
    unsigned *outArg = step.argmin.data();
    size_t *baseP = base.data();
    const size_t *vStrideP = vStride.data();
    // Per scope index, the sums of all v candidates, factor by factor: the
    // inner loops then run over kv (long, often unit stride) rather than
    // over the few live factors. Each sum still adds unary, then factor 0,
    // 1, ... in order, so it is bit-identical to summing per candidate.
    std::vector<double> acc(kv);
    double *accP = acc.data();
    for (size_t index = 0; index < size; ++index) {
      for (unsigned cv = 0; cv < kv; ++cv)
        accP[cv] = unary[cv];
      for (size_t i = 0; i < numLive; ++i) {
        const double *row = tab[i] + baseP[i];
        size_t vs = vStrideP[i];
        if (vs == 1)
          for (unsigned cv = 0; cv < kv; ++cv)
            accP[cv] += row[cv];
        else
          for (unsigned cv = 0; cv < kv; ++cv)
            accP[cv] += row[cv * vs];
      }
      double best = std::numeric_limits<double>::infinity();
      unsigned arg = 0;
      for (unsigned cv = 0; cv < kv; ++cv) {
        if (accP[cv] < best) {
          best = accP[cv];
          arg = cv;
        }
      }
      outTable[index] = std::min(kInfeasibleCost, best);
      outArg[index] = arg;
      // Odometer over the scope, minor-most last.
      for (size_t j = scope.size(); j-- > 0;) {
        for (size_t i = 0; i < numLive; ++i)
          baseP[i] += strides[i][j];
        if (++digit[j] < extent[j])
          break;
        for (size_t i = 0; i < numLive; ++i)
          baseP[i] -= strides[i][j] * digit[j];
        digit[j] = 0;
      }
    }
    for (unsigned id : live) {
      factors[id].alive = false;
      factors[id].table.clear();
      factors[id].table.shrink_to_fit();
    }
    if (!scope.empty()) {
      for (unsigned u : scope)
        factorsOf[u].push_back(factors.size());
      factors.push_back(std::move(g));
    }
    steps.push_back(std::move(step));
    return true;
  }
};

/// Exact min-sum over the nodes in `block` (their induced subgraph must be a
/// forest) with every other node held at `x`. Returns the block-optimal
/// assignment (others unchanged).
std::vector<unsigned> blockDP(const Problem &pb, const std::vector<bool> &block,
                              const std::vector<unsigned> &x) {
  unsigned n = pb.n;
  std::vector<std::vector<double>> belief(n);
  for (unsigned v = 0; v < n; ++v)
    if (block[v])
      belief[v] = pb.unary[v];
  std::vector<bool> inTree(pb.pairs.size(), false);
  for (unsigned id = 0; id < pb.pairs.size(); ++id) {
    const Pair &p = pb.pairs[id];
    if (block[p.a] && block[p.b]) {
      inTree[id] = true;
      continue;
    }
    if (block[p.a])
      for (unsigned c = 0; c < pb.k(p.a); ++c)
        belief[p.a][c] += pb.pairCost(p, p.a, c, x[p.b]);
    if (block[p.b])
      for (unsigned c = 0; c < pb.k(p.b); ++c)
        belief[p.b][c] += pb.pairCost(p, p.b, c, x[p.a]);
  }
  std::vector<int> parentPair(n, -1);
  std::vector<bool> seen(n, false);
  std::vector<unsigned> bfs;
  for (unsigned r : pb.rankOrder) {
    if (!block[r] || seen[r])
      continue;
    seen[r] = true;
    size_t head = bfs.size();
    bfs.push_back(r);
    while (head < bfs.size()) {
      unsigned v = bfs[head++];
      for (unsigned id : pb.incident[v]) {
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
  std::vector<std::vector<unsigned>> best(n);
  for (auto it = bfs.rbegin(); it != bfs.rend(); ++it) {
    unsigned v = *it;
    if (parentPair[v] < 0)
      continue;
    const Pair &p = pb.pairs[parentPair[v]];
    unsigned par = pb.other(p, v);
    best[v].assign(pb.k(par), 0);
    for (unsigned cp = 0; cp < pb.k(par); ++cp) {
      double bestCost = std::numeric_limits<double>::infinity();
      unsigned arg = 0;
      for (unsigned cv = 0; cv < pb.k(v); ++cv) {
        double c = belief[v][cv] + pb.pairCost(p, par, cp, cv);
        if (c < bestCost) {
          bestCost = c;
          arg = cv;
        }
      }
      best[v][cp] = arg;
      belief[par][cp] = std::min(kInfeasibleCost, belief[par][cp] + bestCost);
    }
  }
  std::vector<unsigned> out = x;
  for (unsigned v : bfs) {
    if (parentPair[v] < 0) {
      // Keep the current candidate on ties so descent terminates.
      unsigned arg = x[v];
      for (unsigned c = 0; c < pb.k(v); ++c)
        if (strictlyBetter(belief[v][c], belief[v][arg]))
          arg = c;
      out[v] = arg;
      continue;
    }
    out[v] = best[v][out[pb.other(pb.pairs[parentPair[v]], v)]];
  }
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
    for (unsigned id : pb.incident[v]) {
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
      for (unsigned id : pb.incident[v]) {
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

/// The fallback when elimination would need tables that are too large:
/// forest DP on a maximum-weight spanning forest, then block coordinate
/// descent. Each block is an induced forest (solved exactly with the rest
/// held fixed), so every step is monotone; blocks come from four node
/// orders (spanning-forest BFS and rank, each both ways) so that a chain the
/// spanning forest cut is whole in some block. ICM moves single nodes in
/// between. Stops when a round improves nothing.
SolverResult solveLocal(const Problem &pb, const SolverOptions &options) {
  SolverResult res;
  std::vector<bool> inTree = spanningForest(pb);
  bool isForest =
      std::all_of(inTree.begin(), inTree.end(), [](bool b) { return b; });
  std::vector<unsigned> x = forestDP(pb, inTree, {});
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
    for (unsigned round = 0; round < options.maxRounds; ++round) {
      ++res.work;
      double before = cost;
      icm(pb, x);
      cost = pb.evaluate(x);
      // The old heuristic move: forest DP with off-forest pairs conditioned
      // on x. Not monotone, so only taken when it helps.
      std::vector<unsigned> y = forestDP(pb, inTree, x);
      if (double c = pb.evaluate(y); strictlyBetter(c, cost)) {
        x = std::move(y);
        cost = c;
      }
      for (const std::vector<bool> &block : blocks) {
        std::vector<unsigned> z = blockDP(pb, block, x);
        if (double c = pb.evaluate(z); strictlyBetter(c, cost)) {
          x = std::move(z);
          cost = c;
        }
      }
      if (!strictlyBetter(cost, before))
        break;
    }
  }
  res.assignment = std::move(x);
  res.cost = cost;
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
      for (unsigned id : pb.incident[pick])
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
    partial = pb.unary;
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
      for (unsigned id : pb.incident[v]) {
        const Pair &p = pb.pairs[id];
        unsigned w = pb.other(p, v);
        if (pos[w] <= depth)
          continue;
        for (unsigned cw = 0; cw < pb.k(w); ++cw)
          partial[w][cw] += pb.pairCost(p, w, cw, c);
      }
      search(depth + 1, soFar + here);
      for (unsigned id : pb.incident[v]) {
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
  Problem pb = normalise(graph);
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
    res.assignment[v] = pb.allowed[v][res.assignment[v]];
  res.cost = graph.evaluate(res.assignment);
  return res;
}
