//===- LayoutEnumeration.cpp - Every layout of a tensor on a mesh ---------===//

#include "LayoutEnumeration.h"

#include <algorithm>
#include <functional>

using namespace autoshard;

std::vector<TensorLayout>
autoshard::testutil::allLayouts(const DeviceMesh &mesh, int64_t rank,
                                const std::vector<ReductionKind> &kinds) {
  int64_t numAxes = mesh.getNumAxes();
  std::vector<TensorLayout> out;
  std::vector<int64_t> role(numAxes); // -2 partial, -1 unused, else dim
  std::function<void(int64_t)> assign = [&](int64_t a) {
    if (a < numAxes) {
      for (int64_t r = -2; r < rank; ++r) {
        role[a] = r;
        assign(a + 1);
      }
      return;
    }
    TensorLayout base = TensorLayout::replicated(rank);
    for (int64_t x = 0; x < numAxes; ++x) {
      if (role[x] >= 0)
        base.dimAxes[role[x]].push_back(x);
      else if (role[x] == -2)
        base.partialAxes.push_back(x);
    }
    std::function<void(int64_t, TensorLayout &)> order = [&](int64_t d,
                                                             TensorLayout &l) {
      if (d == rank) {
        for (ReductionKind k :
             l.isPartial() ? kinds
                           : std::vector<ReductionKind>{ReductionKind::Sum}) {
          TensorLayout v = l;
          v.partialKind = k;
          out.push_back(v);
        }
        return;
      }
      LayoutAxes &axes = l.dimAxes[d];
      std::sort(axes.begin(), axes.end());
      do {
        order(d + 1, l);
      } while (std::next_permutation(axes.begin(), axes.end()));
    };
    order(0, base);
  };
  assign(0);
  return out;
}
