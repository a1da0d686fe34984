// tensor.gather as an embedding lookup (gather_dims([0]), indices [..., 1]):
// the table's gradient is a scatter-add written as ONE linalg.generic over
// (positions..., v, d...), positions reduced, v and d parallel:
//   dTable[v, d] += idx[p] == v ? dOut[p, d] : 0.
// RUN: autoshard-opt %s --split-input-file --dist-training-step='loss=mse optimizer=sgd lr=1' | FileCheck %s

// The importer's form: i64 indices, rank-reduced result.
// CHECK-DAG: #[[IDX:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<10x4xf32> {{.*}}, %[[I:[a-z0-9]+]]: tensor<2x3x1xi64>
// CHECK: tensor.gather %[[T]][%[[I]]] gather_dims([0])
// CHECK: %[[IC:.*]] = tensor.collapse_shape %[[I]] {{\[\[}}0], [1, 2]] {dist.phase = "backward"} : tensor<2x3x1xi64> into tensor<2x3xi64>
// CHECK: %[[Z:.*]] = linalg.fill {dist.phase = "backward"} {{.*}} -> tensor<10x4xf32>
// CHECK: %[[DT:.*]] = linalg.generic {indexing_maps = [#[[IDX]], #[[DY]], #[[OUT]]], iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%[[IC]], %{{.*}} : tensor<2x3xi64>, tensor<2x3x4xf32>) outs(%[[Z]] : tensor<10x4xf32>) attrs = {dist.phase = "backward"}
// CHECK-NEXT: ^bb0(%[[IV:.*]]: i64, %[[G:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[V:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[IX:.*]] = arith.index_cast %[[IV]] : i64 to index
// CHECK-NEXT: %[[EQ:.*]] = arith.cmpi eq, %[[IX]], %[[V]] : index
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[SEL:.*]] = arith.select %[[EQ]], %[[G]], %[[ZERO]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[SEL]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]]
// CHECK: ins(%[[DT]], %[[T]] : {{.*}}dist.phase = "optimizer"
func.func @main(%table: tensor<10x4xf32> {dist.param}, %ids: tensor<2x3x1xi64>) -> tensor<2x3x4xf32> {
  %y = tensor.gather %table[%ids] gather_dims([0]) : (tensor<10x4xf32>, tensor<2x3x1xi64>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// index indices, the result keeps the unit dim (collapsed away from dOut),
// 3-D table (two d loops).
// CHECK-DAG: #[[IDX:.*]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<10x2x4xf64> {{.*}}, %[[I:[a-z0-9]+]]: tensor<3x1xindex>
// CHECK: %[[IC:.*]] = tensor.collapse_shape %[[I]] {{\[\[}}0, 1]] {dist.phase = "backward"} : tensor<3x1xindex> into tensor<3xindex>
// CHECK: %[[G:.*]] = tensor.collapse_shape %{{.*}} {{.*}} {dist.phase = "backward"} : tensor<3x1x2x4xf64> into tensor<3x2x4xf64>
// CHECK: %[[DT:.*]] = linalg.generic {indexing_maps = [#[[IDX]], #[[DY]], #[[OUT]]], iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%[[IC]], %[[G]] : tensor<3xindex>, tensor<3x2x4xf64>) outs(%{{.*}} : tensor<10x2x4xf64>)
// CHECK-NEXT: ^bb0(%[[IV:.*]]: index, %{{.*}}: f64, %{{.*}}: f64):
// CHECK-NEXT: %[[V:.*]] = linalg.index 1 : index
// CHECK-NEXT: arith.cmpi eq, %[[IV]], %[[V]] : index
// CHECK: ins(%[[DT]], %[[T]] : {{.*}}dist.phase = "optimizer"
func.func @main(%table: tensor<10x2x4xf64> {dist.param}, %ids: tensor<3x1xindex>) -> tensor<3x1x2x4xf64> {
  %y = tensor.gather %table[%ids] gather_dims([0]) : (tensor<10x2x4xf64>, tensor<3x1xindex>) -> tensor<3x1x2x4xf64>
  return %y : tensor<3x1x2x4xf64>
}
