//===- Launch.h - Running programs on MPI ranks for the driver --*- C++ -*-===//
//
// What `autoshard verify` and `autoshard train` share to run a program:
// a work directory, writing modules into it, and `mpirun ... autoshard-run`.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_TOOLS_AUTOSHARD_LAUNCH_H
#define AUTOSHARD_TOOLS_AUTOSHARD_LAUNCH_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace autoshard::driver {

/// mpirun (from PATH) and autoshard-run (next to the driver binary).
struct RankTools {
  std::string mpirun;
  std::string runTool;
};

/// Finds both tools; prints one error line and fails if one is missing.
mlir::FailureOr<RankTools> findRankTools(const char *argv0);

/// The driver's --kernels ("" when not given); compile -o FILE.asplan
/// lowers with it too.
std::string getKernelsFlag();

/// `dir`, created if needed, or a fresh temporary directory named after
/// `prefix` when `dir` is empty. Prints one error line on failure.
mlir::FailureOr<std::string> makeWorkDir(llvm::StringRef dir,
                                         llvm::StringRef prefix);

/// Prints `module` into `path`.
mlir::LogicalResult writeModule(mlir::ModuleOp module, llvm::StringRef path);

/// Runs `mpirun --allow-run-as-root --oversubscribe -np RANKS autoshard-run
/// PROGRAM ARGS...`, its output going to ours. Returns its exit code, and
/// prints a line naming the run when it is not 0.
int runRanks(const RankTools &tools, llvm::StringRef program, int ranks,
             llvm::ArrayRef<std::string> args);

} // namespace autoshard::driver

#endif // AUTOSHARD_TOOLS_AUTOSHARD_LAUNCH_H
