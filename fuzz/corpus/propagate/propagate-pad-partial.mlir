#mesh = #dist.mesh<[dp = 4]>
module attributes {dist.mesh = #mesh} {

func.func @zero_pad(%x: tensor<64x10xf32>, %dy: tensor<64x30xf32>) -> tensor<12x30xf32> {
  %xs = dist.annotate %x : tensor<64x10xf32> as #dist.layout<#mesh, [[dp], []]>
  %dys = dist.annotate %dy : tensor<64x30xf32> as #dist.layout<#mesh, [[dp], []]>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x30xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<10x30xf32>) -> tensor<10x30xf32>
  %xt = tensor.empty() : tensor<10x64xf32>
  %t = linalg.transpose ins(%xs : tensor<64x10xf32>) outs(%xt : tensor<10x64xf32>) permutation = [1, 0]
  %g = linalg.matmul ins(%t, %dys : tensor<10x64xf32>, tensor<64x30xf32>) outs(%i : tensor<10x30xf32>) -> tensor<10x30xf32>
  %p = tensor.pad %g low[0, 0] high[2, 0] {
  ^bb0(%a: index, %b: index):
    tensor.yield %zero : f32
  } : tensor<10x30xf32> to tensor<12x30xf32>
  %s = dist.annotate %p : tensor<12x30xf32> as #dist.layout<#mesh, [[dp], []]>
  %r = arith.addf %s, %s : tensor<12x30xf32>
  return %r : tensor<12x30xf32>
}

func.func @one_pad(%x: tensor<64x10xf32>, %dy: tensor<64x30xf32>) -> tensor<12x30xf32> {
  %xs = dist.annotate %x : tensor<64x10xf32> as #dist.layout<#mesh, [[dp], []]>
  %dys = dist.annotate %dy : tensor<64x30xf32> as #dist.layout<#mesh, [[dp], []]>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<10x30xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<10x30xf32>) -> tensor<10x30xf32>
  %xt = tensor.empty() : tensor<10x64xf32>
  %t = linalg.transpose ins(%xs : tensor<64x10xf32>) outs(%xt : tensor<10x64xf32>) permutation = [1, 0]
  %g = linalg.matmul ins(%t, %dys : tensor<10x64xf32>, tensor<64x30xf32>) outs(%i : tensor<10x30xf32>) -> tensor<10x30xf32>
  %p = tensor.pad %g low[0, 0] high[2, 0] {
  ^bb0(%a: index, %b: index):
    tensor.yield %one : f32
  } : tensor<10x30xf32> to tensor<12x30xf32>
  %s = dist.annotate %p : tensor<12x30xf32> as #dist.layout<#mesh, [[dp], []]>
  %r = arith.addf %s, %s : tensor<12x30xf32>
  return %r : tensor<12x30xf32>
}
}
