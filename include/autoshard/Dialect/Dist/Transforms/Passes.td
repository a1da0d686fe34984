//===- Passes.td - dist transformation passes --------------*- tablegen -*-===//
//
// The pipeline: annotate -> propagate -> partition -> lower. Each pass is
// declared here; options use MLIR's `--pass{option=value}` style.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_DIALECT_DIST_TRANSFORMS_PASSES_TD
#define AUTOSHARD_DIALECT_DIST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

#endif // AUTOSHARD_DIALECT_DIST_TRANSFORMS_PASSES_TD
