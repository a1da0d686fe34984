// RUN: autoshard-opt --dist-test-sharding-rules --mlir-print-op-on-diagnostic=false %s -o /dev/null 2>&1 | FileCheck %s

// Dims that an op cuts, grows or stitches stay whole (each side has its own
// need-replication factor); dims it keeps whole pass a split through.
func.func @slices(%x: tensor<4x6x8xf32>) {
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: f0=4 par, f1=8 par, f2=6 rep, f3=6 rep, f4=12 rep; operands: [f0][f2][f1], [f0][f3][f1]; results: [f0][f4][f1]
  %c = tensor.concat dim(1) %x, %x : (tensor<4x6x8xf32>, tensor<4x6x8xf32>) -> tensor<4x12x8xf32>
  // Rank-reducing slice of dim 1: the dropped dim has no result dim.
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: f0=4 par, f1=6 rep, f2=8 par; operands: [f0][f1][f2]; results: [f0][f2]
  %s = tensor.extract_slice %x[0, 2, 0] [4, 1, 8] [1, 1, 1] : tensor<4x6x8xf32> to tensor<4x8xf32>
  // A strided slice is not a full dim either.
  // CHECK: [[@LINE+1]]:9: remark: rule: factors: f0=4 rep, f1=2 rep, f2=6 par, f3=8 par; operands: [f0][f2][f3]; results: [f1][f2][f3]
  %s2 = tensor.extract_slice %x[0, 0, 0] [2, 6, 8] [2, 1, 1] : tensor<4x6x8xf32> to tensor<2x6x8xf32>
  // The destination's data passes through: it is tied to the result ("acc").
  // CHECK: [[@LINE+1]]:10: remark: rule: factors: f0=4 par, f1=6 rep, f2=8 par; operands: [f0][f2], acc [f0][f1][f2]; results: [f0][f1][f2]
  %ins = tensor.insert_slice %s into %x[0, 3, 0] [4, 1, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<4x6x8xf32>
  %cst = arith.constant 0.0 : f32
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: f0=4 par, f1=6 rep, f2=8 rep, f3=8 par; operands: [f0][f1][f3]; results: [f0][f2][f3]
  %p = tensor.pad %x low[0, 1, 0] high[0, 1, 0] {
  ^bb0(%a: index, %b: index, %d: index):
    tensor.yield %cst : f32
  } : tensor<4x6x8xf32> to tensor<4x8x8xf32>
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: f0=4 par, f1=8 par; operands: none; results: [f0][f1]
  %e = tensor.empty() : tensor<4x8xf32>
  return
}

// A dynamic slice offset: the dim may start anywhere, so it stays whole,
// and the offset operand is a scalar.
// CHECK-LABEL: remark: rule: factors: f0=6 rep, f1=2 rep, f2=8 par; operands: [f0][f2], scalar; results: [f1][f2]
func.func @dynamic_offset(%x: tensor<6x8xf32>, %o: index) -> tensor<2x8xf32> {
  %s = tensor.extract_slice %x[%o, 0] [2, 8] [1, 1] : tensor<6x8xf32> to tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}
