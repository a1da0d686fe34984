//===- MinPlus.cpp - The elimination kernel ---------------------------------===//
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

} // namespace autoshard::solver
