//===- LayoutEnumeration.h - Every layout of a tensor on a mesh -*- C++ -*-===//
//
// The planner tests compare the planner against references on every pair of
// layouts; this is the one enumeration they share.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_UNITTESTS_ANALYSIS_LAYOUTENUMERATION_H
#define AUTOSHARD_UNITTESTS_ANALYSIS_LAYOUTENUMERATION_H

#include "autoshard/Support/DeviceMesh.h"
#include "autoshard/Support/TensorLayout.h"

#include <vector>

namespace autoshard::testutil {

/// Every even layout of a rank-`rank` tensor on `mesh`, valid for a given
/// shape or not: each axis unused, partial or on a dim, every order of a
/// dim's axes, partial layouts once per kind in `kinds`. The order is fixed:
/// axes' roles in mesh order (partial, unused, dims 0..), then axis orders.
std::vector<TensorLayout> allLayouts(const DeviceMesh &mesh, int64_t rank,
                                     const std::vector<ReductionKind> &kinds);

} // namespace autoshard::testutil

#endif // AUTOSHARD_UNITTESTS_ANALYSIS_LAYOUTENUMERATION_H
