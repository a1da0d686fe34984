#m1 = #dist.mesh<[dp = 2, mp = 2]>
#m2 = #dist.mesh<[x = 4]>
module attributes {dist.mesh = #m1} {
func.func @two_meshes(%a: tensor<4x4xf32> {dist.layout = #dist.layout<#m2, [[x], []]>})
    -> (tensor<4x4xf32> {dist.layout = #dist.layout<#m2, [[x], []]>}) {
  return %a : tensor<4x4xf32>
}
}
