#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @missing_reshard(%a: tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>})
    -> (tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[], [mp]]>}) {
  %0 = math.tanh %a {dist.strategy = #dist.strategy<#mesh, in = [[[], [mp]]], out = [[[], [mp]]]>} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
}
