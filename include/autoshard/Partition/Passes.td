//===- Passes.td - partition passes ------------------------*- tablegen -*-===//
#ifndef AUTOSHARD_PARTITION_PASSES_TD
#define AUTOSHARD_PARTITION_PASSES_TD

include "mlir/Pass/PassBase.td"

def DistPartition : Pass<"dist-partition", "::mlir::ModuleOp"> {
  let summary = "Turn a fully annotated global program into the per-device "
                "SPMD program with explicit collectives";
  let description = [{
    Input: the output contract of `--dist-propagate` (every tensor op carries
    a complete `dist.strategy`, function arguments/results carry
    `dist.layout`, every layout mismatch is an explicit `dist.reshard`).

    Output: tensor types are the local shards; function arguments/results
    carry `dist.layout` and `dist.global_type`; the module carries `dist.mesh`
    and a `shard.grid` of the same shape. Every `dist.reshard` becomes the
    steps of `planReshard` (same cost model and planner options as
    propagation), one collective op per step; `dist.annotate` disappears.
    Rank-dependent offsets come from `shard.process_multi_index`.
    Uneven splits give dynamic local extents. See docs/design.md
    "Partitioning".
  }];
  let options = [
    Option<"enableAllToAll", "enable-alltoall", "bool", "false",
           "Let the planner move an axis between dims with all_to_all">,
    Option<"clusterFile", "cluster", "std::string", "\"\"",
           "ClusterSpec JSON for the cost model (as for --dist-propagate)">,
    Option<"reportFile", "report", "std::string", "\"\"",
           "Write a JSON report of the emitted collectives ('-' = stdout)">,
    Option<"gridName", "grid", "std::string", "\"mesh\"",
           "Name of the emitted shard.grid symbol">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::shard::ShardDialect", "::mlir::tensor::TensorDialect",
    "::autoshard::dist::DistDialect"
  ];
}

def DistFuseGradients : Pass<"dist-fuse-gradients", "::mlir::ModuleOp"> {
  let summary = "Bucket the gradient collectives of a partitioned training "
                "step into fewer, larger collectives";
  let description = [{
    Runs on the output of `--dist-partition`. The gradient collectives are
    the `shard.all_reduce` and `shard.reduce_scatter` ops whose operand the
    backward built (its producer carries `dist.phase = "backward"`, looking
    through the reshapes, slices and collectives partitioning rebuilt
    without it). In backward order (the order their operands are produced),
    they are grouped by (kind, grid, grid_axes, reduction, element type)
    into buckets of at most `threshold-mb` MB of local data; a bucket of
    two or more becomes one collective on the 1-D concatenation of its
    flattened operands, placed right after the last of them is produced,
    whose slices, reshaped back, replace the original results. A collective
    joins a bucket only if none of the bucket's results is used before the
    bucket's fused collective. `threshold-mb=0` changes nothing. Without a
    training step (no backward op) the pass does nothing. See
    docs/design.md "Partitioning".
  }];
  let options = [
    Option<"thresholdMb", "threshold-mb", "double", "64.0",
           "Bucket size in MB (2^20 bytes) of local gradient data; 0 "
           "disables fusion">,
    Option<"reportFile", "report", "std::string", "\"\"",
           "Write a JSON report of the fusion (FILE), or print one line "
           "('-')">,
  ];
  let dependentDialects = [
    "::mlir::shard::ShardDialect", "::mlir::tensor::TensorDialect",
    "::autoshard::dist::DistDialect"
  ];
}

#endif // AUTOSHARD_PARTITION_PASSES_TD
