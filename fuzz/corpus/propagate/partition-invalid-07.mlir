#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @heads_not_single(%a: tensor<4x4x8xf32> {dist.layout = #dist.layout<#mesh, [[mp], [dp], []]>})
    -> (tensor<16x8xf32> {dist.layout = #dist.layout<#mesh, [[mp, dp], []]>}) {
  %0 = tensor.collapse_shape %a [[0, 1], [2]] {dist.strategy = #dist.strategy<#mesh, in = [[[mp], [dp], []]], out = [[[mp, dp], []]]>}
      : tensor<4x4x8xf32> into tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
}
