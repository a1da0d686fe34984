//===- ScalarDiff.h - Reverse mode over scalar arith/math bodies -*- C++ -*-===//
//
// The derivative of a scalar expression built from arith/math ops (the body
// of a linalg.generic, or one elementwise op on tensors), emitted as new
// scalar ops: the forward expression is cloned, then adjoints flow back from
// the result to the requested leaves. Shared by the linalg.generic and the
// elementwise-op VJP rules, so every arith/math op has its derivative in one
// place (derivativeOf in ScalarDiff.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_TRAIN_SCALARDIFF_H
#define AUTOSHARD_TRAIN_SCALARDIFF_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace autoshard::vjp {

/// Emits d(result)/d(leaf) * seed for each leaf in `leaves`, at `b`'s
/// insertion point. `result` is computed by ops of one block from values
/// mapped in `mapping` (block arguments or values from outside the block,
/// which are constants of the expression unless listed in `leaves`); the ops
/// it depends on are cloned through `mapping` first (so the forward value
/// of each intermediate is available). `grads` receives one value per leaf,
/// or null where the result does not depend on it. Fails, with a located
/// error naming the op, on an op without a derivative.
llvm::LogicalResult
differentiateScalar(mlir::OpBuilder &b, mlir::Value result,
                    llvm::ArrayRef<mlir::Value> leaves, mlir::Value seed,
                    mlir::IRMapping &mapping,
                    llvm::SmallVectorImpl<mlir::Value> &grads);

/// Clones the ops of `value`'s block that it depends on through `mapping`
/// (skipping those already mapped) and returns the clone of `value`.
mlir::Value cloneScalarExpr(mlir::OpBuilder &b, mlir::Value value,
                            mlir::IRMapping &mapping);

/// Whether `value` depends on `leaf` through ops of one block.
bool dependsOn(mlir::Value value, mlir::Value leaf);

/// The partial adjoints of one scalar op's operands given its result's
/// adjoint `adj`: `partials[i]` = adj * d(result)/d(operand i), or null for
/// operands without a derivative (integers, conditions). `op` is a forward
/// op already at its final place (its operands and result are the values to
/// differentiate at). Fails, with a located error, on an unknown op.
llvm::LogicalResult scalarPartials(mlir::OpBuilder &b, mlir::Operation *op,
                                   mlir::Value adj,
                                   llvm::SmallVectorImpl<mlir::Value> &partials);

} // namespace autoshard::vjp

#endif // AUTOSHARD_TRAIN_SCALARDIFF_H
