//===- OptimizerShard.cpp - Optimizer state split over the data axis ------===//

#include "autoshard/Train/OptimizerShard.h"

using namespace mlir;

LogicalResult autoshard::train::shardOptimizer(func::FuncOp step, StringRef,
                                               int64_t) {
  return step.emitError("dist-training-step: optimizer-shard is not "
                        "implemented yet");
}
