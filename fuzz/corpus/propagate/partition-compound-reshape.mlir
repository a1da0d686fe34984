#mesh = #dist.mesh<[dp = 2, mp = 4]>
#map = affine_map<(d0, d1) -> (d0, d1)>

module attributes {dist.mesh = #mesh} {
func.func @collapse_batch_heads(
    %x: tensor<2x4x8xf32> {dist.layout = #dist.layout<#mesh, [[dp], [mp], []]>})
    -> (tensor<2x4x8xf32> {dist.layout = #dist.layout<#mesh, [[dp], [mp], []]>}) {
  %one = arith.constant 1 : index
  %c = tensor.collapse_shape %x [[0, 1], [2]] {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp], []]], out = [[[dp, mp], []]]>}
      : tensor<2x4x8xf32> into tensor<8x8xf32>
  %e = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp, mp], []]]>} : tensor<8x8xf32>
  %t = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>)
      attrs = {dist.strategy = #dist.strategy<#mesh, in = [[[dp, mp], []], [[dp, mp], []]], out = [[[dp, mp], []]]>} {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %i1 = arith.addi %i, %one : index
    %ii = arith.index_cast %i1 : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %r = arith.mulf %in, %fi : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %y = tensor.expand_shape %t [[0, 1], [2]] output_shape [2, 4, 8] {dist.strategy = #dist.strategy<#mesh, in = [[[dp, mp], []]], out = [[[dp], [mp], []]]>}
      : tensor<8x8xf32> into tensor<2x4x8xf32>
  return {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp], []]]>} %y : tensor<2x4x8xf32>
}
}
