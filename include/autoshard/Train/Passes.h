//===- Passes.h - Training-step passes --------------------------*- C++ -*-===//
#ifndef AUTOSHARD_TRAIN_PASSES_H
#define AUTOSHARD_TRAIN_PASSES_H

#include "autoshard/Dialect/Dist/IR/DistDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace autoshard {

#define GEN_PASS_DECL
#include "autoshard/Train/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "autoshard/Train/Passes.h.inc"

} // namespace autoshard

#endif // AUTOSHARD_TRAIN_PASSES_H
