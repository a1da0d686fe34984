//===- PropagateFuzzer.cpp - Fuzz the propagate -> partition -> lower path -===//
//
// The input is MLIR text, as `autoshard-opt --dist-propagate` reads it:
// parsed (dist attributes and ops included), verified, propagated; what
// propagates is partitioned (the rest of autoshard-pipeline: dist-partition,
// dist-fuse-gradients, canonicalize, cse) and what partitions is lowered to
// a runtime Program, as `autoshard compile` does. Each step must succeed or
// emit a diagnostic; never crash. A step that succeeds must leave IR that
// verifies (a pass that silently emits invalid IR is a bug too).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "autoshard/InitAll.h"
#include "autoshard/Lower/ProgramLoader.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <cstdio>
#include <cstdlib>

/// Runs one textual pass on `module` with the pass manager's own verifier
/// off, then verifies here: false when the pass failed (a diagnostic),
/// abort when it succeeded with invalid IR.
static bool runStep(mlir::ModuleOp module, const char *pass) {
  mlir::PassManager pm(module.getContext());
  pm.enableVerifier(false);
  if (mlir::failed(mlir::parsePassPipeline(pass, pm)))
    std::abort();
  if (mlir::failed(pm.run(module)))
    return false;
  if (mlir::failed(mlir::verify(module))) {
    std::fprintf(stderr, "fuzz-propagate: '%s' succeeded with IR that does "
                         "not verify\n", pass);
    std::abort();
  }
  return true;
}

/// With AUTOSHARD_FUZZ_TRACE set, prints the step that rejected each input,
/// or "lowered", to see how far a corpus gets
/// (autoshard-fuzz-replay-propagate DIR).
static void trace(const char *step) {
  static const bool on = std::getenv("AUTOSHARD_FUZZ_TRACE") != nullptr;
  if (on)
    std::fprintf(stderr, "fuzz-propagate: %s\n", step);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    autoshard::registerAllDialects(registry);
    autoshard::registerAllPasses();
    mlir::registerCanonicalizer();
    mlir::registerCSE();
    return autoshard::fuzz::makeQuietContext(registry);
  }();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      autoshard::fuzz::parseVerified(data, size, ctx);
  if (!module)
    return trace("parse"), 0;
  // The passes of autoshard-pipeline (lib/Partition/Pipeline.cpp), one at
  // a time so that each one's output is checked.
  for (const char *pass : {"dist-propagate", "dist-partition",
                           "dist-fuse-gradients", "canonicalize", "cse"})
    if (!runStep(*module, pass))
      return trace(pass), 0;
  // The interpreted lowering touches no files and starts no compiler.
  bool lowered = mlir::succeeded(autoshard::lowerToProgram(*module));
  trace(lowered ? "lowered" : "lowering");
  return 0;
}
