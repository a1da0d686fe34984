#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @concat_split_dim(%a: tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>})
    -> (tensor<8x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>}) {
  %0 = tensor.concat dim(0) %a, %a {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []], [[dp], []]], out = [[[dp], []]]>}
      : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
}
