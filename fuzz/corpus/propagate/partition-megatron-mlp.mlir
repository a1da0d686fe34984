#mesh = #dist.mesh<[dp = 2, mp = 4]>
#x = #dist.layout<#mesh, [[dp], []]>
#col = #dist.layout<#mesh, [[], [mp]]>
#row = #dist.layout<#mesh, [[mp], []]>
#h = #dist.layout<#mesh, [[dp], [mp]]>
#p = #dist.layout<#mesh, [[dp], []] partial sum [mp]>



module attributes {dist.mesh = #mesh} {
func.func @mlp(%x: tensor<8x16xf32> {dist.layout = #x},
               %w1: tensor<16x64xf32> {dist.layout = #col},
               %w2: tensor<64x16xf32> {dist.layout = #row},
               %w3: tensor<16x64xf32> {dist.layout = #col},
               %w4: tensor<64x16xf32> {dist.layout = #row})
    -> (tensor<8x16xf32> {dist.layout = #x}) {
  %zero = arith.constant 0.0 : f32
  %x0 = dist.annotate %x : tensor<8x16xf32> as #x
  %e1 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], [mp]]]>} : tensor<8x64xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %h1 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []], [[], [mp]]], out = [[[dp], [mp]]]>}
      ins(%x0, %w1 : tensor<8x16xf32>, tensor<16x64xf32>) outs(%f1 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %a1 = math.tanh %h1 {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]]], out = [[[dp], [mp]]]>} : tensor<8x64xf32>
  %e2 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], []] partial sum [mp]]>} : tensor<8x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y1 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]], [[mp], []]], out = [[[dp], []] partial sum [mp]]>}
      ins(%a1, %w2 : tensor<8x64xf32>, tensor<64x16xf32>) outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r1 = dist.reshard %y1 : tensor<8x16xf32> from #p to #x

  %e3 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], [mp]]]>} : tensor<8x64xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %h2 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []], [[], [mp]]], out = [[[dp], [mp]]]>}
      ins(%r1, %w3 : tensor<8x16xf32>, tensor<16x64xf32>) outs(%f3 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %a2 = math.tanh %h2 {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]]], out = [[[dp], [mp]]]>} : tensor<8x64xf32>
  %e4 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], []] partial sum [mp]]>} : tensor<8x16xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y2 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]], [[mp], []]], out = [[[dp], []] partial sum [mp]]>}
      ins(%a2, %w4 : tensor<8x64xf32>, tensor<64x16xf32>) outs(%f4 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r2 = dist.reshard %y2 : tensor<8x16xf32> from #p to #x
  return %r2 : tensor<8x16xf32>
}
}
