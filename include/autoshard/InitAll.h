//===- InitAll.h - Register autoshard with an MLIR tool ---------*- C++ -*-===//
//
// Entry points for embedding autoshard in another compiler: register the
// dialects autoshard reads and writes, and every autoshard pass.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_INITALL_H
#define AUTOSHARD_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace autoshard {

/// func, arith, math, tensor, linalg, tosa, shard, scf, bufferization and
/// dist, with the upstream interface models autoshard relies on.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Every autoshard pass and pass pipeline.
void registerAllPasses();

} // namespace autoshard

#endif // AUTOSHARD_INITALL_H
