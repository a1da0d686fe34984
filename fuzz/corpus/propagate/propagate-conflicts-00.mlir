#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @priority(%a: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
    %lo = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []]> priority 1
    %hi = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[], [mp]]> priority 2
    return %lo, %hi : tensor<8x16xf32>, tensor<8x16xf32>
  }
}
