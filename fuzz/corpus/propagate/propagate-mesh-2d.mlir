#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @contraction_on_mp(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
    %xs = dist.annotate %x : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], [mp]]>
    %ws = dist.annotate %w : tensor<16x32xf32> as #dist.layout<#mesh, [[mp], []]>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x32xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
    %y = linalg.matmul ins(%xs, %ws : tensor<8x16xf32>, tensor<16x32xf32>) outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
    return %y : tensor<8x32xf32>
  }

  func.func @rows_and_columns(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
    %xs = dist.annotate %x : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []]>
    %ws = dist.annotate %w : tensor<16x32xf32> as #dist.layout<#mesh, [[], [mp]]>
    %e = tensor.empty() : tensor<8x32xf32>
    %y = linalg.matmul ins(%xs, %ws : tensor<8x16xf32>, tensor<16x32xf32>) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
    return %y : tensor<8x32xf32>
  }

  func.func @both_axes_on_rows(%x: tensor<16x16xf32>, %w: tensor<16x32xf32>) -> tensor<16x32xf32> {
    %xs = dist.annotate %x : tensor<16x16xf32> as #dist.layout<#mesh, [[dp, mp], []]>
    %e = tensor.empty() : tensor<16x32xf32>
    %y = linalg.matmul ins(%xs, %w : tensor<16x16xf32>, tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
    %t = tensor.empty() : tensor<16x32xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<16x32xf32>) outs(%t : tensor<16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = math.tanh %in : f32
      linalg.yield %m : f32
    } -> tensor<16x32xf32>
    return %r : tensor<16x32xf32>
  }
}
