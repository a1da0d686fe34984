//===- StrategyFuzzer.cpp - Fuzz the strategy-file parser -----------------===//
//
// The input is a strategy file (YAML or JSON). parseStrategy must return a
// spec or report errors through the diagnostic engine; never crash.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Import/StrategyFile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *ctx = [] {
    auto *c = new mlir::MLIRContext();
    // Errors are the expected outcome; keep the fuzzer's output quiet.
    c->getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
    return c;
  }();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  (void)autoshard::parseStrategy(text, "fuzz.yaml", ctx);
  return 0;
}
