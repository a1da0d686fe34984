//===- Passes.td - Propagation passes ----------------------*- tablegen -*-===//
#ifndef AUTOSHARD_PROPAGATE_PASSES_TD
#define AUTOSHARD_PROPAGATE_PASSES_TD

include "mlir/Pass/PassBase.td"

def DistPropagate : Pass<"dist-propagate", "::mlir::ModuleOp"> {
  let summary = "Give every op a strategy that minimises redistribution cost";
  let description = [{
    From a few user constraints — `dist.annotate` values, `dist.strategy` on
    ops (checked against the op's sharding rule), and upstream
    `shard.shard`/`shard.sharding`/`shard.grid` annotations (grid axes become
    mesh axes `g0`, `g1`, ... unless a `dist.mesh` of the same shape names
    them) — chooses one candidate strategy per op minimising compute time
    plus the time of every reshard, each priced by the reshard planner
    through the cost model. Output (docs/design.md, "Contracts"): every op
    carries a complete `dist.strategy`, function arguments and results carry
    `dist.layout`, and every producer/consumer layout mismatch is an explicit
    `dist.reshard` right after the producer (shared by the consumers that
    need the same layout). Ops without a rule run replicated, with a remark.
    The plan's bytes per device stay within the cluster's `memory_gib` (the
    fastest plan that fits; none fitting is an error).
    The result depends only on the program, not on the order of its ops.
  }];
  let dependentDialects = ["::autoshard::dist::DistDialect"];
  let options = [
    Option<"mesh", "mesh", "std::string", /*default=*/"\"\"",
           "Mesh to shard over, e.g. 'dp=2,mp=4' or '#dist.mesh<...>'; "
           "default: the module's dist.mesh, else the annotations' mesh">,
    Option<"solver", "solver", "std::string", /*default=*/"\"dp\"",
           "Strategy solver: 'dp' (exact variable elimination, falling "
           "back to 'local' on wide graphs), 'local' (spanning-forest DP + "
           "block coordinate descent) or 'exact' (elimination with larger "
           "tables, else branch and bound)">,
    Option<"exactBudget", "exact-budget", "uint64_t", /*default=*/"0",
           "Solver 'exact': graph nodes its branch and bound's lower bounds "
           "may visit before it stops at the best plan found, with a "
           "warning (0: the default, 10^9)">,
    Option<"enableAllToAll", "enable-alltoall", "bool", /*default=*/"false",
           "Let reshards move an axis between dims with all_to_all">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write a JSON report to this file ('-': a readable summary on "
           "stdout)">,
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "ClusterSpec JSON file for the cost model (its memory_gib "
           "bounds the plan's bytes per device)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark at each reshard saying which consumer forced it "
           "and what it costs">,
  ];
}

#endif // AUTOSHARD_PROPAGATE_PASSES_TD
