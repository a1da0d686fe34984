func.func @bad_kind(%a: tensor<8x8xf32>) {
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[dp = 2]>, [[dp], []] partial mean [dp]>
  return
}
