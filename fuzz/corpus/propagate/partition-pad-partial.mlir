#mesh = #dist.mesh<[dp = 4]>
module attributes {dist.mesh = #mesh} {
func.func @one_pad(%g: tensor<10x30xf32> {dist.layout = #dist.layout<#mesh, [[], []] partial sum [dp]>})
    -> (tensor<12x30xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>}) {
  %one = arith.constant {dist.strategy = #dist.strategy<#mesh, in = [], out = [[]]>} 1.0 : f32
  %p = tensor.pad %g low[0, 0] high[2, 0] {
  ^bb0(%a: index, %b: index):
    tensor.yield %one : f32
  } {dist.strategy = #dist.strategy<#mesh, in = [[[], []] partial sum [dp]], out = [[[], []] partial sum [dp]]>} : tensor<10x30xf32> to tensor<12x30xf32>
  %r = dist.reshard %p : tensor<12x30xf32> from #dist.layout<#mesh, [[], []] partial sum [dp]> to #dist.layout<#mesh, [[dp], []]>
  return {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []]]>} %r : tensor<12x30xf32>
}
}
