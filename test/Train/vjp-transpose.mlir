// linalg.transpose: dIn = transpose(dOut, inverse permutation).
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=1' | FileCheck %s

// [2, 0, 1] is undone by [1, 2, 0].
// CHECK-LABEL: func.func @train_step(
// CHECK: linalg.transpose ins(%arg0 : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK: %[[DX:.*]] = linalg.transpose ins(%{{.*}} : tensor<4x2x3xf32>) outs(%{{.*}} : tensor<2x3x4xf32>) permutation = [1, 2, 0]  {dist.phase = "backward"}
// CHECK: ins(%[[DX]], %arg0 : {{.*}}dist.phase = "optimizer"
func.func @main(%x: tensor<2x3x4xf32> {dist.param}) -> tensor<4x2x3xf32> {
  %e = tensor.empty() : tensor<4x2x3xf32>
  %y = linalg.transpose ins(%x : tensor<2x3x4xf32>) outs(%e : tensor<4x2x3xf32>) permutation = [2, 0, 1]
  return %y : tensor<4x2x3xf32>
}
