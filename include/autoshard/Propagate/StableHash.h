//===- StableHash.h - Hashes of types and attributes, equal in every run --===//
//
// Propagation orders the nodes of its graph by canonical keys, so that the
// plan does not depend on the order of the ops in a block. The keys hash each
// op's types and attributes, and must come out the same in every run:
// mlir::hash_value hashes the objects' addresses, and llvm::hash_code may be
// seeded per process. StableHasher hashes the builtin types and attributes a
// program is made of from their parameters, and anything else from its
// printed text (printed once per object).
//
//===----------------------------------------------------------------------===//

#ifndef AUTOSHARD_PROPAGATE_STABLEHASH_H
#define AUTOSHARD_PROPAGATE_STABLEHASH_H

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>

namespace autoshard {

class StableHasher {
public:
  explicit StableHasher(mlir::MLIRContext *ctx) : asmState(ctx) {}

  uint64_t hash(mlir::Type type);
  uint64_t hash(mlir::Attribute attr);

private:
  template <typename T> uint64_t memoised(T object);
  uint64_t compute(mlir::Type type);
  uint64_t compute(mlir::Attribute attr);
  uint64_t hashAffineExpr(mlir::AffineExpr expr);

  /// Types and attributes are uniqued: one hash per object.
  llvm::DenseMap<const void *, uint64_t> memo;
  /// One printer state for every fallback: `os << attr` would build a fresh
  /// one per call, which costs more than the printing.
  mlir::AsmState asmState;
};

} // namespace autoshard

#endif // AUTOSHARD_PROPAGATE_STABLEHASH_H
