//===- Loss.h - Losses of the training step ---------------------*- C++ -*-===//
#ifndef AUTOSHARD_TRAIN_LOSS_H
#define AUTOSHARD_TRAIN_LOSS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>

namespace autoshard::train {

/// The loss on a model output and the gradient that seeds the backward.
struct LossValues {
  mlir::Value loss; // tensor<f32> (rank 0)
  mlir::Value grad; // d loss / d output, the output's type
};

/// The type of the labels `loss` expects for `output`: cross_entropy takes
/// integer (i64) class indices of the output's shape without its last dim,
/// mse a tensor of the output's type. Fails (with `why`) on an unknown loss
/// or an output it cannot take.
mlir::FailureOr<mlir::RankedTensorType>
labelType(llvm::StringRef loss, mlir::Value output, std::string &why);

/// Emits the loss (PyTorch's mean reduction) and its gradient.
///   cross_entropy: logits over the last dim, labels of the remaining shape,
///                  mean over all positions (F.cross_entropy on the
///                  flattened tensors);
///   mse:           mean((output - labels)^2).
/// `batches` > 1: the output is one of that many equal micro-batches, and
/// the mean is taken over the whole batch's positions (elements for mse),
/// so the micro-batches' losses and gradients add up to the whole batch's.
LossValues buildLoss(mlir::OpBuilder &b, mlir::Location loc,
                     llvm::StringRef loss, mlir::Value output,
                     mlir::Value labels, int64_t batches = 1);

} // namespace autoshard::train

#endif // AUTOSHARD_TRAIN_LOSS_H
