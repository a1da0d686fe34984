//===- ForestDP.cpp - Exact DP over forests ---------------------------------===//
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
static std::vector<unsigned> forestDP(const Problem &pb, ForestCache &cache,
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

/// Exact min-sum over the nodes in `block` (their induced subgraph must be a
/// forest) with every other node held at `x`. Returns the block-optimal
/// assignment (others unchanged).
static std::vector<unsigned> blockDP(const Problem &pb, ForestCache &cache,
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

ForestSolver::ForestSolver(const Problem &pb, bool verifyRecipes)
    : pb(pb), cache(std::make_unique<ForestCache>()) {
  cache->verify = verifyRecipes;
}

ForestSolver::~ForestSolver() = default;

std::vector<unsigned>
ForestSolver::forestDP(const std::vector<bool> &inTree,
                       const std::vector<unsigned> &x) {
  return solver::forestDP(pb, *cache, inTree, x);
}

std::vector<unsigned> ForestSolver::blockDP(const std::vector<bool> &block,
                                            const std::vector<unsigned> &x) {
  return solver::blockDP(pb, *cache, block, x);
}

uint64_t ForestSolver::replays() const { return cache->replays; }
uint64_t ForestSolver::mismatches() const { return cache->mismatches; }

} // namespace autoshard::solver
