//===- MemoryRepair.cpp - Phase 4: undo what the bound did not need -------===//
//
// The Lagrangian search of MemoryBound.cpp reaches only the plans on the
// convex hull of (time, bytes): one multiplier prices every byte alike, so
// the repeated layers of a model all make the same choice, and a bound
// that a few layers made lean would meet gets all of them lean (about
// twice the fastest plan's time at 0.8x its bytes on GPT). The repair
// starts from that plan and gives parts of it back the fastest plan's
// candidates while the bound holds, each move taken only when it makes the
// plan faster:
//
//  - cut moves: every node on one side of a cut in program order takes the
//    fastest plan's candidate, the other side keeps its own (the layers
//    after layer k fast, those before lean, and the one reshard between).
//    The time and bytes of every cut, both ways, come from one pass over
//    the nodes and pairs: a pair changes its cost at most twice as the cut
//    moves along. The cut that saves the most time within the bound goes
//    first; a second cut after it makes a window;
//  - region moves: a connected set of nodes where the two plans differ
//    (the plans differ nowhere around it, so moving it costs no reshard at
//    its border) moves whole; regions go in order of the time they save
//    per byte they add, those that add none first.
//
// Times are exact; bytes are the candidates' (additive, as the penalty
// counts them), and every plan taken is first measured as the report
// measures it (planMemory: a layout-free value follows its reader, a
// training step counts its peak).
//
//===----------------------------------------------------------------------===//

#include "FunctionPropagation.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace autoshard;
using namespace autoshard::propagate;

namespace {
/// A set of nodes that take the fastest plan's candidates, and what that
/// changes in the plan's time and (estimated) bytes: a region's nodes, or
/// a cut (its nodes are listed only when it is tried).
struct Move {
  std::vector<unsigned> nodes;
  double time = 0.0, bytes = 0.0;
  long cut = -1;
  bool before = false;
};

/// What the repair reads: the solver graph, the fastest plan, each node's
/// bytes per candidate, and where each node sits in the program.
class RepairMoves {
public:
  RepairMoves(
      const SolverGraph &graph, const std::vector<unsigned> &fastest,
      const std::vector<std::shared_ptr<const std::vector<double>>> &bytesOf,
      std::vector<unsigned> position)
      : graph(graph), fastest(fastest), bytesOf(bytesOf),
        position(std::move(position)), edgesOf(graph.getNumNodes()) {
    const auto &edges = graph.getEdges();
    for (unsigned id = 0; id < edges.size(); ++id) {
      edgesOf[edges[id].src].push_back(id);
      if (edges[id].dst != edges[id].src)
        edgesOf[edges[id].dst].push_back(id);
    }
    numPositions = 0;
    for (unsigned p : this->position)
      numPositions = std::max(numPositions, p + 1);
  }

  /// The moves of every cut that saves time, one side of it (the later
  /// side, or with `before` the earlier) taking the fastest plan.
  std::vector<Move> cutMoves(const std::vector<unsigned> &x, bool before) const;
  /// The nodes a move moves.
  std::vector<unsigned> nodesOf(const Move &m,
                                const std::vector<unsigned> &x) const {
    if (m.cut < 0)
      return m.nodes;
    std::vector<unsigned> out;
    for (unsigned v = 0; v < graph.getNumNodes(); ++v)
      if (lastCut(v, x, m.before) >= m.cut)
        out.push_back(v);
    return out;
  }
  /// The moves of the regions where x and the fastest plan differ, those
  /// that save time.
  std::vector<Move> regionMoves(const std::vector<unsigned> &x) const;

private:
  /// Node v moves with every cut up to this one (-1: never): the cut at p
  /// moves the differing nodes at position p or later (with `before`, the
  /// mirrored positions).
  long lastCut(unsigned v, const std::vector<unsigned> &x, bool before) const {
    if (x[v] == fastest[v])
      return -1;
    return before ? long(numPositions - 1 - position[v]) : long(position[v]);
  }
  /// A node's unary cost change and bytes change when it moves.
  double unaryDelta(unsigned v, const std::vector<unsigned> &x) const {
    const std::vector<double> &c = *graph.getNode(v).costs;
    return c[fastest[v]] - c[x[v]];
  }
  double bytesDelta(unsigned v, const std::vector<unsigned> &x) const {
    return (*bytesOf[v])[fastest[v]] - (*bytesOf[v])[x[v]];
  }

  const SolverGraph &graph;
  const std::vector<unsigned> &fastest;
  const std::vector<std::shared_ptr<const std::vector<double>>> &bytesOf;
  std::vector<unsigned> position;
  unsigned numPositions = 0;
  std::vector<std::vector<unsigned>> edgesOf;
};
} // namespace

