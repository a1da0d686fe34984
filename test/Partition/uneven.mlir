// Uneven splits (MindSpore manual_split): a dim whose shards differ in size
// is dynamic in the local type; each device's extent is its own shard size,
// computed from its mesh coordinate where the program needs it.
// RUN: autoshard-opt %s --dist-partition | FileCheck %s

#m3 = #dist.mesh<[x = 3]>
#u = #dist.layout<#m3, [[x] sizes(2, 5, 3), []]>
#r = #dist.layout<#m3, [[], []]>

// CHECK-LABEL: func.func @uneven
// CHECK-SAME: (%[[A:.*]]: tensor<?x4xf32> {dist.global_type = tensor<10x4xf32>, dist.layout = #dist.layout<#mesh, {{\[\[}}x] sizes(2, 5, 3), []]>})
// CHECK-SAME: -> (tensor<10x4xf32> {dist.global_type = tensor<10x4xf32>
// The local extent: 2, 5 or 3 by the device's coordinate on x.
// CHECK: %[[IDX:.*]] = shard.process_multi_index on @mesh axes = [0] : index
// CHECK: arith.cmpi eq, %[[IDX]]
// CHECK: %[[SIZE:.*]] = arith.select %{{.*}}, %c3, %{{.*}} : index
// CHECK: %[[E:.*]] = tensor.empty(%[[SIZE]]) : tensor<?x4xf32>
// CHECK: %[[N:.*]] = linalg.negf ins(%[[A]] : tensor<?x4xf32>) outs(%[[E]] : tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: %[[G:.*]] = dist.all_gather_uneven %[[N]] on @mesh grid_axes = [0] gather_axis = 0 sizes = [2, 5, 3] : tensor<?x4xf32> -> tensor<10x4xf32>
// CHECK: return %[[G]]
module attributes {dist.mesh = #m3} {
func.func @uneven(%a: tensor<10x4xf32> {dist.layout = #u}) -> (tensor<10x4xf32> {dist.layout = #r}) {
  %e = tensor.empty() {dist.strategy = #dist.strategy<#m3, in = [], out = [[[x] sizes(2, 5, 3), []]]>} : tensor<10x4xf32>
  %n = linalg.negf {dist.strategy = #dist.strategy<#m3, in = [[[x] sizes(2, 5, 3), []], [[x] sizes(2, 5, 3), []]], out = [[[x] sizes(2, 5, 3), []]]>}
      ins(%a : tensor<10x4xf32>) outs(%e : tensor<10x4xf32>) -> tensor<10x4xf32>
  %g = dist.reshard %n : tensor<10x4xf32> from #u to #r
  return %g : tensor<10x4xf32>
}

// CHECK-LABEL: func.func @uneven_slice
// CHECK: dist.all_slice_uneven %{{.*}} on @mesh grid_axes = [0] slice_axis = 0 sizes = [2, 5, 3] : tensor<10x4xf32> -> tensor<?x4xf32>
func.func @uneven_slice(%a: tensor<10x4xf32> {dist.layout = #r}) -> (tensor<10x4xf32> {dist.layout = #u}) {
  %s = dist.reshard %a : tensor<10x4xf32> from #r to #u
  return %s : tensor<10x4xf32>
}

// Equal uneven sizes are static.
// CHECK-LABEL: func.func @equal_sizes
// CHECK-SAME: tensor<3x4xf32>
func.func @equal_sizes(%a: tensor<9x4xf32> {dist.layout = #dist.layout<#m3, [[x] sizes(3, 3, 3), []]>})
    -> (tensor<9x4xf32> {dist.layout = #dist.layout<#m3, [[x] sizes(3, 3, 3), []]>}) {
  return %a : tensor<9x4xf32>
}
}
