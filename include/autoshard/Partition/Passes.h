//===- Passes.h - partition passes ------------------------------*- C++ -*-===//
//
// --dist-partition (global annotated program -> per-device SPMD program),
// --dist-fuse-gradients (gradient collectives of a training step bucketed)
// and the named pipeline `autoshard-pipeline` (propagate + partition +
// fusion + cleanup).
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_PARTITION_PASSES_H
#define AUTOSHARD_PARTITION_PASSES_H

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace autoshard {

/// Attribute names of the partitioned program's function signature.
inline constexpr llvm::StringLiteral kLayoutAttrName = "dist.layout";
inline constexpr llvm::StringLiteral kGlobalTypeAttrName = "dist.global_type";

#define GEN_PASS_DECL
#include "autoshard/Partition/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "autoshard/Partition/Passes.h.inc"

/// Registers `autoshard-pipeline`: dist-propagate, dist-partition,
/// dist-fuse-gradients, canonicalize, cse. Options (mesh, solver,
/// enable-alltoall, report, cluster, partition-report, fusion-threshold-mb,
/// fusion-report) are forwarded to the passes that understand them.
void registerAutoshardPipeline();

/// registerPartitionPasses() + registerAutoshardPipeline().
inline void registerPartitionPassesAndPipelines() {
  registerPartitionPasses();
  registerAutoshardPipeline();
}

} // namespace autoshard

#endif // AUTOSHARD_PARTITION_PASSES_H
