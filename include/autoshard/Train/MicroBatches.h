//===- MicroBatches.h - Cutting a batch into micro-batches ------*- C++ -*-===//
//
// Gradient accumulation: the training step runs its forward and backward
// once per micro-batch and sums the gradients before one update. The forward
// is written for one micro-batch (its declared batch size b: shapes are
// static, and a model's batch is fixed when it is exported), the step takes
// K of them (K * b rows) and cuts them apart. The rows of
// a micro-batch are taken from every data-parallel shard alike, so each
// device keeps working on its own rows and nothing is communicated for the
// cut: with the batch dim B split over d devices, micro-batch k of K is rows
// { j * B/d + k * B/(d K) + i : j < d, i < B/(d K) } (an expand_shape to
// [d, K, B/(d K), ...], a slice at k on the unsplit dim, a collapse back).
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_TRAIN_MICROBATCHES_H
#define AUTOSHARD_TRAIN_MICROBATCHES_H

#include "mlir/IR/Builders.h"

#include <string>

namespace autoshard::train {

/// Whether a batch-major tensor of `type` cuts into `count` micro-batches
/// over `devices` data-parallel devices; else why not.
bool canCutMicroBatches(mlir::Type type, int64_t count, int64_t devices,
                        std::string &why);

/// Micro-batch `index` of `count` of `batch` (rows as above).
mlir::Value microBatch(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value batch, int64_t index, int64_t count,
                       int64_t devices);

} // namespace autoshard::train

#endif // AUTOSHARD_TRAIN_MICROBATCHES_H
