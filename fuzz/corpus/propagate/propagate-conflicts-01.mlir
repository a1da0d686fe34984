#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @norule(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %x = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []]>
    %y = tensor.cast %x : tensor<8x16xf32> to tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}
