//===- Compile.h - The autoshard driver's compile step ----------*- C++ -*-===//
#ifndef AUTOSHARD_TOOLS_AUTOSHARD_COMPILE_H
#define AUTOSHARD_TOOLS_AUTOSHARD_COMPILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace autoshard::driver {

struct CompileOptions {
  std::string input;
  std::string mesh;         // "dp=2,mp=4"; empty: from the input
  std::string strategyFile; // ONNX inputs: YAML/JSON strategy file
  std::string weightsDir;   // ONNX inputs: where initializers are written
  std::vector<std::string> freeze; // ONNX inputs: NAME=FILE.npy (--freeze)
  /// The compiled program's path ("-": stdout); names the default weights
  /// directory of an ONNX input.
  std::string output = "-";
  std::string report;       // propagation report (JSON) path
  std::string solver = "dp";
  /// --exact-budget: solver=exact's node visits (0: the pass's default).
  uint64_t exactBudget = 0;
  std::string cluster;
  bool enableAllToAll = false;
  /// --precision: fp32, tf32, bf16 or fp16 (--dist-mixed-precision before
  /// propagation; fp32 runs nothing).
  std::string precision = "fp32";
  /// Training steps: bucket gradient collectives up to this size (MB).
  double fusionThresholdMb = 64.0;
  /// Training steps: the fusion pass's report (JSON), or "-" for one line
  /// on stdout; empty: none.
  std::string fusionReport;

  // Plan files (-o FILE.asplan): the lowering autoshard-run used to do.
  /// The input is already partitioned (or runs on one device): lower it as
  /// it is, without the pipeline (autoshard-run PROGRAM.mlir does this).
  bool lowerOnly = false;
  /// The function to lower ("": main, else the only one with a body).
  std::string entry;
  /// --kernels: auto, compiled or interpreted; "": $AUTOSHARD_KERNELS, else
  /// auto.
  std::string kernels;
  /// --compile-threshold; unset: $AUTOSHARD_COMPILE_THRESHOLD, else 1.
  std::optional<int64_t> compileThreshold;
  bool kernelFusion = true;
  bool gemmContractions = true;
  /// The backend the plan is for: cpu or cuda (CUDA runs loop nests
  /// through its own kernels, not the CPU library).
  std::string backend = "cpu";
};

/// Whether `output` names a plan file (.asplan) rather than MLIR.
bool isPlanFile(llvm::StringRef output);

/// `autoshard compile ... -o FILE.asplan`: loads INPUT, compiles it (unless
/// options.lowerOnly), lowers it to the runtime's Program and writes the plan
/// file. Errors are printed; returns the exit status.
int compileToPlan(mlir::MLIRContext &ctx, const CompileOptions &options);

/// The directory ONNX weights are written to when options.weightsDir is
/// empty.
std::string defaultWeightsDir(const CompileOptions &options);

/// Reads INPUT (.mlir, or .onnx through the importer) and applies --mesh.
mlir::OwningOpRef<mlir::ModuleOp> loadInput(mlir::MLIRContext &ctx,
                                            const CompileOptions &options);

/// Runs the whole compile (autoshard-pipeline) on `module` in place.
mlir::LogicalResult compile(mlir::ModuleOp module,
                            const CompileOptions &options);

/// A one-line error unless `precision` is fp32, tf32, bf16 or fp16.
mlir::LogicalResult checkPrecision(llvm::StringRef precision);

/// The pipeline compile() runs, as text (`autoshard-pipeline{...}`), for
/// drivers that put passes in front of it.
std::string compilePipeline(const CompileOptions &options);

/// Parses a textual pipeline on the module and runs it; a pipeline that does
/// not parse is one error line.
mlir::LogicalResult runPipeline(mlir::ModuleOp module,
                                llvm::StringRef pipeline);

} // namespace autoshard::driver

#endif // AUTOSHARD_TOOLS_AUTOSHARD_COMPILE_H
