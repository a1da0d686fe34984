// The producer is split by rows on dp and the consumer wants columns on dp:
// moving the axis between dims is one all_to_all with enable-alltoall, and
// all_gather + all_slice without it.
#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<8x12xf32>, %w: tensor<12x12xf32>) -> tensor<8x12xf32> {
    %xs = dist.annotate %x : tensor<8x12xf32> as #dist.layout<#mesh, [[dp], [mp]]> priority 1
    %e = tensor.empty() : tensor<8x12xf32>
    %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%xs : tensor<8x12xf32>) outs(%e : tensor<8x12xf32>) {
      ^bb0(%a: f32, %o: f32):
        %s = math.tanh %a : f32
        linalg.yield %s : f32
    } -> tensor<8x12xf32>
    %ts = dist.annotate %t : tensor<8x12xf32> as #dist.layout<#mesh, [[mp], [dp]]> priority 1
    %zero = arith.constant 0.0 : f32
    %e2 = tensor.empty() : tensor<8x12xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x12xf32>) -> tensor<8x12xf32>
    %y = linalg.matmul ins(%ts, %w : tensor<8x12xf32>, tensor<12x12xf32>) outs(%init : tensor<8x12xf32>) -> tensor<8x12xf32>
    return %y : tensor<8x12xf32>
  }
}
