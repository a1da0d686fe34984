// linalg.batch_matmul, per batch C = A·B + C0: dA = dC·Bᵀ, dB = Aᵀ·dC with
// the transposes swapping the last two dims (permutation [0, 2, 1]); plain
// batch_matmuls into zero fills.
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=1' | FileCheck %s

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<5x2x4xf32> {{.*}}, %[[B:[a-z0-9]+]]: tensor<5x4x3xf32>
// CHECK: linalg.batch_matmul ins(%[[A]], %[[B]] :
// CHECK: %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<5x4x3xf32>) outs(%{{.*}} : tensor<5x3x4xf32>) permutation = [0, 2, 1]
// CHECK: %[[Z0:.*]] = linalg.fill {{.*}} -> tensor<5x2x4xf32>
// CHECK: %[[DA:.*]] = linalg.batch_matmul {dist.phase = "backward"} ins(%[[DY:.*]], %[[BT]] : tensor<5x2x3xf32>, tensor<5x3x4xf32>) outs(%[[Z0]] : tensor<5x2x4xf32>)
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<5x2x4xf32>) outs(%{{.*}} : tensor<5x4x2xf32>) permutation = [0, 2, 1]
// CHECK: %[[Z1:.*]] = linalg.fill {{.*}} -> tensor<5x4x3xf32>
// CHECK: %[[DB:.*]] = linalg.batch_matmul {dist.phase = "backward"} ins(%[[AT]], %[[DY]] : tensor<5x4x2xf32>, tensor<5x2x3xf32>) outs(%[[Z1]] : tensor<5x4x3xf32>)
// CHECK-NOT: linalg.batch_matmul
// CHECK: ins(%[[DA]], %[[A]] : {{.*}}dist.phase = "optimizer"
// CHECK: ins(%[[DB]], %[[B]] : {{.*}}dist.phase = "optimizer"
func.func @main(%a: tensor<5x2x4xf32> {dist.param}, %b: tensor<5x4x3xf32> {dist.param}) -> tensor<5x2x3xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x2x3xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<5x2x3xf32>) -> tensor<5x2x3xf32>
  %y = linalg.batch_matmul ins(%a, %b : tensor<5x2x4xf32>, tensor<5x4x3xf32>) outs(%z : tensor<5x2x3xf32>) -> tensor<5x2x3xf32>
  return %y : tensor<5x2x3xf32>
}