/// Saves time beyond the rounding of a total of `cost`.
static bool savesTime(double time, double cost) {
  return time < -1e-12 * std::max(1.0, std::fabs(cost));
}

std::vector<Move> RepairMoves::cutMoves(const std::vector<unsigned> &x,
                                        bool before) const {
  // Each node and pair adds its change over the range of cuts that moves
  // it to a difference array.
  unsigned np = numPositions;
  auto last = [&](unsigned v) { return lastCut(v, x, before); };
  std::vector<double> time(np + 1, 0.0), bytes(np + 1, 0.0);
  auto add = [&](std::vector<double> &d, long from, long to, double value) {
    if (from > to || value == 0.0)
      return;
    d[from] += value;
    d[to + 1] -= value;
  };
  for (unsigned v = 0; v < graph.getNumNodes(); ++v)
    if (long t = last(v); t >= 0) {
      add(time, 0, t, unaryDelta(v, x));
      add(bytes, 0, t, bytesDelta(v, x));
    }
  for (const SolverGraph::Edge &e : graph.getEdges()) {
    long ta = last(e.src), tb = last(e.dst);
    if (ta < 0 && tb < 0)
      continue;
    double stay = e.get(x[e.src], x[e.dst]);
    add(time, 0, std::min(ta, tb),
        e.get(fastest[e.src], fastest[e.dst]) - stay);
    double one = ta > tb ? e.get(fastest[e.src], x[e.dst])
                         : e.get(x[e.src], fastest[e.dst]);
    add(time, std::min(ta, tb) + 1, std::max(ta, tb), one - stay);
  }
  std::vector<Move> moves;
  double t = 0.0, b = 0.0;
  for (unsigned p = 0; p < np; ++p) {
    t += time[p];
    b += bytes[p];
    if (!savesTime(t, 0.0))
      continue;
    Move m;
    m.time = t;
    m.bytes = b;
    m.cut = p;
    m.before = before;
    moves.push_back(std::move(m));
  }
  return moves;
}

std::vector<Move>
RepairMoves::regionMoves(const std::vector<unsigned> &x) const {
  unsigned n = graph.getNumNodes();
  const auto &edges = graph.getEdges();
  std::vector<unsigned> parent(n);
  std::iota(parent.begin(), parent.end(), 0u);
  auto find = [&](unsigned v) {
    while (parent[v] != v)
      v = parent[v] = parent[parent[v]];
    return v;
  };
  for (const SolverGraph::Edge &e : edges)
    if (x[e.src] != fastest[e.src] && x[e.dst] != fastest[e.dst]) {
      unsigned a = find(e.src), b = find(e.dst);
      if (a != b)
        parent[std::max(a, b)] = std::min(a, b);
    }
  // Regions by their first node, each with its nodes in increasing order.
  std::vector<Move> regions;
  std::vector<unsigned> regionOf(n, ~0u);
  for (unsigned v = 0; v < n; ++v) {
    if (x[v] == fastest[v])
      continue;
    unsigned r = find(v);
    if (regionOf[r] == ~0u) {
      regionOf[r] = regions.size();
      regions.emplace_back();
    }
    regions[regionOf[r]].nodes.push_back(v);
  }
  // Regions share no pair: each one's change is counted with the rest of
  // the plan at x, and stays true when others move.
  std::vector<unsigned> z = x;
  std::vector<unsigned> seenAt(edges.size(), ~0u);
  std::vector<Move> moves;
  for (unsigned r = 0; r < regions.size(); ++r) {
    Move &m = regions[r];
    for (unsigned v : m.nodes) {
      m.time += unaryDelta(v, x);
      m.bytes += bytesDelta(v, x);
      z[v] = fastest[v];
    }
    for (unsigned v : m.nodes)
      for (unsigned id : edgesOf[v]) {
        if (seenAt[id] == r)
          continue;
        seenAt[id] = r;
        const SolverGraph::Edge &e = edges[id];
        m.time += e.get(z[e.src], z[e.dst]) - e.get(x[e.src], x[e.dst]);
      }
    for (unsigned v : m.nodes)
      z[v] = x[v];
    if (savesTime(m.time, 0.0))
      moves.push_back(std::move(m));
  }
  return moves;
}

/// Each solver node's place in the program: an op's own, an argument's or
/// fan-out's the first op next to it, a result's its producer's.
static std::vector<unsigned> programPositions(const SolverGraph &graph,
                                              const std::vector<Node> &nodes) {
  constexpr unsigned kNone = ~0u;
  std::vector<unsigned> pos(graph.getNumNodes(), kNone);
  for (auto [i, n] : llvm::enumerate(nodes))
    if (n.kind == Node::Op)
      pos[n.solverId] = i;
  // Two rounds: an argument read through a fan-out is two pairs from its
  // first op.
  for (int round = 0; round < 2; ++round) {
    std::vector<unsigned> next = pos;
    for (const SolverGraph::Edge &e : graph.getEdges()) {
      if (pos[e.dst] != kNone && pos[e.src] == kNone)
        next[e.src] = std::min(next[e.src], pos[e.dst]);
      if (pos[e.src] != kNone && pos[e.dst] == kNone)
        next[e.dst] = std::min(next[e.dst], pos[e.src]);
    }
    pos = std::move(next);
  }
  for (unsigned &p : pos)
    if (p == kNone)
      p = 0;
  return pos;
}

