//===- Elimination.cpp - Exact variable elimination -------------------------===//
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

std::optional<SolverResult> eliminate(const Problem &pb, uint64_t maxTable,
                                      uint64_t maxWork) {
  Eliminator ve(pb, maxTable, maxWork);
  std::vector<unsigned> x;
  if (!ve.run(x))
    return std::nullopt;
  SolverResult res;
  res.cost = pb.evaluate(x);
  res.assignment = std::move(x);
  res.optimal = true;
  res.work = ve.work;
  res.reusedSteps = ve.memoHits;
  return res;
}

} // namespace autoshard::solver
