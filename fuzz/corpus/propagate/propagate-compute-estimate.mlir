#map = affine_map<(d0, d1) -> (d0, d1)>
module attributes {dist.mesh = #dist.mesh<[dp = 2, mp = 4]>} {
  func.func @main(%x: tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
    %e1 = tensor.empty() : tensor<1024x1024xf32>
    %dear = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<1024x1024xf32>) outs(%e1 : tensor<1024x1024xf32>) {
      ^bb0(%in: f32, %out: f32):
        %a = arith.mulf %in, %in : f32
        %b = arith.mulf %a, %in : f32
        %c = arith.addf %b, %in : f32
        %d = math.tanh %c : f32
        linalg.yield %d : f32
      } -> tensor<1024x1024xf32>
    %e0 = tensor.empty() : tensor<1024x1024xf32>
    %cheap = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<1024x1024xf32>) outs(%e0 : tensor<1024x1024xf32>) {
      ^bb0(%in: f32, %out: f32):
        %a = arith.negf %in : f32
        linalg.yield %a : f32
      } -> tensor<1024x1024xf32>
    return %cheap, %dear : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  }
}
