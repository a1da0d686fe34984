// tensor.extract_slice (unit strides): dSource = dOut padded with zeros to
// the source, low = offsets, high = size − offset − slice size; a
// rank-reducing slice first expands dOut back to the slice sizes.
// RUN: autoshard-opt %s --split-input-file --dist-training-step='loss=mse optimizer=sgd lr=1' | FileCheck %s

// CHECK-LABEL: func.func @train_step(
// CHECK: tensor.extract_slice %arg0[1, 2] [2, 3] [1, 1] : tensor<4x5xf32> to tensor<2x3xf32>
// CHECK: %[[ZERO:.*]] = arith.constant {dist.phase = "backward"} 0.000000e+00 : f32
// CHECK: %[[DX:.*]] = tensor.pad %{{.*}} low[1, 2] high[1, 0] {
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: tensor.yield %[[ZERO]] : f32
// CHECK-NEXT: } {dist.phase = "backward"} : tensor<2x3xf32> to tensor<4x5xf32>
// CHECK: ins(%[[DX]], %arg0 : {{.*}}dist.phase = "optimizer"
func.func @main(%x: tensor<4x5xf32> {dist.param}) -> tensor<2x3xf32> {
  %y = tensor.extract_slice %x[1, 2] [2, 3] [1, 1] : tensor<4x5xf32> to tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @train_step(
// CHECK: tensor.extract_slice %arg0[1, 0, 2] [1, 5, 3] [1, 1, 1] : tensor<4x5x6xf32> to tensor<5x3xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [1, 5, 3] {dist.phase = "backward"} : tensor<5x3xf32> into tensor<1x5x3xf32>
// CHECK: %[[ZERO:.*]] = arith.constant {dist.phase = "backward"} 0.000000e+00 : f32
// CHECK: %[[DX:.*]] = tensor.pad %[[E]] low[1, 0, 2] high[2, 0, 1] {
// CHECK: tensor.yield %[[ZERO]] : f32
// CHECK: } {dist.phase = "backward"} : tensor<1x5x3xf32> to tensor<4x5x6xf32>
// CHECK: ins(%[[DX]], %arg0 : {{.*}}dist.phase = "optimizer"
func.func @main(%x: tensor<4x5x6xf32> {dist.param}) -> tensor<5x3xf32> {
  %y = tensor.extract_slice %x[1, 0, 2] [1, 5, 3] [1, 1, 1] : tensor<4x5x6xf32> to tensor<5x3xf32>
  return %y : tensor<5x3xf32>
}
