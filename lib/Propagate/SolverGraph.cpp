//===- SolverGraph.cpp - The solver's input graph ---------------------------===//
//
// See Solver.h: the graph, its restrictions and the solver kinds.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Propagate/Solver.h"

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
std::vector<std::vector<unsigned>>
solver::resolveRestrictionsSparse(const SolverGraph &graph) {
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
  std::vector<std::vector<unsigned>> allowed = solver::resolveRestrictionsSparse(graph);
  for (unsigned v = 0; v < graph.getNumNodes(); ++v)
    if (allowed[v].empty()) {
      allowed[v].resize(graph.getNumCandidates(v));
      std::iota(allowed[v].begin(), allowed[v].end(), 0u);
    }
  return allowed;
}
