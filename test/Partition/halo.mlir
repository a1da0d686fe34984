// Convolutions and pools with their output rows split over h (4 devices):
// the padded input of each is whole on its rows (the rule of a window op),
// so propagation all-gathers the rows before the pad; partitioning turns
// that all-gather + pad into a halo exchange: every device receives the
// rows its window needs from its two neighbours (dist.permute) and pads
// only at the edges of the mesh. No all-gather is left.
// RUN: autoshard-opt %s --dist-propagate --dist-partition | FileCheck %s
// A conv whose input is replicated needs no halo: it slices its window.
// RUN: autoshard-opt %s --dist-propagate --dist-partition | FileCheck %s --check-prefix=REPL

#mesh = #dist.mesh<[h = 4]>
#rows = #dist.layout<#mesh, [[], [], [h], []]>
#whole = #dist.layout<#mesh, [[], [], [], []]>

// CHECK-LABEL: func.func @convs
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x4x16xf32>
// CHECK-NOT: shard.all_gather
// 3x3, pad 1, stride 1: one row from each neighbour.
// CHECK: %[[TOP:.*]] = tensor.extract_slice %[[X]][0, 0, 3, 0] [2, 4, 1, 16]
// CHECK: %[[FROMPREV:.*]] = dist.permute %[[TOP]] on @mesh sources = [0, 1, 2] targets = [1, 2, 3] : tensor<2x4x1x16xf32>
// CHECK: %[[BOT:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [2, 4, 1, 16]
// CHECK: %[[FROMNEXT:.*]] = dist.permute %[[BOT]] on @mesh sources = [1, 2, 3] targets = [0, 1, 2] : tensor<2x4x1x16xf32>
// CHECK: %[[SLAB:.*]] = tensor.concat dim(2) %[[FROMPREV]], %[[X]], %[[FROMNEXT]] : {{.*}} -> tensor<2x4x6x16xf32>
// The first device's top row and the last one's bottom row are the padding.
// CHECK: %[[MASKED:.*]] = linalg.generic {{.*}} ins(%[[SLAB]] : tensor<2x4x6x16xf32>)
// CHECK: linalg.index 2
// CHECK: arith.select
// CHECK: %[[PADW:.*]] = tensor.pad %[[MASKED]] low[0, 0, 0, 1] high[0, 0, 0, 1]
// CHECK: %[[C1:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[PADW]], %{{.*}} : tensor<2x4x6x18xf32>, tensor<8x4x3x3xf32>) outs(%{{.*}} : tensor<2x8x4x16xf32>)
// 3x3, pad 1, stride 2: only the previous device's last row.
// CHECK: dist.permute {{.*}} sources = [0, 1, 2] targets = [1, 2, 3] : tensor<2x8x1x16xf32>
// CHECK-NOT: dist.permute
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} strides = dense<2> {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8x5x18xf32>, tensor<8x8x3x3xf32>) outs(%{{.*}} : tensor<2x8x2x8xf32>)
// 2x2, stride 2, no padding: every window is local.
// CHECK-NOT: dist.permute
// CHECK: linalg.pooling_nchw_max {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8x2x8xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<2x8x1x4xf32>)
// CHECK-NOT: shard.all_gather
// CHECK: return
func.func @convs(%x: tensor<2x4x16x16xf32>, %w1: tensor<8x4x3x3xf32>,
                 %w2: tensor<8x8x3x3xf32>) -> tensor<2x8x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %xs = dist.annotate %x : tensor<2x4x16x16xf32> as #rows
  %p1 = tensor.pad %xs low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<2x4x16x16xf32> to tensor<2x4x18x18xf32>
  %e1 = tensor.empty() : tensor<2x8x16x16xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %c1 = linalg.conv_2d_nchw_fchw
      {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
       dist.strategy = #dist.strategy<#mesh, in = [[[], [], [], []], [[], [], [], []]], out = [[[], [], [h], []]]>}
      ins(%p1, %w1 : tensor<2x4x18x18xf32>, tensor<8x4x3x3xf32>)
      outs(%i1 : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %p2 = tensor.pad %c1 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<2x8x16x16xf32> to tensor<2x8x18x18xf32>
  %e2 = tensor.empty() : tensor<2x8x8x8xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw
      {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>,
       dist.strategy = #dist.strategy<#mesh, in = [[[], [], [], []], [[], [], [], []]], out = [[[], [], [h], []]]>}
      ins(%p2, %w2 : tensor<2x8x18x18xf32>, tensor<8x8x3x3xf32>)
      outs(%i2 : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %e3 = tensor.empty() : tensor<2x8x4x4xf32>
  %i3 = linalg.fill ins(%ninf : f32) outs(%e3 : tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %m = linalg.pooling_nchw_max
      {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>,
       dist.strategy = #dist.strategy<#mesh, in = [[[], [], [], []], [[], []]], out = [[[], [], [h], []]]>}
      ins(%c2, %win : tensor<2x8x8x8xf32>, tensor<2x2xf32>)
      outs(%i3 : tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %r = dist.annotate %m : tensor<2x8x4x4xf32> as #rows
  return %r : tensor<2x8x4x4xf32>
}

// REPL-LABEL: func.func @replicated
// REPL-NOT: dist.permute
// REPL-NOT: shard.all_gather
// REPL: %[[ROW:.*]] = shard.process_multi_index on @mesh axes = [0]
// REPL: %[[OFF:.*]] = arith.muli %[[ROW]], %c4
// REPL: %[[WIN:.*]] = tensor.extract_slice %{{.*}}[0, 0, %[[OFF]], 0] [2, 4, 6, 18]
// REPL: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[WIN]], %{{.*}} : tensor<2x4x6x18xf32>, tensor<8x4x3x3xf32>) outs(%{{.*}} : tensor<2x8x4x16xf32>)
func.func @replicated(%x: tensor<2x4x16x16xf32>, %w1: tensor<8x4x3x3xf32>) -> tensor<2x8x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %xs = dist.annotate %x : tensor<2x4x16x16xf32> as #whole
  %p1 = tensor.pad %xs low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<2x4x16x16xf32> to tensor<2x4x18x18xf32>
  %e1 = tensor.empty() : tensor<2x8x16x16xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %c1 = linalg.conv_2d_nchw_fchw
      {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
       dist.strategy = #dist.strategy<#mesh, in = [[[], [], [], []], [[], [], [], []]], out = [[[], [], [h], []]]>}
      ins(%p1, %w1 : tensor<2x4x18x18xf32>, tensor<8x4x3x3xf32>)
      outs(%i1 : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %r = dist.annotate %c1 : tensor<2x8x16x16xf32> as #rows
  return %r : tensor<2x8x16x16xf32>
}
