#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%t: tensor<4x8xindex>) -> tensor<4x8xindex> {
    %a = dist.annotate %t : tensor<4x8xindex> as #dist.layout<#mesh, [[dp], []]>
    %r = dist.reshard %a : tensor<4x8xindex> from #dist.layout<#mesh, [[dp], []]> to #dist.layout<#mesh, [[], []]>
    return %r : tensor<4x8xindex>
  }
}
