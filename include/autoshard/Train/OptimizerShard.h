//===- OptimizerShard.h - Optimizer state split over the data axis -*- C++ -*-===//
#ifndef AUTOSHARD_TRAIN_OPTIMIZERSHARD_H
#define AUTOSHARD_TRAIN_OPTIMIZERSHARD_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace autoshard::train {

/// On the step's gradient accumulation adds (micro-batches), the argument
/// number of the parameter whose gradient they sum; read by optimizer shard
/// and removed before the pass ends (the dist dialect does not verify it).
inline constexpr llvm::StringLiteral kAccumulatesAttr = "dist.accumulates";

/// Optimizer parallel (MindSpore) / ZeRO-1: in a built training step, the
/// optimizer state and the update of every parameter of `threshold` bytes or
/// more are split over `dataAxis` (see OptimizerShard.cpp).
llvm::LogicalResult shardOptimizer(mlir::func::FuncOp step,
                                   llvm::StringRef dataAxis,
                                   int64_t threshold);

/// The type the optimizer state of parameter `arg` of `f` (the forward or
/// the step) has under optimizer shard: the parameter's, or, for a
/// parameter it splits whose no dim divides over the data axis, that type
/// with one dim padded to a multiple of its shards (the step pads the
/// parameter and its gradient to it for the update).
mlir::RankedTensorType shardedStateType(mlir::func::FuncOp f, unsigned arg,
                                        llvm::StringRef dataAxis,
                                        int64_t threshold);

} // namespace autoshard::train

#endif // AUTOSHARD_TRAIN_OPTIMIZERSHARD_H
