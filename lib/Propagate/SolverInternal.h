//===- SolverInternal.h - What the solvers share ----------------*- C++ -*-===//
//
// The normalised problem every solver works on (see Solver.cpp: restrictions
// resolved, parallel edges merged into one dense matrix, nodes ranked by key),
// the helpers they share, and the solvers behind `solve()`:
//  - eliminate (Elimination.cpp): exact variable elimination within limits;
//  - solveLocal (LocalSearch.cpp): forest DP (ForestDP.cpp) then descent,
//    also from the start that follows the annotations (Seed.cpp);
//  - solveBranchAndBound (BranchAndBound.cpp): the exact oracle's search.
// Each takes the Problem and returns a SolverResult over its allowed-local
// candidate indices; `solve()` maps them back.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LIB_PROPAGATE_SOLVERINTERNAL_H
#define AUTOSHARD_LIB_PROPAGATE_SOLVERINTERNAL_H

#include "autoshard/Propagate/Solver.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

namespace autoshard::solver {


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

/// resolveRestrictions, with an empty list for every node that keeps all
/// its candidates (SolverGraph.cpp).
std::vector<std::vector<unsigned>>
resolveRestrictionsSparse(const SolverGraph &graph);

/// The problem of `graph` (SolverProblem.cpp).
Problem normalise(const SolverGraph &graph, const ParallelFor &parallel);

bool strictlyBetter(double candidate, double current);

/// The least of x[0..n) (NaN-free; +infinity when n = 0), in four
/// independent chains: one serial std::min chain costs a compare's latency
/// per entry, and the local search takes the least of every belief it
/// touches.
double leastOf(const double *x, size_t n);

/// belief[c] += cost[c] + shift for c < k, where an infeasible cost (at
/// least kInfeasibleCost / 2) adds kInfeasibleCost and every sum stops at
/// kInfeasibleCost: a message received in a tree pass.
void addMessage(double *belief, const double *cost, double shift, size_t k);

/// The candidate a node moves to from `current` given its `costs`: a scan
/// in index order takes each candidate strictly better than the one held,
/// so ties keep `current` (descent then terminates). Most nodes keep theirs,
/// which the least cost shows without the scan: no candidate is strictly
/// better than `current` when the least one is not.
unsigned bestMove(const double *costs, unsigned k, unsigned current);

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

/// The elimination kernel (MinPlus.cpp; built with GCC on x86-64 it has an
/// AVX2 clone, picked at run time).
void minRow(unsigned kv, unsigned kw, size_t numLive, const double *unary,
            const double *const *tab, const size_t *base, const size_t *vStride,
            const size_t *wStride, double *best, double *arg,
            double *rowUnary);

/// Node v's costs with every neighbour held at its candidate in `x`: its
/// unary costs plus each incident pair's row or column (single-node and
/// neighbourhood moves). ForestDP.cpp.
void costsGiven(const Problem &pb, unsigned v, const std::vector<unsigned> &x,
                std::vector<double> &out);

//===----------------------------------------------------------------------===//
// Forest DP (ForestDP.cpp)
//===----------------------------------------------------------------------===//

/// A spanning forest: for every node its tree pairs, chosen by Kruskal on
/// decreasing pair weight (ties in rank order).
std::vector<bool> spanningForest(const Problem &pb);

struct ForestCache;

/// Exact tree passes over one problem, sharing their messages (a
/// ForestCache) from one pass to the next.
class ForestSolver {
public:
  ForestSolver(const Problem &pb, bool verifyRecipes);
  ~ForestSolver();
  /// Exact min-sum over the forest given by `inTree`; every off-forest pair
  /// contributes a unary term from the current assignment `x` of its other
  /// end (ignored when `x` is empty). Returns the forest-optimal assignment.
  std::vector<unsigned> forestDP(const std::vector<bool> &inTree,
                                 const std::vector<unsigned> &x);
  /// Exact min-sum over the nodes in `block` (their induced subgraph must be
  /// a forest) with every other node held at `x`. Returns the block-optimal
  /// assignment (others unchanged).
  std::vector<unsigned> blockDP(const std::vector<bool> &block,
                                const std::vector<unsigned> &x);
  /// Messages replayed by recipe, and (with verifyRecipes) replays that
  /// disagreed with the computation.
  uint64_t replays() const;
  uint64_t mismatches() const;

private:
  const Problem &pb;
  std::unique_ptr<ForestCache> cache;
};

//===----------------------------------------------------------------------===//
// The solvers
//===----------------------------------------------------------------------===//

/// Exact min-sum by variable elimination (Elimination.cpp); std::nullopt
/// when a table would exceed `maxTable` entries or the work `maxWork`.
std::optional<SolverResult> eliminate(const Problem &pb, uint64_t maxTable,
                                      uint64_t maxWork);

/// Exact min-sum over a neighbourhood of `x` (Elimination.cpp): every node
/// keeps its current candidate and the `width - 1` others that are cheapest
/// with its neighbours held at x. std::nullopt when the elimination would
/// exceed `maxTable` or `maxWork`.
std::optional<std::vector<unsigned>>
neighbourhoodDP(const Problem &pb, const std::vector<unsigned> &x,
                unsigned width, uint64_t maxTable, uint64_t maxWork);

/// A start that follows the annotations (Seed.cpp): from the nodes with
/// one candidate, best first along the pairs, each node takes the
/// candidate cheapest with its neighbours assigned so far. Components no
/// such node reaches start from `fallback`'s candidate at their
/// lowest-ranked node. std::nullopt as soon as the nodes assigned cost at
/// least `limit` (costs are not negative, so the seed would too).
std::optional<std::vector<unsigned>>
propagationSeed(const Problem &pb, const std::vector<unsigned> &fallback,
                double limit);

/// Spanning-forest DP, then descent (LocalSearch.cpp).
SolverResult solveLocal(const Problem &pb, const SolverOptions &options);

/// Branch and bound from the incumbent `seed` (BranchAndBound.cpp), its
/// lower bounds visiting at most `budget` nodes in all; optimal when the
/// search was not cut short, else the best assignment found.
SolverResult solveBranchAndBound(const Problem &pb, uint64_t budget,
                                 std::vector<unsigned> seed);

} // namespace autoshard::solver

#endif // AUTOSHARD_LIB_PROPAGATE_SOLVERINTERNAL_H
