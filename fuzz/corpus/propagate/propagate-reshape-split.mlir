#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @batch_passes(%x: tensor<4x8x16xf32>, %w: tensor<16x32xf32>) -> tensor<4x8x32xf32> {
    %xs = dist.annotate %x : tensor<4x8x16xf32> as #dist.layout<#mesh, [[dp], [], []]>
    %ws = dist.annotate %w : tensor<16x32xf32> as #dist.layout<#mesh, [[], [mp]]>
    %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
    %e = tensor.empty() : tensor<32x32xf32>
    %y = linalg.matmul ins(%c, %ws : tensor<32x16xf32>, tensor<16x32xf32>) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
    %r = tensor.expand_shape %y [[0, 1], [2]] output_shape [4, 8, 32] : tensor<32x32xf32> into tensor<4x8x32xf32>
    return %r : tensor<4x8x32xf32>
  }

  func.func @minor_split_stops(%x: tensor<4x8x16xf32>) -> tensor<32x16xf32> {
    %xs = dist.annotate %x : tensor<4x8x16xf32> as #dist.layout<#mesh, [[], [mp], []]>
    %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
    return %c : tensor<32x16xf32>
  }
}
