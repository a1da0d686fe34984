// Upstream shard.shard annotations (what mlir-opt --sharding-propagation
// reads) are accepted in a training step like dist.annotate: dX = dY, the
// annotation stays in the forward and propagation carries it.
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=1' | FileCheck %s
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=1' --autoshard-pipeline | FileCheck %s --check-prefix=SPMD

// CHECK-LABEL: func.func @train_step(
// CHECK: %[[S:.*]] = shard.shard %arg0 to %{{.*}} : tensor<8x4xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %[[S]]
// CHECK-NOT: shard.shard
// The weight's gradient (x^T dy) updates the parameter directly.
// CHECK: %[[XT:.*]] = linalg.transpose ins(%arg1
// CHECK: %[[DW:.*]] = linalg.matmul {dist.phase = "backward"} ins(%[[XT]]
// CHECK: ins(%[[DW]], %arg0 : {{.*}}dist.phase = "optimizer"

// The column split carries through the step: the weight arrives split and
// the updated weight leaves in the same layout.
// SPMD-LABEL: func.func @train_step(
// SPMD-SAME: %arg0: tensor<8x2xf32> {dist.global_type = tensor<8x4xf32>, dist.layout = #dist.layout<#mesh, {{\[\[\], \[g0\]\]}}>
// SPMD-SAME: -> (tensor<f32> {{.*}}, tensor<8x2xf32> {dist.global_type = tensor<8x4xf32>, dist.layout = #dist.layout<#mesh, {{\[\[\], \[g0\]\]}}>
shard.grid @grid(shape = 2)
func.func @main(%w: tensor<8x4xf32> {dist.param}, %x: tensor<6x8xf32>) -> tensor<6x4xf32> {
  %sharding = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sharding : tensor<8x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<6x4xf32>) -> tensor<6x4xf32>
  %y = linalg.matmul ins(%x, %ws : tensor<6x8xf32>, tensor<8x4xf32>) outs(%init : tensor<6x4xf32>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}
