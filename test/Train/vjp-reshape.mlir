// Reshapes keep the elements in order, so the gradient is dOut reshaped
// back: expand_shape <-> collapse_shape with the same reassociation;
// tensor.reshape back through a constant of the source's shape.
// RUN: autoshard-opt %s --split-input-file --dist-training-step='loss=mse optimizer=sgd lr=1' | FileCheck %s

// CHECK-LABEL: func.func @train_step(
// CHECK: tensor.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
// CHECK: %[[DX:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] {dist.phase = "backward"} : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: ins(%[[DX]], %arg0 : {{.*}}dist.phase = "optimizer"
func.func @main(%x: tensor<6x4xf32> {dist.param}) -> tensor<2x3x4xf32> {
  %y = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @train_step(
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : tensor<2x3x4xf32> into tensor<2x12xf32>
// CHECK: %[[DX:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [2, 3, 4] {dist.phase = "backward"} : tensor<2x12xf32> into tensor<2x3x4xf32>
// CHECK: ins(%[[DX]], %arg0 : {{.*}}dist.phase = "optimizer"
func.func @main(%x: tensor<2x3x4xf32> {dist.param}) -> tensor<2x12xf32> {
  %y = tensor.collapse_shape %x [[0], [1, 2]] : tensor<2x3x4xf32> into tensor<2x12xf32>
  return %y : tensor<2x12xf32>
}

// -----

// The shape constant keeps the element type of the forward's shape operand.
// CHECK-LABEL: func.func @train_step(
// CHECK: tensor.reshape %arg0(%{{.*}}) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
// CHECK: %[[SHAPE:.*]] = arith.constant {dist.phase = "backward"} dense<[2, 3, 4]> : tensor<3xi64>
// CHECK: %[[DX:.*]] = tensor.reshape %{{.*}}(%[[SHAPE]]) {dist.phase = "backward"} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
// CHECK: ins(%[[DX]], %arg0 : {{.*}}dist.phase = "optimizer"
func.func @main(%x: tensor<2x3x4xf32> {dist.param}) -> tensor<4x6xf32> {
  %shape = arith.constant dense<[4, 6]> : tensor<2xi64>
  %y = tensor.reshape %x(%shape) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
