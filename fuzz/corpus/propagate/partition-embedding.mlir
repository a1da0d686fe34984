#mesh = #dist.mesh<[dp = 2, mp = 4]>
#table = #dist.layout<#mesh, [[mp], []]>
#ids = #dist.layout<#mesh, [[dp], []]>
#out = #dist.layout<#mesh, [[dp], [], []]>

module attributes {dist.mesh = #mesh} {
func.func @embed(%t: tensor<16x8xf32> {dist.layout = #table}, %i: tensor<4x1xindex> {dist.layout = #ids})
    -> (tensor<4x1x8xf32> {dist.layout = #out}) {
  %g = tensor.gather %t[%i] gather_dims([0]) {dist.strategy = #dist.strategy<#mesh, in = [[[mp], []], [[dp], []]], out = [[[dp], [], []] partial sum [mp]]>}
      : (tensor<16x8xf32>, tensor<4x1xindex>) -> tensor<4x1x8xf32>
  %r = dist.reshard %g : tensor<4x1x8xf32> from #dist.layout<#mesh, [[dp], [], []] partial sum [mp]> to #out
  return %r : tensor<4x1x8xf32>
}

func.func @embed_scatter(%t: tensor<16x8xf32> {dist.layout = #table}, %i: tensor<4x1xi32> {dist.layout = #ids})
    -> (tensor<4x1x8xf32> {dist.layout = #dist.layout<#mesh, [[dp], [], [mp]]>}) {
  %g = tensor.gather %t[%i] gather_dims([0]) {dist.strategy = #dist.strategy<#mesh, in = [[[mp], []], [[dp], []]], out = [[[dp], [], []] partial sum [mp]]>}
      : (tensor<16x8xf32>, tensor<4x1xi32>) -> tensor<4x1x8xf32>
  %r = dist.reshard %g : tensor<4x1x8xf32> from #dist.layout<#mesh, [[dp], [], []] partial sum [mp]> to #dist.layout<#mesh, [[dp], [], [mp]]>
  return %r : tensor<4x1x8xf32>
}
}
