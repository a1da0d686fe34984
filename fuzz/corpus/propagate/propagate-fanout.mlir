#mesh = #dist.mesh<[g0 = 2, g1 = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<256x256xf32>, %w: tensor<256x256xf32>) -> (tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>) {
    %xs = dist.annotate %x : tensor<256x256xf32> as #dist.layout<#mesh, [[g0, g1], []]>
    %e = tensor.empty() : tensor<256x256xf32>
    %y0 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[g1], []], [[], []], [[g1], []]], out = [[[g1], []]]>} ins(%xs, %w : tensor<256x256xf32>, tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
    %y1 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[g1], []], [[], []], [[g1], []]], out = [[[g1], []]]>} ins(%xs, %w : tensor<256x256xf32>, tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
    %y2 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[g0], []], [[], []], [[g0], []]], out = [[[g0], []]]>} ins(%xs, %w : tensor<256x256xf32>, tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
    %y3 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[g0], []], [[], []], [[g0], []]], out = [[[g0], []]]>} ins(%xs, %w : tensor<256x256xf32>, tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
    return %y0, %y1, %y2, %y3 : tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>
  }
}
