// RUN: autoshard-opt --dist-test-sharding-rules --mlir-print-op-on-diagnostic=false %s -o /dev/null 2>&1 | FileCheck %s

module attributes {dist.mesh = #dist.mesh<[dp = 2, mp = 4]>} {
func.func @arith(%x: tensor<4x8xf32>, %c: tensor<4x8xi1>) {
  // A splat may be split for free: every shard is the same splat.
  // Candidates: none; dp or mp alone on f0 or f1 (4); dp and mp on different
  // factors (2); both on f1 in either order (2); f0 = 4 cannot take 8 ways.
  // CHECK: [[@LINE+2]]:8: remark: rule: factors: f0=4 par, f1=8 par; operands: none; results: [f0][f1]
  // CHECK: [[@LINE+1]]:8: remark: candidates: 9
  %s = arith.constant dense<1.0> : tensor<4x8xf32>
  // A non-splat constant stays replicated: one candidate.
  // CHECK: [[@LINE+2]]:8: remark: rule: factors: f0=2 rep; operands: none; results: [][f0]
  // CHECK: [[@LINE+1]]:8: remark: candidates: 1
  %d = arith.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: f0=4 par, f1=8 par; operands: [f0][f1], [f0][f1]; results: [f0][f1]
  %a = arith.mulf %x, %s : tensor<4x8xf32>
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: f0=4 par, f1=8 par; operands: [f0][f1], [f0][f1], [f0][f1]; results: [f0][f1]
  %t = arith.select %c, %a, %x : tensor<4x8xi1>, tensor<4x8xf32>
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: f0=4 par, f1=8 par; operands: [f0][f1]; results: [f0][f1]
  %e = math.tanh %t : tensor<4x8xf32>
  return
}
}
