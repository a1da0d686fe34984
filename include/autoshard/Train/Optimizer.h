//===- Optimizer.h - Parameter updates of the training step -----*- C++ -*-===//
#ifndef AUTOSHARD_TRAIN_OPTIMIZER_H
#define AUTOSHARD_TRAIN_OPTIMIZER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>

namespace autoshard::train {

struct OptimizerConfig {
  std::string kind = "sgd"; // sgd | momentum | adam | adamw
  double lr = 0.01, momentum = 0.9, beta1 = 0.9, beta2 = 0.999, eps = 1e-8,
         weightDecay = 0.0;
};

/// One piece of optimizer state: per parameter (`param` >= 0: same type as
/// that parameter) or shared (`param` == -1, e.g. Adam's step count, a
/// tensor<f32>). Starts at zero.
struct StateSlot {
  int param;
  std::string suffix; // appended to the parameter's name: ".exp_avg"
  mlir::RankedTensorType type;
};

/// Fails (with `why`) on an unknown optimizer or a bad hyperparameter.
llvm::LogicalResult verifyOptimizer(const OptimizerConfig &config,
                                    std::string &why);

/// The state the optimizer keeps for `paramTypes`, in argument order.
std::vector<StateSlot> optimizerState(const OptimizerConfig &config,
                                      llvm::ArrayRef<mlir::Type> paramTypes);

/// Emits PyTorch's update of every parameter from its gradient: returns the
/// new parameters and the new state (same order as the inputs).
void buildUpdate(mlir::OpBuilder &b, mlir::Location loc,
                 const OptimizerConfig &config, mlir::ValueRange params,
                 mlir::ValueRange grads, mlir::ValueRange state,
                 llvm::SmallVectorImpl<mlir::Value> &newParams,
                 llvm::SmallVectorImpl<mlir::Value> &newState);

} // namespace autoshard::train

#endif // AUTOSHARD_TRAIN_OPTIMIZER_H