std::vector<double> FunctionPropagation::absorbedBytes(unsigned i) {
  const Node &n = nodes[i];
  std::vector<double> bytes(n.cands().size(), 0.0);
  if (n.kind != Node::Op || n.layoutFree)
    return bytes;
  for (auto [use, src] : llvm::zip_equal(n.op->getOpOperands(), sourcesOf(n))) {
    if (!readsLayoutFree(src, use.get()))
      continue;
    // The producer's result, and down a fill's init to its tensor.empty.
    unsigned values = 0;
    for (OperandSource at = src;;) {
      ++values;
      const Node &pn = nodes[at.node];
      if (!isa<linalg::FillOp>(pn.op))
        break;
      OpOperand &init = pn.op->getOpOperands().back();
      at = sourcesOf(pn).back();
      if (!readsLayoutFree(at, init.get()))
        break;
    }
    Type type = use.get().getType();
    unsigned operand = use.getOperandNumber();
    for (auto [ci, c] : llvm::enumerate(n.cands()))
      if (operand < c.operandLayouts.size())
        bytes[ci] += values * tensorBytes(c.operandLayouts[operand], type);
  }
  return bytes;
}

void FunctionPropagation::repairMemory(
    const std::vector<unsigned> &fastest,
    const std::vector<std::shared_ptr<const std::vector<double>>> &bytesOfNode,
    double bound, double bytes, std::vector<unsigned> &x, double &cost) {
  // The penalty's bytes leave out the layout-free values a node's operand
  // layouts give (a matmul's init and its tensor.empty, as large as its
  // result): the moves' estimates count them, as planMemory does (a
  // training step's peak is only measured).
  std::vector<std::shared_ptr<const std::vector<double>>> bytesOf = bytesOfNode;
  if (!training)
    for (unsigned i = 0; i < nodes.size(); ++i) {
      std::vector<double> more = absorbedBytes(i);
      if (std::none_of(more.begin(), more.end(),
                       [](double b) { return b != 0.0; }))
        continue;
      unsigned v = nodes[i].solverId;
      for (unsigned c = 0; c < more.size(); ++c)
        more[c] += (*bytesOf[v])[c];
      bytesOf[v] = std::make_shared<const std::vector<double>>(std::move(more));
    }
  RepairMoves repair(graph, fastest, bytesOf, programPositions(graph, nodes));
  // Takes the move when the plan it gives fits and is faster.
  auto take = [&](const Move &m) {
    std::vector<unsigned> z = x;
    for (unsigned v : repair.nodesOf(m, x))
      z[v] = fastest[v];
    double c = graph.evaluate(z);
    if (!(c < cost))
      return false;
    applySolution(z);
    double b = planMemory();
    if (b > bound)
      return false;
    x = std::move(z);
    cost = c;
    bytes = b;
    return true;
  };
  // Cut moves: the one saving most within the bound (by the estimate,
  // then measured; a few tries), on either side; twice, for a window.
  constexpr int kCutRounds = 2, kCutTries = 4;
  for (int round = 0; round < kCutRounds; ++round) {
    std::vector<Move> moves = repair.cutMoves(x, /*before=*/false);
    for (Move &m : repair.cutMoves(x, /*before=*/true))
      moves.push_back(std::move(m));
    std::stable_sort(
        moves.begin(), moves.end(),
        [](const Move &a, const Move &b) { return a.time < b.time; });
    int tries = 0;
    bool moved = false;
    for (const Move &m : moves) {
      if (bytes + m.bytes > bound)
        continue;
      if ((moved = take(m)) || ++tries == kCutTries)
        break;
    }
    if (!moved)
      break;
  }
  // Region moves: most time saved per byte added first, those adding no
  // bytes first of all; ties in region order.
  std::vector<Move> moves = repair.regionMoves(x);
  std::stable_sort(moves.begin(), moves.end(),
                   [](const Move &a, const Move &b) {
                     bool freeA = a.bytes <= 0.0, freeB = b.bytes <= 0.0;
                     if (freeA != freeB)
                       return freeA;
                     if (freeA)
                       return a.time < b.time;
                     return -a.time / a.bytes > -b.time / b.bytes;
                   });
  for (const Move &m : moves)
    if (bytes + m.bytes <= bound)
      take(m);
}
