// A tiny training model: a rank-3 contraction generic (the importer's
// x[b,s,k] * w[k,n]), softmax over the last dim, a LayerNorm-style
// normalisation (mean and variance reductions) and a batch_matmul.
#id3 = affine_map<(b, s, n, k) -> (b, s, k)>
#w = affine_map<(b, s, n, k) -> (k, n)>
#out3 = affine_map<(b, s, n, k) -> (b, s, n)>
#x3 = affine_map<(b, s, d) -> (b, s, d)>
#row = affine_map<(b, s, d) -> (b, s)>
func.func @main(%x: tensor<2x4x8xf32> {dist.name = "x"},
                %w: tensor<8x8xf32> {dist.param, dist.name = "w"},
                %v: tensor<2x8x8xf32> {dist.param, dist.name = "v"})
    -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %h = linalg.generic {indexing_maps = [#id3, #w, #out3],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8xf32>
  %sm = linalg.softmax dimension(2) ins(%h : tensor<2x4x8xf32>) outs(%e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // LayerNorm without affine: (x - mean) / sqrt(var + eps).
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sum = linalg.generic {indexing_maps = [#x3, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%sm : tensor<2x4x8xf32>) outs(%z2 : tensor<2x4xf32>) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %c, %a : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %cent = linalg.generic {indexing_maps = [#x3, #row, #x3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sm, %sum : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %inv = arith.constant 0.125 : f32
    %mean = arith.mulf %m, %inv : f32
    %d = arith.subf %a, %mean : f32
    linalg.yield %d : f32
  } -> tensor<2x4x8xf32>
  %sq = linalg.generic {indexing_maps = [#x3, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%cent : tensor<2x4x8xf32>) outs(%z2 : tensor<2x4xf32>) {
  ^bb0(%a: f32, %c: f32):
    %p = arith.mulf %a, %a : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %ln = linalg.generic {indexing_maps = [#x3, #row, #x3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%cent, %sq : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %q: f32, %o: f32):
    %inv = arith.constant 0.125 : f32
    %eps = arith.constant 1.0e-5 : f32
    %var = arith.mulf %q, %inv : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %y = arith.mulf %a, %r : f32
    linalg.yield %y : f32
  } -> tensor<2x4x8xf32>
  %y = linalg.batch_matmul ins(%ln, %v : tensor<2x4x8xf32>, tensor<2x8x8xf32>) outs(%z : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}
