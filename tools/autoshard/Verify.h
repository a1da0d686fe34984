//===- Verify.h - autoshard verify: partitioned vs single device -*- C++ -*-===//
#ifndef AUTOSHARD_TOOLS_AUTOSHARD_VERIFY_H
#define AUTOSHARD_TOOLS_AUTOSHARD_VERIFY_H

#include "Compile.h"

namespace autoshard::driver {

struct VerifyOptions {
  CompileOptions compile;
  int ranks = 0; // 0: the mesh size
  std::string backend = "cpu";
  double rtol = 1e-4, atol = 1e-5;
  unsigned seed = 1;
  std::string workDir;
  const char *argv0 = nullptr;
};

/// Compiles the input, runs the original program on one rank and the
/// partitioned one on N ranks (mpirun + autoshard-run) with identical global
/// inputs, prints max abs/rel error per output. Returns the exit code.
int runVerify(mlir::MLIRContext &ctx, const VerifyOptions &options);

} // namespace autoshard::driver

#endif // AUTOSHARD_TOOLS_AUTOSHARD_VERIFY_H
