//===- OnnxFuzzer.cpp - Fuzz the ONNX importer ----------------------------===//
//
// The input is a binary ONNX model. importOnnxModel must return a module
// that verifies, or null after emitting errors; never crash. Weights are not
// written (writeWeights = false), so a run touches no files.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Import/OnnxImporter.h"
#include "autoshard/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    autoshard::registerAllDialects(registry);
    auto *c = new mlir::MLIRContext(registry);
    c->loadAllAvailableDialects();
    c->getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
    return c;
  }();
  autoshard::OnnxImportOptions options;
  options.writeWeights = false;
  options.weightsDir = "/nonexistent-fuzz-weights";
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      autoshard::importOnnxModel(bytes, "fuzz.onnx", ctx, options);
  if (module && mlir::failed(mlir::verify(*module)))
    std::abort(); // the importer returned IR that does not verify
  return 0;
}
