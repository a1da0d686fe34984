#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @wrong_result(%a: tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>})
    -> (tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[], []]>}) {
  return %a : tensor<4x4xf32>
}
}
