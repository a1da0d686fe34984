// RUN: autoshard-opt --dist-test-sharding-rules --mlir-print-op-on-diagnostic=false %s -o /dev/null 2>&1 | FileCheck %s

// The softmax dim normalises over all its elements: it must stay whole.
// Every other dim is parallel.
module attributes {dist.mesh = #dist.mesh<[dp = 2, mp = 2]>} {
func.func @softmax(%x: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %e = tensor.empty() : tensor<4x8x16xf32>
  // CHECK: [[@LINE+3]]:8: remark: rule: factors: d0=4 par, d1=8 par, d2=16 rep; operands: [d0][d1][d2], init [d0][d1][d2]; results: [d0][d1][d2]
  // Axes dp, mp over two parallel factors: 1 + 2*2 + 2 + 2*2 = 11.
  // CHECK: [[@LINE+1]]:8: remark: candidates: 11
  %0 = linalg.softmax dimension(2) ins(%x : tensor<4x8x16xf32>) outs(%e : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=4 rep, d1=8 par, d2=16 par;
  %1 = linalg.softmax dimension(0) ins(%x : tensor<4x8x16xf32>) outs(%e : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}
}
