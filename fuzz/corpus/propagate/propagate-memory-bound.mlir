#mesh = #dist.mesh<[dp = 2, mp = 4]>
#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {dist.mesh = #mesh} {
  func.func @mlp(%x: tensor<64x256xf32>, %w1_0: tensor<256x1024xf32>, %w2_0: tensor<1024x256xf32>, %w1_1: tensor<256x1024xf32>, %w2_1: tensor<1024x256xf32>, %w1_2: tensor<256x1024xf32>, %w2_2: tensor<1024x256xf32>, %w1_3: tensor<256x1024xf32>, %w2_3: tensor<1024x256xf32>) -> tensor<64x256xf32> {
    %zero = arith.constant 0.0 : f32
    %w1_0s = dist.annotate %w1_0 : tensor<256x1024xf32> as #dist.layout<#mesh, [[], [mp]]>
    %e1_0 = tensor.empty() : tensor<64x1024xf32>
    %i1_0 = linalg.fill ins(%zero : f32) outs(%e1_0 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %h_0 = linalg.matmul ins(%x, %w1_0s : tensor<64x256xf32>, tensor<256x1024xf32>) outs(%i1_0 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %et_0 = tensor.empty() : tensor<64x1024xf32>
    %a_0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h_0 : tensor<64x1024xf32>) outs(%et_0 : tensor<64x1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.tanh %in : f32
      linalg.yield %t : f32
    } -> tensor<64x1024xf32>
    %e2_0 = tensor.empty() : tensor<64x256xf32>
    %i2_0 = linalg.fill ins(%zero : f32) outs(%e2_0 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %y_0 = linalg.matmul ins(%a_0, %w2_0 : tensor<64x1024xf32>, tensor<1024x256xf32>) outs(%i2_0 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %e1_1 = tensor.empty() : tensor<64x1024xf32>
    %i1_1 = linalg.fill ins(%zero : f32) outs(%e1_1 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %h_1 = linalg.matmul ins(%y_0, %w1_1 : tensor<64x256xf32>, tensor<256x1024xf32>) outs(%i1_1 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %et_1 = tensor.empty() : tensor<64x1024xf32>
    %a_1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h_1 : tensor<64x1024xf32>) outs(%et_1 : tensor<64x1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.tanh %in : f32
      linalg.yield %t : f32
    } -> tensor<64x1024xf32>
    %e2_1 = tensor.empty() : tensor<64x256xf32>
    %i2_1 = linalg.fill ins(%zero : f32) outs(%e2_1 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %y_1 = linalg.matmul ins(%a_1, %w2_1 : tensor<64x1024xf32>, tensor<1024x256xf32>) outs(%i2_1 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %e1_2 = tensor.empty() : tensor<64x1024xf32>
    %i1_2 = linalg.fill ins(%zero : f32) outs(%e1_2 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %h_2 = linalg.matmul ins(%y_1, %w1_2 : tensor<64x256xf32>, tensor<256x1024xf32>) outs(%i1_2 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %et_2 = tensor.empty() : tensor<64x1024xf32>
    %a_2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h_2 : tensor<64x1024xf32>) outs(%et_2 : tensor<64x1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.tanh %in : f32
      linalg.yield %t : f32
    } -> tensor<64x1024xf32>
    %e2_2 = tensor.empty() : tensor<64x256xf32>
    %i2_2 = linalg.fill ins(%zero : f32) outs(%e2_2 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %y_2 = linalg.matmul ins(%a_2, %w2_2 : tensor<64x1024xf32>, tensor<1024x256xf32>) outs(%i2_2 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %e1_3 = tensor.empty() : tensor<64x1024xf32>
    %i1_3 = linalg.fill ins(%zero : f32) outs(%e1_3 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %h_3 = linalg.matmul ins(%y_2, %w1_3 : tensor<64x256xf32>, tensor<256x1024xf32>) outs(%i1_3 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %et_3 = tensor.empty() : tensor<64x1024xf32>
    %a_3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h_3 : tensor<64x1024xf32>) outs(%et_3 : tensor<64x1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.tanh %in : f32
      linalg.yield %t : f32
    } -> tensor<64x1024xf32>
    %e2_3 = tensor.empty() : tensor<64x256xf32>
    %i2_3 = linalg.fill ins(%zero : f32) outs(%e2_3 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %y_3 = linalg.matmul ins(%a_3, %w2_3 : tensor<64x1024xf32>, tensor<1024x256xf32>) outs(%i2_3 : tensor<64x256xf32>) -> tensor<64x256xf32>
    return %y_3 : tensor<64x256xf32>
  }
}
