func.func @too_many_devices(%a: tensor<8x8xf32>) {
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[a = 2048, b = 1024]>, [[], []]>
  return
}
