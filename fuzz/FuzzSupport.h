//===- FuzzSupport.h - What the MLIR-text fuzz targets share ----*- C++ -*-===//
//
// Header-only so that each target still compiles in only what it fuzzes.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_FUZZ_FUZZSUPPORT_H
#define AUTOSHARD_FUZZ_FUZZSUPPORT_H

#include "autoshard/Dialect/Dist/IR/ParseGuard.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <cstdint>
#include <string>

namespace autoshard::fuzz {

/// A context with `registry`'s dialects loaded that drops diagnostics: errors
/// are the expected outcome and would flood the fuzzer's output. Made once
/// per process and never freed (the fuzzer runs until it is stopped).
inline mlir::MLIRContext *makeQuietContext(const mlir::DialectRegistry &registry) {
  auto *ctx = new mlir::MLIRContext(registry);
  ctx->loadAllAvailableDialects();
  ctx->getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
  return ctx;
}

/// The input as MLIR text, parsed and verified; null if either fails.
inline mlir::OwningOpRef<mlir::ModuleOp>
parseVerified(const uint8_t *data, size_t size, mlir::MLIRContext *ctx) {
  // MLIR's lexer reads up to a NUL terminator, as a file's MemoryBuffer
  // has: libFuzzer's buffer has none.
  std::string text(reinterpret_cast<const char *>(data), size);
  // What the tools reject before parsing (upstream parser crashes).
  if (autoshard::findParserHazard(text))
    return nullptr;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, ctx);
  if (module && mlir::failed(mlir::verify(*module)))
    module = nullptr;
  return module;
}

} // namespace autoshard::fuzz

#endif // AUTOSHARD_FUZZ_FUZZSUPPORT_H
