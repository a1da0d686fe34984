//===- TrainingMemory.h - What a training step keeps per device -*- C++ -*-===//
#ifndef AUTOSHARD_LIB_PROPAGATE_TRAININGMEMORY_H
#define AUTOSHARD_LIB_PROPAGATE_TRAININGMEMORY_H

#include "Report.h"

#include "autoshard/Analysis/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace autoshard {

/// For a training step (a function whose ops carry `dist.phase`, built by
/// --dist-training-step), after propagation: the bytes per device of the
/// parameters (`dist.weight` / `dist.param` arguments), the optimizer state
/// (`dist.init` arguments), the gradients (values the optimizer reads from
/// the backward) and the activations (forward values the loss or the
/// backward reads, which live until then). Each at the layout propagation
/// gave it. `memory_bytes_per_device` becomes their sum plus the inputs:
/// what the step holds at its peak, as a training system sizes it, rather
/// than every value of the program at once: the function's total is
/// returned (the caller puts it in place of the all-values count), nothing
/// for other functions.
/// What a training step keeps per device, by kind.
struct TrainingMemory {
  double params = 0, state = 0, inputs = 0, grads = 0, activations = 0;
  double total() const { return params + state + inputs + grads + activations; }
};

/// Whether `func` is a training step (its ops carry `dist.phase`).
bool isTrainingStep(mlir::func::FuncOp func);

/// The count below with each value's bytes per device from `bytesOf`
/// (propagation measures its candidate plans before writing them); adds the
/// gradients and the activations (the values counted besides the arguments)
/// to `kept` when given. Nothing for other functions.
std::optional<TrainingMemory>
measureTrainingMemory(mlir::func::FuncOp func, const CostModel &model,
                      llvm::function_ref<double(mlir::Value)> bytesOf,
                      llvm::DenseSet<mlir::Value> *kept);

std::optional<double> countTrainingMemory(mlir::func::FuncOp func,
                                          const CostModel &model,
                                          PropagationReport &report);

} // namespace autoshard

#endif // AUTOSHARD_LIB_PROPAGATE_TRAININGMEMORY_H
