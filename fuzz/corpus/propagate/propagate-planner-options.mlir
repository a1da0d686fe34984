#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @moves(%x: tensor<4x8x16xf32>) -> tensor<32x16xf32> {
    %xs = dist.annotate %x : tensor<4x8x16xf32> as #dist.layout<#mesh, [[], [mp], []]>
    %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
    return %c : tensor<32x16xf32>
  }
}
