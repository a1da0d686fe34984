//===- Recompute.cpp - Recomputing activations in the backward ------------===//

#include "autoshard/Train/Recompute.h"

using namespace mlir;

LogicalResult autoshard::train::applyRecompute(func::FuncOp step,
                                               StringRef spec) {
  if (spec == "none")
    return success();
  return step.emitError("dist-training-step: recompute is not implemented "
                        "yet");
}
