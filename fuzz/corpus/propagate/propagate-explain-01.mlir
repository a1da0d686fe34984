#mesh = #dist.mesh<[mp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @partial_result(%x: tensor<8x16xf32>, %w: tensor<16x8xf32>) -> tensor<8x8xf32> {
    %xs = dist.annotate %x : tensor<8x16xf32> as #dist.layout<#mesh, [[], [mp]]>
    %ws = dist.annotate %w : tensor<16x8xf32> as #dist.layout<#mesh, [[mp], []]>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x8xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
    %y = linalg.matmul ins(%xs, %ws : tensor<8x16xf32>, tensor<16x8xf32>) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}
