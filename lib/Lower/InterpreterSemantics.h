//===- InterpreterSemantics.h - Kernels compute the interpreter's values -===//
//
// A compiled loop nest (CPU library or PTX) must give exactly what the
// loop-nest interpreter (runtime/lib/ScalarEval.h) gives, so --kernels
// never changes a result: ops whose native code could trap stay
// interpreted (mayTrap), and results MLIR leaves poison get the
// interpreter's value (rewriteToInterpreterSemantics).
// test/Runtime/kernel-edge-values.mlir and kernel-division.mlir check both.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LIB_LOWER_INTERPRETERSEMANTICS_H
#define AUTOSHARD_LIB_LOWER_INTERPRETERSEMANTICS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"

namespace autoshard {

/// Whether native code for `op` could trap where the interpreter raises a
/// located error (an integer division or remainder whose divisor is not a
/// constant known to be non-zero and, signed, not -1).
bool mayTrap(mlir::Operation *op);

/// Rewrites kernel `fn`'s shifts, fptosi/fptoui and math.absi to compute
/// the interpreter's values where MLIR makes them poison.
void rewriteToInterpreterSemantics(mlir::func::FuncOp fn);

} // namespace autoshard

#endif // AUTOSHARD_LIB_LOWER_INTERPRETERSEMANTICS_H
