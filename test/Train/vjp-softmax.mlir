// linalg.softmax along d: dx = y ⊙ (dy − Σ_d(dy ⊙ y)), as a reduction
// generic over d into zeros, then an elementwise generic reading the sum
// broadcast along d.
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=1' | FileCheck %s

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[Y:.*]] = linalg.softmax dimension(1) ins(%{{.*}} : tensor<2x3x4xf64>)
// s = Σ_d dy ⊙ y
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<2x4xf64>
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[DY:.*]], %[[Y]] : tensor<2x3x4xf64>, tensor<2x3x4xf64>) outs(%[[Z]] : tensor<2x4xf64>) attrs = {dist.phase = "backward"}
// CHECK-NEXT: ^bb0(%[[G:.*]]: f64, %[[V:.*]]: f64, %[[ACC:.*]]: f64):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[V]] : f64
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[P]], %[[ACC]] : f64
// CHECK-NEXT: linalg.yield %[[SUM]]
// dx = y ⊙ (dy − s)
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[Y]], %[[DY]], %[[S]] : tensor<2x3x4xf64>, tensor<2x3x4xf64>, tensor<2x4xf64>)
// CHECK-NEXT: ^bb0(%[[YV:.*]]: f64, %[[GV:.*]]: f64, %[[SV:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[GV]], %[[SV]] : f64
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[YV]], %[[D]] : f64
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ins(%[[DX]], {{.*}}dist.phase = "optimizer"
func.func @main(%x: tensor<2x3x4xf64> {dist.param}) -> tensor<2x3x4xf64> {
  %e = tensor.empty() : tensor<2x3x4xf64>
  %y = linalg.softmax dimension(1) ins(%x : tensor<2x3x4xf64>) outs(%e : tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
  return %y : tensor<2x3x4xf64>
}
