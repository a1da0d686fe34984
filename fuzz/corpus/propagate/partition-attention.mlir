#mesh = #dist.mesh<[dp = 2, mp = 4]>
#map_q = affine_map<(b, h, s, t, d) -> (b, s, h, d)>
#map_k = affine_map<(b, h, s, t, d) -> (b, t, h, d)>
#map_s = affine_map<(b, h, s, t, d) -> (b, h, s, t)>
#map_p = affine_map<(b, s, h, d, t) -> (b, h, s, t)>
#map_v = affine_map<(b, s, h, d, t) -> (b, t, h, d)>
#map_o = affine_map<(b, s, h, d, t) -> (b, s, h, d)>

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
