// A GEMM whose N dim is split over mp (w's columns), then a row sum over
// that dim, split too, and a softmax along it: under --precision bf16 only
// the GEMM's operands are cast; the reductions read its f32 result, so the
// sum's partial results are f32 when they cross ranks.
#mesh = #dist.mesh<[mp = 4]>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<8x64xf32>, %w: tensor<64x256xf32>) -> (tensor<8xf32>, tensor<8x256xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x256xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x256xf32>) -> tensor<8x256xf32>
    %y = linalg.matmul {dist.strategy = #dist.strategy<#mesh, splits = [[1, 1], [1, 4]]>}
        ins(%x, %w : tensor<8x64xf32>, tensor<64x256xf32>) outs(%z : tensor<8x256xf32>) -> tensor<8x256xf32>
    %re = tensor.empty() : tensor<8xf32>
    %r0 = linalg.fill ins(%zero : f32) outs(%re : tensor<8xf32>) -> tensor<8xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"],
                           dist.strategy = #dist.strategy<#mesh, splits = [[1, 4]]>}
        ins(%y : tensor<8x256xf32>) outs(%r0 : tensor<8xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    %sm = linalg.softmax dimension(1) ins(%y : tensor<8x256xf32>) outs(%e : tensor<8x256xf32>) -> tensor<8x256xf32>
    return %sum, %sm : tensor<8xf32>, tensor<8x256xf32>
  }
}
