#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @dynamic(%a: tensor<?x4xf32> {dist.layout = #dist.layout<#mesh, [[], []]>}) -> tensor<?x4xf32> {
  return %a : tensor<?x4xf32>
}
}
