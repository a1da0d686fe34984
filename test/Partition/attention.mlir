// Self-attention with heads on mp and the batch on dp (post-propagation
// form). The [B*S, nh*dh] projection passes its splits through reshapes to
// [B, S, nh, dh]; scores, softmax and the weighted sum stay local per head;
// the output projection's partial sum over mp is the only collective.
// RUN: autoshard-opt %s --dist-partition | FileCheck %s

#mesh = #dist.mesh<[dp = 2, mp = 4]>
#map_q = affine_map<(b, h, s, t, d) -> (b, s, h, d)>
#map_k = affine_map<(b, h, s, t, d) -> (b, t, h, d)>
#map_s = affine_map<(b, h, s, t, d) -> (b, h, s, t)>
#map_p = affine_map<(b, s, h, d, t) -> (b, h, s, t)>
#map_v = affine_map<(b, s, h, d, t) -> (b, t, h, d)>
#map_o = affine_map<(b, s, h, d, t) -> (b, s, h, d)>

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32> {{.*}}, %[[WQ:.*]]: tensor<16x4xf32> {{.*}}, %[[WO:.*]]: tensor<4x16xf32>
// CHECK: %[[XC:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<2x8x16xf32> into tensor<16x16xf32>
// CHECK: %[[Q:.*]] = linalg.matmul ins(%[[XC]], %[[WQ]] : tensor<16x16xf32>, tensor<16x4xf32>) outs(%{{.*}} : tensor<16x4xf32>)
// CHECK: %[[Q4:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0, 1], [2, 3]] output_shape [2, 8, 1, 4] : tensor<16x4xf32> into tensor<2x8x1x4xf32>
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[Q4]], %[[Q4]] : tensor<2x8x1x4xf32>, tensor<2x8x1x4xf32>) outs(%{{.*}} : tensor<2x1x8x8xf32>)
// CHECK: %[[P:.*]] = linalg.softmax dimension(3) ins(%[[S]] : tensor<2x1x8x8xf32>) outs(%{{.*}} : tensor<2x1x8x8xf32>) -> tensor<2x1x8x8xf32>
// CHECK: %[[O:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[Q4]] : tensor<2x1x8x8xf32>, tensor<2x8x1x4xf32>) outs(%{{.*}} : tensor<2x8x1x4xf32>)
// CHECK: %[[OC:.*]] = tensor.collapse_shape %[[O]] {{\[\[}}0, 1], [2, 3]] : tensor<2x8x1x4xf32> into tensor<16x4xf32>
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[OC]], %[[WO]] : tensor<16x4xf32>, tensor<4x16xf32>) outs(%{{.*}} : tensor<16x16xf32>)
// CHECK: %[[R:.*]] = shard.all_reduce %[[Y]] on @mesh grid_axes = [1] : tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK: %[[YE:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0, 1], [2]] output_shape [2, 8, 16] : tensor<16x16xf32> into tensor<2x8x16xf32>
// CHECK: return %[[YE]] : tensor<2x8x16xf32>
module attributes {dist.mesh = #mesh} {
func.func @attention(%x: tensor<4x8x16xf32> {dist.layout = #dist.layout<#mesh, [[dp], [], []]>},
                     %wq: tensor<16x16xf32> {dist.layout = #dist.layout<#mesh, [[], [mp]]>},
                     %wo: tensor<16x16xf32> {dist.layout = #dist.layout<#mesh, [[mp], []]>})
    -> (tensor<4x8x16xf32> {dist.layout = #dist.layout<#mesh, [[dp], [], []]>}) {
  %zero = arith.constant 0.0 : f32
  %xc = tensor.collapse_shape %x [[0, 1], [2]] {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [], []]], out = [[[dp], []]]>}
      : tensor<4x8x16xf32> into tensor<32x16xf32>
  %e0 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], [mp]]]>} : tensor<32x16xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %q = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []], [[], [mp]]], out = [[[dp], [mp]]]>}
      ins(%xc, %wq : tensor<32x16xf32>, tensor<16x16xf32>) outs(%f0 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %q4 = tensor.expand_shape %q [[0, 1], [2, 3]] output_shape [4, 8, 4, 4] {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]]], out = [[[dp], [], [mp], []]]>}
      : tensor<32x16xf32> into tensor<4x8x4x4xf32>
  %es = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], [mp], [], []]]>} : tensor<4x4x8x8xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32>
  %s = linalg.generic {indexing_maps = [#map_q, #map_k, #map_s],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"],
                       dist.strategy = #dist.strategy<#mesh, in = [[[dp], [], [mp], []], [[dp], [], [mp], []]], out = [[[dp], [mp], [], []]]>}
      ins(%q4, %q4 : tensor<4x8x4x4xf32>, tensor<4x8x4x4xf32>) outs(%fs : tensor<4x4x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x4x8x8xf32>
  %ep = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], [mp], [], []]]>} : tensor<4x4x8x8xf32>
  %p = linalg.softmax {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp], [], []]], out = [[[dp], [mp], [], []]]>}
      dimension(3) ins(%s : tensor<4x4x8x8xf32>) outs(%ep : tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32>
  %eo = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], [], [mp], []]]>} : tensor<4x8x4x4xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x8x4x4xf32>) -> tensor<4x8x4x4xf32>
  %o = linalg.generic {indexing_maps = [#map_p, #map_v, #map_o],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"],
                       dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp], [], []], [[dp], [], [mp], []]], out = [[[dp], [], [mp], []]]>}
      ins(%p, %q4 : tensor<4x4x8x8xf32>, tensor<4x8x4x4xf32>) outs(%fo : tensor<4x8x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x8x4x4xf32>
  %oc = tensor.collapse_shape %o [[0, 1], [2, 3]] {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [], [mp], []]], out = [[[dp], [mp]]]>}
      : tensor<4x8x4x4xf32> into tensor<32x16xf32>
  %ey = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], []] partial sum [mp]]>} : tensor<32x16xf32>
  %fy = linalg.fill ins(%zero : f32) outs(%ey : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]], [[mp], []]], out = [[[dp], []] partial sum [mp]]>}
      ins(%oc, %wo : tensor<32x16xf32>, tensor<16x16xf32>) outs(%fy : tensor<32x16xf32>) -> tensor<32x16xf32>
  %r = dist.reshard %y : tensor<32x16xf32> from #dist.layout<#mesh, [[dp], []] partial sum [mp]> to #dist.layout<#mesh, [[dp], []]>
  %ye = tensor.expand_shape %r [[0, 1], [2]] output_shape [4, 8, 16] {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []]], out = [[[dp], [], []]]>}
      : tensor<32x16xf32> into tensor<4x8x16xf32>
  return %ye : tensor<4x8x16xf32>
}
}
