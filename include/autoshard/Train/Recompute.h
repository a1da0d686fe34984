//===- Recompute.h - Recomputing activations in the backward ----*- C++ -*-===//
#ifndef AUTOSHARD_TRAIN_RECOMPUTE_H
#define AUTOSHARD_TRAIN_RECOMPUTE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace autoshard::train {

/// In a built training step, the forward ops selected by `spec` ("none",
/// "all", "ops=GLOB,...") or marked `dist.recompute` are recomputed for the
/// backward instead of their results being kept (see Recompute.cpp).
llvm::LogicalResult applyRecompute(mlir::func::FuncOp step,
                                   llvm::StringRef spec);

} // namespace autoshard::train

#endif // AUTOSHARD_TRAIN_RECOMPUTE_H
