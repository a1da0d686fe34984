// Files written for `mlir-opt --sharding-propagation` work unchanged: grid
// axes become mesh axes g0, g1 and shard.shard becomes dist.annotate.
// RUN: autoshard-opt --dist-propagate=report=- %s | FileCheck %s

shard.grid @grid(shape = 2x4)
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<8x16xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s0 : tensor<8x16xf32>
  %s1 = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
  %w1s = shard.shard %w1 to %s1 : tensor<16x64xf32>
  %s2 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  %w2s = shard.shard %w2 to %s2 : tensor<64x16xf32>
  %e0 = tensor.empty() : tensor<8x64xf32>
  %h = linalg.matmul ins(%xs, %w1s : tensor<8x16xf32>, tensor<16x64xf32>) outs(%e0 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %e1 = tensor.empty() : tensor<8x16xf32>
  %y = linalg.matmul ins(%h, %w2s : tensor<8x64xf32>, tensor<64x16xf32>) outs(%e1 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
// CHECK: collectives: all_reduce=1
// CHECK: comm bytes per device: 384
// CHECK: #mesh = #dist.mesh<[g0 = 2, g1 = 4]>
// CHECK: module attributes {dist.mesh = #mesh, dist.planner = {enable_alltoall = false}}
// CHECK-NOT: shard.sharding
// CHECK: dist.annotate %arg0 : tensor<8x16xf32> as #dist.layout<#mesh, {{\[\[}}g0], []]>
// CHECK: dist.reshard {{.*}} from #dist.layout<#mesh, {{\[\[}}g0], []] partial sum [g1]> to #dist.layout<#mesh, {{\[\[}}g0], []]>
