// A linear layer whose weight has 10 rows and 30 columns: neither divides
// over dp = 4 (optimizer-shard-uneven.test). y = x @ w + b.
#mesh = #dist.mesh<[dp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<64x10xf32> {dist.name = "x"}, %w: tensor<10x30xf32> {dist.param, dist.name = "w"}, %b: tensor<30xf32> {dist.param, dist.name = "b"}) -> tensor<64x30xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %e = tensor.empty() : tensor<64x30xf32>
    %i = linalg.fill ins(%zero : f32) outs(%e : tensor<64x30xf32>) -> tensor<64x30xf32>
    %h = linalg.matmul ins(%x, %w : tensor<64x10xf32>, tensor<10x30xf32>) outs(%i : tensor<64x30xf32>) -> tensor<64x30xf32>
    %e1 = tensor.empty() : tensor<64x30xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%h, %b : tensor<64x30xf32>, tensor<30xf32>) outs(%e1 : tensor<64x30xf32>) {
      ^bb0(%in: f32, %bias: f32, %out: f32):
        %s = arith.addf %in, %bias : f32
        linalg.yield %s : f32
      } -> tensor<64x30xf32>
    return %y : tensor<64x30xf32>
  }
}
