// Vocabulary-parallel embedding: the table's rows are split over mp, so each
// device looks up only the ids it holds (shifted by its vocabulary offset),
// zeroes the others, and the partial sum over mp is resolved by the reshard
// that follows: all_reduce, or reduce_scatter when the consumer wants the
// result split.
// RUN: autoshard-opt %s --dist-partition | FileCheck %s

#mesh = #dist.mesh<[dp = 2, mp = 4]>
#table = #dist.layout<#mesh, [[mp], []]>
#ids = #dist.layout<#mesh, [[dp], []]>
#out = #dist.layout<#mesh, [[dp], [], []]>

// CHECK-LABEL: func.func @embed
// CHECK-SAME: (%[[T:.*]]: tensor<4x8xf32> {{.*}}, %[[I:.*]]: tensor<2x1xindex>
// CHECK: %[[MP:.*]] = shard.process_multi_index on @mesh axes = [1] : index
// CHECK: %[[OFF:.*]] = arith.muli %[[MP]], %c4
// CHECK: %[[SHIFTED:.*]]:2 = linalg.generic {{.*}} ins(%[[I]] : tensor<2x1xindex>) outs({{.*}} : tensor<2x1xindex>, tensor<2x1xi1>)
// CHECK:   arith.subi %{{.*}}, %[[OFF]] : index
// CHECK:   arith.cmpi sge
// CHECK:   arith.cmpi slt
// CHECK:   arith.andi
// CHECK:   arith.select
// CHECK: %[[G:.*]] = tensor.gather %[[T]][%[[SHIFTED]]#0] gather_dims([0]) : (tensor<4x8xf32>, tensor<2x1xindex>) -> tensor<2x1x8xf32>
// CHECK: %[[MASK:.*]] = tensor.collapse_shape %[[SHIFTED]]#1 {{\[\[}}0, 1]] : tensor<2x1xi1> into tensor<2xi1>
// CHECK: %[[Z:.*]] = linalg.generic {{.*}} ins(%[[G]], %[[MASK]] : tensor<2x1x8xf32>, tensor<2xi1>)
// CHECK:   arith.select
// CHECK: %[[R:.*]] = shard.all_reduce %[[Z]] on @mesh grid_axes = [1] : tensor<2x1x8xf32> -> tensor<2x1x8xf32>
// CHECK: return %[[R]]
module attributes {dist.mesh = #mesh} {
func.func @embed(%t: tensor<16x8xf32> {dist.layout = #table}, %i: tensor<4x1xindex> {dist.layout = #ids})
    -> (tensor<4x1x8xf32> {dist.layout = #out}) {
  %g = tensor.gather %t[%i] gather_dims([0]) {dist.strategy = #dist.strategy<#mesh, in = [[[mp], []], [[dp], []]], out = [[[dp], [], []] partial sum [mp]]>}
      : (tensor<16x8xf32>, tensor<4x1xindex>) -> tensor<4x1x8xf32>
  %r = dist.reshard %g : tensor<4x1x8xf32> from #dist.layout<#mesh, [[dp], [], []] partial sum [mp]> to #out
  return %r : tensor<4x1x8xf32>
}

// The consumer wants the hidden dim split over mp: reduce_scatter instead.
// CHECK-LABEL: func.func @embed_scatter
// CHECK: tensor.gather
// CHECK: shard.reduce_scatter %{{.*}} on @mesh grid_axes = [1] scatter_axis = 2 : tensor<2x1x8xf32> -> tensor<2x1x2xf32>
// CHECK-NOT: shard.all_reduce
func.func @embed_scatter(%t: tensor<16x8xf32> {dist.layout = #table}, %i: tensor<4x1xi32> {dist.layout = #ids})
    -> (tensor<4x1x8xf32> {dist.layout = #dist.layout<#mesh, [[dp], [], [mp]]>}) {
  %g = tensor.gather %t[%i] gather_dims([0]) {dist.strategy = #dist.strategy<#mesh, in = [[[mp], []], [[dp], []]], out = [[[dp], [], []] partial sum [mp]]>}
      : (tensor<16x8xf32>, tensor<4x1xi32>) -> tensor<4x1x8xf32>
  %r = dist.reshard %g : tensor<4x1x8xf32> from #dist.layout<#mesh, [[dp], [], []] partial sum [mp]> to #dist.layout<#mesh, [[dp], [], [mp]]>
  return %r : tensor<4x1x8xf32>
}
}
