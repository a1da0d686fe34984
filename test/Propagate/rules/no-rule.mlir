// RUN: autoshard-opt --dist-test-sharding-rules --mlir-print-op-on-diagnostic=false %s -o /dev/null 2>&1 | FileCheck %s

// Ops without a rule, or whose rule does not apply, run replicated: every
// static dim is its own need-replication factor, and the reason is a remark.
module attributes {dist.mesh = #dist.mesh<[dp = 2, mp = 4]>} {
func.func @no_rule(%x: tensor<4x8xf32>, %d: tensor<8x?xf32>, %f: f32) {
  // CHECK: [[@LINE+3]]:8: remark: 'tensor.splat' has no sharding rule and runs replicated
  // CHECK: [[@LINE+2]]:8: remark: rule: factors: f0=4 rep, f1=8 rep; operands: scalar; results: [f0][f1]
  // CHECK: [[@LINE+1]]:8: remark: candidates: 1
  %s = tensor.splat %f : tensor<4x8xf32>
  // CHECK: [[@LINE+2]]:8: remark: 'math.exp' runs replicated: operand #0 has a dynamic shape
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: f0=8 rep, f1=8 rep; operands: [f0][]; results: [f1][]
  %e = math.exp %d : tensor<8x?xf32>
  return
}
}
