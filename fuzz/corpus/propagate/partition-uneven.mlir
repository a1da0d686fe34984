#m3 = #dist.mesh<[x = 3]>
#u = #dist.layout<#m3, [[x] sizes(2, 5, 3), []]>
#r = #dist.layout<#m3, [[], []]>

module attributes {dist.mesh = #m3} {
func.func @uneven(%a: tensor<10x4xf32> {dist.layout = #u}) -> (tensor<10x4xf32> {dist.layout = #r}) {
  %e = tensor.empty() {dist.strategy = #dist.strategy<#m3, in = [], out = [[[x] sizes(2, 5, 3), []]]>} : tensor<10x4xf32>
  %n = linalg.negf {dist.strategy = #dist.strategy<#m3, in = [[[x] sizes(2, 5, 3), []], [[x] sizes(2, 5, 3), []]], out = [[[x] sizes(2, 5, 3), []]]>}
      ins(%a : tensor<10x4xf32>) outs(%e : tensor<10x4xf32>) -> tensor<10x4xf32>
  %g = dist.reshard %n : tensor<10x4xf32> from #u to #r
  return %g : tensor<10x4xf32>
}

func.func @uneven_slice(%a: tensor<10x4xf32> {dist.layout = #r}) -> (tensor<10x4xf32> {dist.layout = #u}) {
  %s = dist.reshard %a : tensor<10x4xf32> from #r to #u
  return %s : tensor<10x4xf32>
}

func.func @equal_sizes(%a: tensor<9x4xf32> {dist.layout = #dist.layout<#m3, [[x] sizes(3, 3, 3), []]>})
    -> (tensor<9x4xf32> {dist.layout = #dist.layout<#m3, [[x] sizes(3, 3, 3), []]>}) {
  return %a : tensor<9x4xf32>
}
}
