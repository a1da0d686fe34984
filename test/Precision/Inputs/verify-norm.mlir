// A bf16 GEMM into a layer norm over rows with a large mean
// (test/Precision/verify-norm.test): w + 1 gives every column of the GEMM
// the common part sum_k x[i, k], so row i of y has mean about sum_k x[i, k]
// and a spread of about one. The GEMM's bf16 rounding error scales with
// the mean; the layer norm subtracts the mean (the error stays) and divides
// by the spread (the error grows by mean / spread).
#mesh = #dist.mesh<[mp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>) -> tensor<16x32xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %w_s = dist.annotate %w : tensor<64x32xf32> as #dist.layout<#mesh, [[], [mp]]>
    %ew = tensor.empty() : tensor<64x32xf32>
    %w1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%w_s : tensor<64x32xf32>) outs(%ew : tensor<64x32xf32>) {
      ^bb0(%in: f32, %out: f32):
        %one = arith.constant 1.000000e+00 : f32
        %r = arith.addf %in, %one : f32
        linalg.yield %r : f32
      } -> tensor<64x32xf32>
    %ey = tensor.empty() : tensor<16x32xf32>
    %y0 = linalg.fill ins(%zero : f32) outs(%ey : tensor<16x32xf32>) -> tensor<16x32xf32>
    %y = linalg.matmul ins(%x, %w1 : tensor<16x64xf32>, tensor<64x32xf32>) outs(%y0 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %er = tensor.empty() : tensor<16xf32>
    %r0 = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
    %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
        ins(%y : tensor<16x32xf32>) outs(%r0 : tensor<16xf32>) {
      ^bb0(%in: f32, %out: f32):
        %r = arith.addf %in, %out : f32
        linalg.yield %r : f32
      } -> tensor<16xf32>
    %ec = tensor.empty() : tensor<16x32xf32>
    %centred = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%y, %sum : tensor<16x32xf32>, tensor<16xf32>) outs(%ec : tensor<16x32xf32>) {
      ^bb0(%in0: f32, %in1: f32, %out: f32):
        %inv_n = arith.constant 3.125000e-02 : f32
        %mean = arith.mulf %in1, %inv_n : f32
        %r = arith.subf %in0, %mean : f32
        linalg.yield %r : f32
      } -> tensor<16x32xf32>
    %q0 = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
    %sqsum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
        ins(%centred : tensor<16x32xf32>) outs(%q0 : tensor<16xf32>) {
      ^bb0(%in: f32, %out: f32):
        %sq = arith.mulf %in, %in : f32
        %r = arith.addf %sq, %out : f32
        linalg.yield %r : f32
      } -> tensor<16xf32>
    %en = tensor.empty() : tensor<16x32xf32>
    %ln = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%centred, %sqsum : tensor<16x32xf32>, tensor<16xf32>) outs(%en : tensor<16x32xf32>) {
      ^bb0(%in0: f32, %in1: f32, %out: f32):
        %inv_n = arith.constant 3.125000e-02 : f32
        %eps = arith.constant 1.000000e-05 : f32
        %var = arith.mulf %in1, %inv_n : f32
        %vare = arith.addf %var, %eps : f32
        %rstd = math.rsqrt %vare : f32
        %r = arith.mulf %in0, %rstd : f32
        linalg.yield %r : f32
      } -> tensor<16x32xf32>
    return %ln : tensor<16x32xf32>
  }
}
