// linalg.broadcast copies the input along the added dims, so its gradient
// is dOut summed over them (a reduction generic into zeros).
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=1' | FileCheck %s

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @train_step(
// CHECK: linalg.broadcast ins(%arg0 : tensor<3xf32>) outs(%{{.*}} : tensor<2x3x4xf32>) dimensions = [0, 2]
// CHECK: %[[Z:.*]] = linalg.fill {dist.phase = "backward"} {{.*}} -> tensor<3xf32>
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[IN]]], iterator_types = ["reduction", "parallel", "reduction"]} ins(%{{.*}} : tensor<2x3x4xf32>) outs(%[[Z]] : tensor<3xf32>) attrs = {dist.phase = "backward"}
// CHECK-NEXT: ^bb0(%[[G:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[G]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: ins(%[[DX]], %arg0 : {{.*}}dist.phase = "optimizer"
func.func @main(%x: tensor<3xf32> {dist.param}) -> tensor<2x3x4xf32> {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %y = linalg.broadcast ins(%x : tensor<3xf32>) outs(%e : tensor<2x3x4xf32>) dimensions = [0, 2]
  return %y : tensor<2x3x4xf32>
}
