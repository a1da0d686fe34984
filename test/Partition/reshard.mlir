// Every dist.reshard becomes the planner's steps, one op per step.
// RUN: autoshard-opt %s --dist-partition | FileCheck %s
// RUN: autoshard-opt %s --dist-partition="enable-alltoall=true" | FileCheck %s --check-prefix=A2A

#m22 = #dist.mesh<[dp = 2, mp = 2]>
#m24 = #dist.mesh<[dp = 2, mp = 4]>
#m3 = #dist.mesh<[x = 3]>

// CHECK-LABEL: func.func @axis_swap
// CHECK-SAME: (%[[A:.*]]: tensor<4x4xf32> {{.*}}) -> (tensor<4x4xf32>
// Device 1 = (dp 0, mp 1) now holds block (1, 0), which device 2 held.
// CHECK: %[[P:.*]] = dist.permute %[[A]] on @mesh sources = [2, 1] targets = [1, 2] : tensor<4x4xf32>
// CHECK: return %[[P]]
module attributes {dist.mesh = #m22} {
func.func @axis_swap(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[dp], [mp]]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[mp], [dp]]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[dp], [mp]]> to #dist.layout<#m22, [[mp], [dp]]>
  return %0 : tensor<8x8xf32>
}

// Partial sum -> split rows: one reduce_scatter.
// CHECK-LABEL: func.func @partial_to_split
// CHECK: shard.reduce_scatter %{{.*}} on @mesh grid_axes = [1] scatter_axis = 0 : tensor<8x8xf32> -> tensor<4x8xf32>
func.func @partial_to_split(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []] partial sum [mp]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[mp], []]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[], []] partial sum [mp]> to #dist.layout<#m22, [[mp], []]>
  return %0 : tensor<8x8xf32>
}


// Only the minor axis of a dim split over [dp, mp] goes away.
// CHECK-LABEL: func.func @gather_minor
// CHECK: shard.all_gather %{{.*}} on @mesh grid_axes = [1] gather_axis = 0 : tensor<2x8xf32> -> tensor<4x8xf32>
func.func @gather_minor(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[dp, mp], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[dp], []]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[dp, mp], []]> to #dist.layout<#m22, [[dp], []]>
  return %0 : tensor<8x8xf32>
}
// Several axes on one dim: one gather over both, group index row-major over
// [dp, mp] = the shard index of the dim.
// CHECK-LABEL: func.func @two_axes_one_dim
// CHECK-SAME: tensor<2x8xf32>
// CHECK: shard.all_gather %{{.*}} on @mesh grid_axes = [0, 1] gather_axis = 0 : tensor<2x8xf32> -> tensor<8x8xf32>
func.func @two_axes_one_dim(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[dp, mp], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[dp, mp], []]> to #dist.layout<#m22, [[], []]>
  return %0 : tensor<8x8xf32>
}

// Replicated -> [[dp, mp]]: local slices only.
// CHECK-LABEL: func.func @slice_two_axes
// CHECK: shard.all_slice %{{.*}} on @mesh grid_axes = [0, 1] slice_axis = 0 : tensor<8x8xf32> -> tensor<2x8xf32>
// CHECK-NOT: shard.all_gather
// CHECK: return {{.*}} : tensor<2x8xf32>
func.func @slice_two_axes(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[dp, mp], []]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[], []]> to #dist.layout<#m22, [[dp, mp], []]>
  return %0 : tensor<8x8xf32>
}

// Moving an axis between dims: all_gather + all_slice, or one all_to_all.
// CHECK-LABEL: func.func @move_axis
// CHECK: shard.all_gather %{{.*}} on @mesh grid_axes = [1] gather_axis = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK: shard.all_slice %{{.*}} on @mesh grid_axes = [1] slice_axis = 1 : tensor<8x8xf32> -> tensor<8x4xf32>
// A2A-LABEL: func.func @move_axis
// A2A: shard.all_to_all %{{.*}} on @mesh grid_axes = [1] split_axis = 1 concat_axis = 0 : tensor<4x8xf32> -> tensor<8x4xf32>
func.func @move_axis(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[mp], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], [mp]]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[mp], []]> to #dist.layout<#m22, [[], [mp]]>
  return %0 : tensor<8x8xf32>
}

// Replicated -> partial sum: local masking.
// CHECK-LABEL: func.func @make_partial
// CHECK: dist.make_partial %{{.*}} on @mesh grid_axes = [0] reduction = sum : tensor<8x8xf32>
func.func @make_partial(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []] partial sum [dp]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[], []]> to #dist.layout<#m22, [[], []] partial sum [dp]>
  return %0 : tensor<8x8xf32>
}

// Pending max over mp -> replicated.
// CHECK-LABEL: func.func @max_reduce
// CHECK: shard.all_reduce %{{.*}} on @mesh grid_axes = [1] reduction = max : tensor<8x8xf32> -> tensor<8x8xf32>
func.func @max_reduce(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []] partial max [mp]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[], []] partial max [mp]> to #dist.layout<#m22, [[], []]>
  return %0 : tensor<8x8xf32>
}
}
