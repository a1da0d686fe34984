//===- SplitTuples.h - MindSpore-style split tuples to named axes -*- C++ -*-=//
//
// A MindSpore strategy gives, per tensor dim, how many pieces it is cut into,
// e.g. ((2, 1), (1, 4)). autoshard's layouts name the mesh axes instead. This
// maps one tensor's split counts onto a named mesh.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_SUPPORT_SPLITTUPLES_H
#define AUTOSHARD_SUPPORT_SPLITTUPLES_H

#include "autoshard/Support/TensorLayout.h"

#include <string>
#include <vector>

namespace autoshard {

/// Maps split counts (one per dim) to mesh axes. A count is formed by a set of
/// distinct axes whose sizes multiply to it; a dim's axes are listed in mesh
/// order. When several assignments fit, the one where earlier dims take
/// earlier (more major) axes wins; if that still leaves a choice, or nothing
/// fits, `error` is set and the returned layout is meaningless.
TensorLayout layoutFromSplitCounts(const DeviceMesh &mesh,
                                   const std::vector<int64_t> &counts,
                                   std::string &error);

} // namespace autoshard

#endif // AUTOSHARD_SUPPORT_SPLITTUPLES_H
