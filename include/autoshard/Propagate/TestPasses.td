//===- TestPasses.td - Passes that expose rules to lit tests -*- tablegen -*-=//
#ifndef AUTOSHARD_PROPAGATE_TESTPASSES_TD
#define AUTOSHARD_PROPAGATE_TESTPASSES_TD

include "mlir/Pass/PassBase.td"

def TestShardingRules : Pass<"dist-test-sharding-rules", "::mlir::ModuleOp"> {
  let summary = "Print every op's sharding rule and check user strategies";
  let description = [{
    Emits a remark at every op on tensors with the printed form of its
    sharding rule (or, for ops without one, the reason it runs replicated).
    Ops carrying a `dist.strategy` have it matched against their rule: a
    remark shows the implied factor assignment, or an error names the
    operand that does not fit. With a `dist.mesh` on the module, the number
    of candidate strategies on that mesh is printed too (and every candidate
    with `print-candidates`).
  }];
  let options = [
    Option<"printCandidates", "print-candidates", "bool", /*default=*/"false",
           "List every candidate (factor assignment, layouts, flops)">,
    Option<"maxCandidates", "max-candidates", "int64_t", /*default=*/"256",
           "Bound on the candidates enumerated per op (0: none)">
  ];
}

#endif // AUTOSHARD_PROPAGATE_TESTPASSES_TD
