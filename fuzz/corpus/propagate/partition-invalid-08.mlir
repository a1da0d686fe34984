#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
func.func @axes_out_of_order(%a: tensor<16x8xf32> {dist.layout = #dist.layout<#mesh, [[dp, mp], []]>})
    -> (tensor<4x4x8xf32> {dist.layout = #dist.layout<#mesh, [[mp], [dp], []]>}) {
  %0 = tensor.expand_shape %a [[0, 1], [2]] output_shape [4, 4, 8] {dist.strategy = #dist.strategy<#mesh, in = [[[dp, mp], []]], out = [[[mp], [dp], []]]>}
      : tensor<16x8xf32> into tensor<4x4x8xf32>
  return %0 : tensor<4x4x8xf32>
}
}
