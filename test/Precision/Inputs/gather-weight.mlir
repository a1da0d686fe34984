// A weight stored split over mp (its rows) that the matmul's strategy reads
// replicated: the all-gather moves the weight, after its cast under bf16.
#mesh = #dist.mesh<[mp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<64x128xf32>, %w: tensor<128x256xf32>) -> tensor<64x256xf32> {
    %ws = dist.annotate %w : tensor<128x256xf32> as #dist.layout<#mesh, [[mp], []]>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<64x256xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
    %y = linalg.matmul {dist.strategy = #dist.strategy<#mesh, splits = [[4, 1], [1, 1]]>}
        ins(%x, %ws : tensor<64x128xf32>, tensor<128x256xf32>) outs(%z : tensor<64x256xf32>) -> tensor<64x256xf32>
    return %y : tensor<64x256xf32>
  }
}
