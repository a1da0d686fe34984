func.func @negative_link(%a: tensor<8x8xf32>) {
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[x = 2], latency = [-1.0]>, [[], []]>
  return
}
