//===- OptimizerShard.h - Optimizer state split over the data axis -*- C++ -*-===//
#ifndef AUTOSHARD_TRAIN_OPTIMIZERSHARD_H
#define AUTOSHARD_TRAIN_OPTIMIZERSHARD_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace autoshard::train {

/// Optimizer parallel (MindSpore) / ZeRO-1: in a built training step, the
/// optimizer state and the update of every parameter of `threshold` bytes or
/// more are split over `dataAxis` (see OptimizerShard.cpp).
llvm::LogicalResult shardOptimizer(mlir::func::FuncOp step,
                                   llvm::StringRef dataAxis,
                                   int64_t threshold);

} // namespace autoshard::train

#endif // AUTOSHARD_TRAIN_OPTIMIZERSHARD_H
