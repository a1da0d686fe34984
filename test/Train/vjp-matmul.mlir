// linalg.matmul C = A·B + C0: dA = dC·Bᵀ, dB = Aᵀ·dC (plain matmuls over a
// linalg.transpose, into zero fills), dC0 = dC only where C0 needs one.
// RUN: autoshard-opt %s --split-input-file --dist-training-step='loss=mse optimizer=sgd lr=1' | FileCheck %s

// Both operands are parameters; the init is a zero fill (no gradient).
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<2x4xf32> {{.*}}, %[[B:[a-z0-9]+]]: tensor<4x3xf32>
// CHECK: linalg.matmul ins(%[[A]], %[[B]] :
// dA = dY·Bᵀ
// CHECK: %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<4x3xf32>) outs(%{{.*}} : tensor<3x4xf32>) permutation = [1, 0]
// CHECK: %[[Z0:.*]] = linalg.fill {{.*}} -> tensor<2x4xf32>
// CHECK: %[[DA:.*]] = linalg.matmul {dist.phase = "backward"} ins(%[[DY:.*]], %[[BT]] : tensor<2x3xf32>, tensor<3x4xf32>) outs(%[[Z0]] : tensor<2x4xf32>)
// dB = Aᵀ·dY
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<4x2xf32>) permutation = [1, 0]
// CHECK: %[[Z1:.*]] = linalg.fill {{.*}} -> tensor<4x3xf32>
// CHECK: %[[DB:.*]] = linalg.matmul {dist.phase = "backward"} ins(%[[AT]], %[[DY]] : tensor<4x2xf32>, tensor<2x3xf32>) outs(%[[Z1]] : tensor<4x3xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: ins(%[[DA]], {{.*}}dist.phase = "optimizer"
// CHECK: ins(%[[DB]], {{.*}}dist.phase = "optimizer"
func.func @main(%a: tensor<2x4xf32> {dist.param}, %b: tensor<4x3xf32> {dist.param}) -> tensor<2x3xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = linalg.matmul ins(%a, %b : tensor<2x4xf32>, tensor<4x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// f64; only B and the init C0 are parameters: no dA (B is not transposed),
// and dC0 = dY.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<4x3xf64> {{.*}}, %[[C:[a-z0-9]+]]: tensor<2x3xf64> {{.*}}, %[[A:[a-z0-9]+]]: tensor<2x4xf64>
// CHECK-NOT: linalg.transpose ins(%[[B]]
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<2x4xf64>)
// CHECK: %[[DB:.*]] = linalg.matmul {dist.phase = "backward"} ins(%[[AT]], %[[DY:.*]] : tensor<4x2xf64>, tensor<2x3xf64>)
// CHECK-NOT: linalg.matmul
// CHECK: ins(%[[DB]], %[[B]] : {{.*}}dist.phase = "optimizer"
// CHECK: ins(%[[DY]], %[[C]] : {{.*}}dist.phase = "optimizer"
func.func @main(%a: tensor<2x4xf64>, %b: tensor<4x3xf64> {dist.param}, %c: tensor<2x3xf64> {dist.param}) -> tensor<2x3xf64> {
  %y = linalg.matmul ins(%a, %b : tensor<2x4xf64>, tensor<4x3xf64>) outs(%c : tensor<2x3xf64>) -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}
