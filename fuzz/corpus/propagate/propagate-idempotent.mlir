#mesh = #dist.mesh<[mp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @row_parallel(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>) -> tensor<8x32xf32> {
    %xs = dist.annotate %x : tensor<8x64xf32> as #dist.layout<#mesh, [[], [mp]]>
    %ws = dist.annotate %w : tensor<64x32xf32> as #dist.layout<#mesh, [[mp], []]>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x32xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
    %y = linalg.matmul ins(%xs, %ws : tensor<8x64xf32>, tensor<64x32xf32>) outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
    return %y : tensor<8x32xf32>
  }
}
