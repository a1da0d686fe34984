//===- OnnxImporter.h - ONNX models to linalg on tensors --------*- C++ -*-===//
//
// Imports an ONNX ModelProto (opsets 11 to 21) as `func.func @main` on
// tensors (linalg, tensor, arith, math). Graph inputs, then float
// initializers, become function arguments; weight values go to one .npy file
// per initializer, never into the IR. Shape computations (Shape, Constant,
// ConstantOfShape and the integer arithmetic around them) are folded
// statically. Every op carries the location NameLoc("<node name>") at the
// model file, so strategies and diagnostics speak of ONNX node names.
//
// With a strategy file (StrategyFile.h) the module gets `dist.mesh`, node
// strategies become `dist.strategy` on the op each node imports to, tensor
// layouts become `dist.annotate` on the argument, and stages `dist.stage`.
// See docs/design.md, section "Import".
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_IMPORT_ONNXIMPORTER_H
#define AUTOSHARD_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <utility>
#include <vector>

namespace autoshard {

struct OnnxImportOptions {
  /// Directory that receives one .npy file per weight (created if missing).
  /// The `dist.weight` argument attribute holds the absolute path.
  std::string weightsDir = ".";
  /// Optional strategy file (YAML or JSON); empty for none.
  std::string strategyFile;
  /// When false no .npy is written (the attributes still name the files).
  bool writeWeights = true;
  /// Graph inputs given a value at import time (`--freeze NAME=FILE.npy`):
  /// they fold like constants, e.g. a Reshape's shape or a ReduceSum's axes
  /// that the exporter made graph inputs.
  std::vector<std::pair<std::string, std::string>> freeze;
};

/// Argument / result attribute names the importer writes.
inline constexpr llvm::StringLiteral kWeightAttrName = "dist.weight";
inline constexpr llvm::StringLiteral kNameAttrName = "dist.name";
/// Operation attribute: the pipeline stage of the ONNX node an op came from.
inline constexpr llvm::StringLiteral kStageAttrName = "dist.stage";

/// Imports the model stored in `bytes` (binary protobuf; protobuf text format
/// when `path` does not end in ".onnx" and the bytes parse as text). `path`
/// names the model in locations and resolves external tensor data. Errors are
/// emitted through `ctx`'s diagnostic engine; returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxModel(llvm::StringRef bytes, llvm::StringRef path,
                mlir::MLIRContext *ctx, const OnnxImportOptions &options);

/// Reads `path` and imports it.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(llvm::StringRef path, mlir::MLIRContext *ctx,
               const OnnxImportOptions &options);

/// Registers the `--import-onnx` translation (for mlir-translate-style
/// tools) together with its `--strategy` and `--weights-dir` options.
void registerOnnxImportTranslation();

} // namespace autoshard

#endif // AUTOSHARD_IMPORT_ONNXIMPORTER_H
