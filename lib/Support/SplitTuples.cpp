//===- SplitTuples.cpp - MindSpore-style split tuples to named axes -------===//

#include "autoshard/Support/SplitTuples.h"

#include <functional>
#include <sstream>

using namespace autoshard;

namespace {
using Assignment = LayoutDimAxes;

/// True when every dim's axes come after the previous non-empty dim's axes:
/// tensor dims follow mesh order, as a MindSpore device matrix does.
bool isMonotone(const Assignment &a) {
  int64_t last = -1;
  for (const auto &axes : a) {
    if (axes.empty())
      continue;
    if (axes.front() <= last)
      return false;
    last = axes.back();
  }
  return true;
}

std::string describe(const DeviceMesh &mesh, const Assignment &a) {
  std::ostringstream os;
  TensorLayout l;
  l.dimAxes = a;
  return l.str(mesh);
}
} // namespace

TensorLayout autoshard::layoutFromSplitCounts(const DeviceMesh &mesh,
                                              const std::vector<int64_t> &counts,
                                              std::string &error) {
  error.clear();
  int64_t numAxes = mesh.getNumAxes();
  for (size_t d = 0; d < counts.size(); ++d)
    if (counts[d] < 1) {
      error = "split count " + std::to_string(counts[d]) + " of dim " +
              std::to_string(d) + " must be positive";
      return {};
    }

  std::vector<Assignment> solutions;
  Assignment current(counts.size());
  std::vector<bool> used(numAxes, false);
  // Enumerate disjoint axis subsets per dim whose sizes multiply to the count.
  std::function<void(size_t)> assignDim = [&](size_t d) {
    if (solutions.size() > 64)
      return;
    if (d == counts.size()) {
      solutions.push_back(current);
      return;
    }
    std::function<void(int64_t, int64_t)> pick = [&](int64_t from,
                                                     int64_t remaining) {
      if (remaining == 1) {
        assignDim(d + 1);
        return;
      }
      for (int64_t a = from; a < numAxes; ++a) {
        int64_t size = mesh.getAxisSize(a);
        if (used[a] || size < 2 || remaining % size != 0)
          continue;
        used[a] = true;
        current[d].push_back(a);
        pick(a + 1, remaining / size);
        current[d].pop_back();
        used[a] = false;
      }
    };
    pick(0, counts[d]);
  };
  assignDim(0);

  auto countsStr = [&] {
    std::ostringstream os;
    os << "(";
    for (size_t i = 0; i < counts.size(); ++i)
      os << (i ? ", " : "") << counts[i];
    os << ")";
    return os.str();
  };
  if (solutions.empty()) {
    error = "split tuple " + countsStr() + " cannot be formed from mesh " +
            mesh.str() + ": no set of distinct axes has these sizes";
    return {};
  }
  std::vector<Assignment> monotone;
  for (const Assignment &a : solutions)
    if (isMonotone(a))
      monotone.push_back(a);
  const std::vector<Assignment> &pool = monotone.empty() ? solutions : monotone;
  if (pool.size() > 1) {
    error = "split tuple " + countsStr() + " is ambiguous on mesh " +
            mesh.str() + ": it could be " + describe(mesh, pool[0]) + " or " +
            describe(mesh, pool[1]) + "; name the axes instead";
    return {};
  }
  TensorLayout layout;
  layout.dimAxes = pool.front();
  return layout;
}
