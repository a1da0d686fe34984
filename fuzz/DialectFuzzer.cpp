//===- DialectFuzzer.cpp - Fuzz the dist dialect's parsers and printers ---===//
//
// The input is MLIR text with the dist dialect and the upstream dialects its
// tests use (func, arith, tensor, linalg) registered, nothing else: parse,
// verify, then print and re-parse, in the custom and in the generic form.
// Bad text must end in a diagnostic; text that parses and verifies must
// round-trip: its printed form parses, verifies and prints the same again.
// (fuzz-propagate parses too, but spends most of each run in the passes.)
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "autoshard/Dialect/Dist/IR/DistDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <string>

static std::string print(mlir::ModuleOp module, bool generic) {
  mlir::OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, flags);
  return text;
}

/// Aborts with both texts when `what` fails for printed IR.
[[noreturn]] static void fail(const char *what, const std::string &first,
                              const std::string &second) {
  std::fprintf(stderr, "fuzz-dialect: %s\n--- printed:\n%s\n--- then:\n%s\n",
               what, first.c_str(), second.c_str());
  std::abort();
}

/// Parses `printed` (the printer's output for verified IR), which must
/// parse and verify, and returns its custom form.
static std::string reparse(const std::string &printed, mlir::MLIRContext *ctx) {
  mlir::OwningOpRef<mlir::ModuleOp> again =
      mlir::parseSourceString<mlir::ModuleOp>(printed, ctx);
  if (!again)
    fail("printed IR does not parse", printed, "");
  if (mlir::failed(mlir::verify(*again)))
    fail("printed IR does not verify", printed, "");
  return print(*again, /*generic=*/false);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    registry.insert<autoshard::dist::DistDialect, mlir::arith::ArithDialect,
                    mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                    mlir::tensor::TensorDialect>();
    return autoshard::fuzz::makeQuietContext(registry);
  }();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      autoshard::fuzz::parseVerified(data, size, ctx);
  if (!module)
    return 0;
  std::string custom = print(*module, /*generic=*/false);
  std::string again = reparse(custom, ctx);
  if (again != custom)
    fail("custom form does not round-trip", custom, again);
  std::string generic = print(*module, /*generic=*/true);
  std::string fromGeneric = reparse(generic, ctx);
  if (fromGeneric != custom)
    fail("generic form does not round-trip", custom, fromGeneric);
  return 0;
}
