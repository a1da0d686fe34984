//===- VjpOpInterface.h - Reverse-mode rules of ops -------------*- C++ -*-===//
//
// VjpOpInterface (VjpOpInterface.td) and the registration of the rules
// autoshard attaches to upstream ops: one file per op kind in
// lib/Train/Vjp, each with its register function, all called from
// registerVjpModels.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_TRAIN_VJPOPINTERFACE_H
#define AUTOSHARD_TRAIN_VJPOPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Support/LLVM.h"

#include "autoshard/Train/VjpOpInterface.h.inc"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace autoshard {

/// Attaches VjpOpInterface to every upstream op with a rule.
void registerVjpModels(mlir::DialectRegistry &registry);

} // namespace autoshard

#endif // AUTOSHARD_TRAIN_VJPOPINTERFACE_H
