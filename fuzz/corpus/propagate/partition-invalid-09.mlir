#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @unsupported(%a: tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>})
    -> (tensor<4x4xi32> {dist.layout = #dist.layout<#mesh, [[dp], []]>}) {
  %0 = tensor.bitcast %a {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []]], out = [[[dp], []]]>} : tensor<4x4xf32> to tensor<4x4xi32>
  return %0 : tensor<4x4xi32>
}
}
