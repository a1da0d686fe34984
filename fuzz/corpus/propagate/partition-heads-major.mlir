#mesh = #dist.mesh<[dp = 2, mp = 4]>
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

module attributes {dist.mesh = #mesh} {
func.func @heads_major(
    %x: tensor<4x8x4x8xf32> {dist.layout = #dist.layout<#mesh, [[dp], [], [mp], []]>})
    -> (tensor<4x8x4x8xf32> {dist.layout = #dist.layout<#mesh, [[dp], [], [mp], []]>}) {
  %cst = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1 : index
  %e0 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[mp], [dp], [], []]]>} : tensor<4x4x8x8xf32>
  %t = linalg.transpose ins(%x : tensor<4x8x4x8xf32>) outs(%e0 : tensor<4x4x8x8xf32>) permutation = [2, 0, 1, 3]
      {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [], [mp], []], [[mp], [dp], [], []]], out = [[[mp], [dp], [], []]]>}
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] {dist.strategy = #dist.strategy<#mesh, in = [[[mp], [dp], [], []]], out = [[[mp, dp], [], []]]>}
      : tensor<4x4x8x8xf32> into tensor<16x8x8xf32>
  %e1 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[mp, dp], [], []]]>} : tensor<16x8x8xf32>
  %f = linalg.fill {dist.strategy = #dist.strategy<#mesh, in = [[], [[mp, dp], [], []]], out = [[[mp, dp], [], []]]>}
      ins(%cst : f32) outs(%e1 : tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
  %s = linalg.batch_matmul {dist.strategy = #dist.strategy<#mesh, in = [[[mp, dp], [], []], [[mp, dp], [], []], [[mp, dp], [], []]], out = [[[mp, dp], [], []]]>}
      ins(%c, %c : tensor<16x8x8xf32>, tensor<16x8x8xf32>) outs(%f : tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
  %e3 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[mp, dp], [], []]]>} : tensor<16x8x8xf32>
  %g = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<16x8x8xf32>) outs(%e3 : tensor<16x8x8xf32>)
      attrs = {dist.strategy = #dist.strategy<#mesh, in = [[[mp, dp], [], []], [[mp, dp], [], []]], out = [[[mp, dp], [], []]]>} {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %i1 = arith.addi %i, %one : index
    %ii = arith.index_cast %i1 : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %r = arith.mulf %in, %fi : f32
    linalg.yield %r : f32
  } -> tensor<16x8x8xf32>
  %ex = tensor.expand_shape %g [[0, 1], [2], [3]] output_shape [4, 4, 8, 8] {dist.strategy = #dist.strategy<#mesh, in = [[[mp, dp], [], []]], out = [[[mp], [dp], [], []]]>}
      : tensor<16x8x8xf32> into tensor<4x4x8x8xf32>
  %e2 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], [], [mp], []]]>} : tensor<4x8x4x8xf32>
  %y = linalg.transpose ins(%ex : tensor<4x4x8x8xf32>) outs(%e2 : tensor<4x8x4x8xf32>) permutation = [1, 2, 0, 3]
      {dist.strategy = #dist.strategy<#mesh, in = [[[mp], [dp], [], []], [[dp], [], [mp], []]], out = [[[dp], [], [mp], []]]>}
  return {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [], [mp], []]]>} %y : tensor<4x8x4x8xf32>
}
}
