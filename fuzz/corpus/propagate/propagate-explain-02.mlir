#mesh = #dist.mesh<[mp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @cheaper_overall(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
    %xs = dist.annotate %x : tensor<8x64xf32> as #dist.layout<#mesh, [[mp], []]>
    %ws = dist.annotate %w : tensor<64x64xf32> as #dist.layout<#mesh, [[], [mp]]>
    %t = tensor.empty() : tensor<8x64xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<8x64xf32>) outs(%t : tensor<8x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<8x64xf32>
    %e = tensor.empty() : tensor<8x64xf32>
    %y = linalg.matmul ins(%r, %ws : tensor<8x64xf32>, tensor<64x64xf32>) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
    return %y : tensor<8x64xf32>
  }
}
