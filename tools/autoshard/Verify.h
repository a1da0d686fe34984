//===- Verify.h - autoshard verify: partitioned vs single device -*- C++
//-*-===//
#ifndef AUTOSHARD_TOOLS_AUTOSHARD_VERIFY_H
#define AUTOSHARD_TOOLS_AUTOSHARD_VERIFY_H

#include "Compile.h"

namespace autoshard::driver {

struct VerifyOptions {
  CompileOptions compile;
  int ranks = 0; // 0: the mesh size
  std::string backend = "cpu";
  /// Per element |got - ref| <= atol + rtol * M, M = max(|ref|, the same
  /// element of the program run on |inputs|) capped at the output's max
  /// |ref|: rounding error scales with the sum of absolute products of each
  /// contraction, not with |ref| (cancellation). rtol: 64 float32
  /// epsilons; no absolute floor (an element whose products are all zero
  /// is exactly zero in any order). docs/robustness.md derives it.
  double rtol = 64 * 0x1p-23, atol = 0;
  /// --rtol was given: the rule is atol + rtol * M alone. Otherwise, where
  /// that refuses an element, verify adds twice the output's largest
  /// distance of the reference from the program in f64 on one rank (the
  /// FP32 rounding as the program propagates it), and a --precision below
  /// fp32 adds its GEMM-input
  /// rounding (precisionTolerance) and, per element, the measured distance
  /// of the program at that precision on one rank from the FP32 reference.
  bool rtolGiven = false;
  /// Testing: output 0's element 0 of the partitioned run is moved by this
  /// much of the output's scale (max |ref|) before comparing.
  double debugPerturb = 0;
  unsigned seed = 1;
  std::string workDir;
  const char *argv0 = nullptr;
};

/// Compiles the input, runs the original program on one rank and the
/// partitioned one on N ranks (mpirun + autoshard-run) with identical global
/// inputs, measures the rounding on one rank (the program in f64, at the
/// --precision), prints the error per output against its bound. Returns
/// the exit code.
int runVerify(mlir::MLIRContext &ctx, const VerifyOptions &options);

} // namespace autoshard::driver

#endif // AUTOSHARD_TOOLS_AUTOSHARD_VERIFY_H
