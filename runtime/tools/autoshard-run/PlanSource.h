//===- PlanSource.h - Where autoshard-run's plan comes from -----*- C++ -*-===//
//
// autoshard-run executes plan files (.asplan). Given MLIR instead, it has the
// `autoshard` driver installed beside it lower the module to a temporary
// plan (`autoshard compile PROGRAM.mlir --lower-only -o TMP.asplan`), so the
// runtime itself links no MLIR or LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUN_PLANSOURCE_H
#define AUTOSHARD_RUN_PLANSOURCE_H

#include <string>
#include <vector>

namespace autoshard::run {

/// Whether `path` names a plan file rather than MLIR.
bool isPlanPath(const std::string &path);

/// The plan bytes of `program` lowered by the driver with `flags`. The
/// compiler's warnings go to stderr; its errors become the rt::Error thrown
/// (its own "autoshard: error: " prefix removed).
std::string compileToPlanBytes(const std::string &program,
                               const std::vector<std::string> &flags);

} // namespace autoshard::run

#endif // AUTOSHARD_RUN_PLANSOURCE_H
