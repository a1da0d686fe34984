//===- Passes.h - Propagation passes ----------------------------*- C++ -*-===//
#ifndef AUTOSHARD_PROPAGATE_PASSES_H
#define AUTOSHARD_PROPAGATE_PASSES_H

#include "autoshard/Dialect/Dist/IR/DistDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace autoshard {

#define GEN_PASS_DECL
#include "autoshard/Propagate/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "autoshard/Propagate/Passes.h.inc"

} // namespace autoshard

#endif // AUTOSHARD_PROPAGATE_PASSES_H
