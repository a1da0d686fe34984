func.func @partial_and_split(%a: tensor<8x8xf32>) {
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[dp = 2, mp = 4]>, [[dp], []] partial sum [dp]>
  return
}
