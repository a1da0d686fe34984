//===- Captures.h - Tensors an op reads from inside its region --*- C++ -*-===//
#ifndef AUTOSHARD_LIB_PROPAGATE_CAPTURES_H
#define AUTOSHARD_LIB_PROPAGATE_CAPTURES_H

#include "autoshard/Dialect/Dist/IR/DistOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace autoshard::propagate {

/// The discardable unit attribute on a `dist.annotate` that
/// exposeCapturedTensors made: it states what one op needs of a tensor it
/// captures, not a layout the user asked of the tensor's producer.
inline constexpr llvm::StringLiteral kCaptureAttrName = "autoshard.capture";

/// Makes every ranked tensor a top-level op of `func` reads inside its
/// regions (a linalg body's `tensor.extract` of a value defined above it) an
/// operand propagation sees: the uses inside the op read a replicated
/// `dist.annotate` of the tensor, made right before the op. Sharding rules
/// see only an op's operands, so a captured tensor split by propagation
/// would otherwise be read with global indices on its local shard, a wrong
/// answer or an out-of-bounds read. The annotation's operand edge is priced
/// as a reshard (the all-gather the partitioner then makes); it does not
/// restrict the tensor's producer. Idempotent.
void exposeCapturedTensors(mlir::func::FuncOp func, dist::MeshAttr mesh);

} // namespace autoshard::propagate

#endif // AUTOSHARD_LIB_PROPAGATE_CAPTURES_H
