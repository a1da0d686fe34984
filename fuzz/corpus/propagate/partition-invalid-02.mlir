#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @no_strategy(%a: tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>})
    -> (tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>}) {
  %0 = math.tanh %a : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
}
