// RUN: autoshard-opt --dist-test-sharding-rules="print-candidates=true" --mlir-print-op-on-diagnostic=false %s -o /dev/null 2>&1 | FileCheck %s

// Reshapes are the common refinement of both shapes: a merged dim lists its
// factors major to minor, so a split of the major factor passes through.
module attributes {dist.mesh = #dist.mesh<[x = 2, y = 3]>} {
func.func @collapse(%x: tensor<4x6x8xf32>) -> tensor<24x8xf32> {
  // CHECK: [[@LINE+10]]:8: remark: rule: factors: f0=4 par, f1=6 par, f2=8 par; operands: [f0][f1][f2]; results: [f0,f1][f2]
  // Splitting the major factor f0 (B) on the source splits the merged dim.
  // A split of the minor factor f1 alone (over y) would not be contiguous in
  // the merged dim, and f0 = 4 over x = 2 is not one row per device, so no
  // candidate splits f1; 8 is not divisible by y = 3.
  // CHECK: [[@LINE+5]]:8: remark: candidates: 3
  // CHECK: note: f0->[x] => {{\[}}[x], [], []] -> {{\[}}[x], []]; flops 96
  // CHECK: note: f2->[x] => {{\[}}[], [], [x]] -> {{\[}}[], [x]]; flops 96
  // CHECK: note: none => {{\[}}[], [], []] -> {{\[}}[], []]; flops 192
  // CHECK-NOT: note:
  %0 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x6x8xf32> into tensor<24x8xf32>
  return %0 : tensor<24x8xf32>
}

// Here the major factor is exactly the x axis, so x then y on the merged dim
// is a valid split: f0 has one row per device and f1's shards stay contiguous.
// CHECK-LABEL: remark: rule: factors: f0=2 par, f1=3 par, f2=8 par; operands: [f0][f1][f2]; results: [f0,f1][f2]
// CHECK: note: f0->[x], f1->[y] => {{\[}}[x], [y], []] -> {{\[}}[x, y], []]
func.func @collapse_full(%x: tensor<2x3x8xf32>) -> tensor<6x8xf32> {
  %0 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// CHECK-LABEL: remark: rule: factors: f0=4 par, f1=2 par, f2=3 par, f3=8 par; operands: [f0][f1,f2][f3]; results: [f0][f1][f2][f3]
func.func @expand(%x: tensor<4x6x8xf32>) -> tensor<4x2x3x8xf32> {
  %0 = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [4, 2, 3, 8] : tensor<4x6x8xf32> into tensor<4x2x3x8xf32>
  return %0 : tensor<4x2x3x8xf32>
}

// tensor.reshape: the shape operand is replicated; size-1 dims hold nothing.
// CHECK-LABEL: remark: rule: factors: f0=4 par, f1=6 par; operands: [f0][][f1], []; results: [f0,f1]
func.func @reshape(%x: tensor<4x1x6xf32>, %s: tensor<1xi64>) -> tensor<24xf32> {
  %0 = tensor.reshape %x(%s) : (tensor<4x1x6xf32>, tensor<1xi64>) -> tensor<24xf32>
  return %0 : tensor<24xf32>
}

// [6, 4] -> [4, 6] share only a major factor 2; the rest of each dim stays
// whole.
// CHECK-LABEL: remark: rule: factors: f0=2 par, f1=3 rep, f2=4 rep, f3=2 rep, f4=6 rep; operands: [f0,f1][f2], []; results: [f0,f3][f4]
// CHECK: remark: candidates: 2
// CHECK: note: f0->[x] => {{\[}}[x], []], {{\[}}[]] -> {{\[}}[x], []]
// CHECK: note: none => {{\[}}[], []], {{\[}}[]] -> {{\[}}[], []]
func.func @reshape_swap(%x: tensor<6x4xf32>, %s: tensor<2xi64>) -> tensor<4x6xf32> {
  %0 = tensor.reshape %x(%s) : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}
}
