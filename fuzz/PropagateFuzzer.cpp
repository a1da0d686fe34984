//===- PropagateFuzzer.cpp - Fuzz autoshard-opt --dist-propagate's input --===//
//
// The input is MLIR text, as `autoshard-opt --dist-propagate` reads it:
// parsed (dist attributes and ops included), verified, then propagated.
// Each step must succeed or emit a diagnostic; never crash.
//
//===----------------------------------------------------------------------===//

#include "autoshard/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    autoshard::registerAllDialects(registry);
    autoshard::registerAllPasses();
    auto *c = new mlir::MLIRContext(registry);
    c->loadAllAvailableDialects();
    c->getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
    return c;
  }();
  // MLIR's lexer reads up to a NUL terminator, as a file's MemoryBuffer
  // has: libFuzzer's buffer has none.
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, ctx);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  mlir::PassManager pm(ctx);
  if (mlir::failed(mlir::parsePassPipeline("dist-propagate", pm)))
    std::abort();
  (void)pm.run(*module);
  return 0;
}
