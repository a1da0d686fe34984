// A Megatron MLP block for `autoshard train`: fc1 split by columns and fc2 by
// rows over mp (one all-reduce), a bias, GELU (tanh form). Parameters are
// marked dist.param; the batch is split over dp by --data-axis.
#mesh = #dist.mesh<[dp = 2, mp = 2]>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<8x8xf32> {dist.name = "x"},
                  %w1: tensor<8x16xf32> {dist.param, dist.name = "fc1.weight"},
                  %w2: tensor<16x8xf32> {dist.param, dist.name = "fc2.weight"},
                  %b2: tensor<8xf32> {dist.param, dist.name = "fc2.bias"})
      -> tensor<8x8xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %w1_s = dist.annotate %w1 : tensor<8x16xf32> as #dist.layout<#mesh, [[], [mp]]>
    %w2_s = dist.annotate %w2 : tensor<16x8xf32> as #dist.layout<#mesh, [[mp], []]>
    %e0 = tensor.empty() : tensor<8x16xf32>
    %i0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %h = linalg.matmul ins(%x, %w1_s : tensor<8x8xf32>, tensor<8x16xf32>) outs(%i0 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%h : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
      ^bb0(%in: f32, %out: f32):
        %half = arith.constant 5.000000000e-01 : f32
        %one = arith.constant 1.000000000e+00 : f32
        %k = arith.constant 4.471500000e-02 : f32
        %s = arith.constant 7.978845608e-01 : f32
        %x2 = arith.mulf %in, %in : f32
        %x3 = arith.mulf %x2, %in : f32
        %kx3 = arith.mulf %k, %x3 : f32
        %inner = arith.addf %in, %kx3 : f32
        %scaled = arith.mulf %s, %inner : f32
        %th = math.tanh %scaled : f32
        %onep = arith.addf %one, %th : f32
        %hx = arith.mulf %half, %in : f32
        %r = arith.mulf %hx, %onep : f32
        linalg.yield %r : f32
      } -> tensor<8x16xf32>
    %e1 = tensor.empty() : tensor<8x8xf32>
    %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %y = linalg.matmul ins(%g, %w2_s : tensor<8x16xf32>, tensor<16x8xf32>) outs(%i1 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %out = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
        ins(%y, %b2 : tensor<8x8xf32>, tensor<8xf32>) outs(%e1 : tensor<8x8xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %sum = arith.addf %a, %b : f32
        linalg.yield %sum : f32
      } -> tensor<8x8xf32>
    return %out : tensor<8x8xf32>
  }
}
