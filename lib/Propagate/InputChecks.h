//===- InputChecks.h - What dist-propagate refuses up front -----*- C++ -*-===//
#ifndef AUTOSHARD_LIB_PROPAGATE_INPUTCHECKS_H
#define AUTOSHARD_LIB_PROPAGATE_INPUTCHECKS_H

#include "mlir/IR/BuiltinOps.h"

namespace autoshard {

/// Rejects, with a located error, input dist-propagate cannot handle and
/// would otherwise mis-handle: control flow and calls (the pass propagates
/// through the straight-line bodies of functions), zero-size tensors, an
/// empty function, a grid that is no mesh (a dynamic or too large size), and
/// a program --dist-partition already made per-device.
mlir::LogicalResult checkPropagateInput(mlir::ModuleOp module);

} // namespace autoshard

#endif // AUTOSHARD_LIB_PROPAGATE_INPUTCHECKS_H
