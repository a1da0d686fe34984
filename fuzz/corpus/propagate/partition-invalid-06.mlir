#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @minor_factor(%a: tensor<8xf32> {dist.layout = #dist.layout<#mesh, [[dp]]>})
    -> (tensor<2x4xf32> {dist.layout = #dist.layout<#mesh, [[], [dp]]>}) {
  %0 = tensor.expand_shape %a [[0, 1]] output_shape [2, 4] {dist.strategy = #dist.strategy<#mesh, in = [[[dp]]], out = [[[], [dp]]]>}
      : tensor<8xf32> into tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
}
