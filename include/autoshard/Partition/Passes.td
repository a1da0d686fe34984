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

#endif // AUTOSHARD_PARTITION_PASSES_TD
