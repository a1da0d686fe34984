#mesh = #dist.mesh<[mp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<8x64xf32>, %w0: tensor<64x4xf32>, %w1: tensor<64x4xf32>, %w2: tensor<64x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
    %xs = dist.annotate %x : tensor<8x64xf32> as #dist.layout<#mesh, [[mp], []]> priority 1
    %w0s = dist.annotate %w0 : tensor<64x4xf32> as #dist.layout<#mesh, [[], [mp]]>
    %w1s = dist.annotate %w1 : tensor<64x4xf32> as #dist.layout<#mesh, [[], [mp]]>
    %w2s = dist.annotate %w2 : tensor<64x4xf32> as #dist.layout<#mesh, [[], [mp]]>
    %e0 = tensor.empty() : tensor<8x4xf32>
    %y0 = linalg.matmul ins(%xs, %w0s : tensor<8x64xf32>, tensor<64x4xf32>) outs(%e0 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %e1 = tensor.empty() : tensor<8x4xf32>
    %y1 = linalg.matmul ins(%xs, %w1s : tensor<8x64xf32>, tensor<64x4xf32>) outs(%e1 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %e2 = tensor.empty() : tensor<8x4xf32>
    %y2 = linalg.matmul ins(%xs, %w2s : tensor<8x64xf32>, tensor<64x4xf32>) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %y0, %y1, %y2 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
}
