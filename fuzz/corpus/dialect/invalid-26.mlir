func.func @device_count(%a: tensor<8x8xf32>) {
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[x = 2, y = 2], devices = [0, 1, 2]>, [[], []]>
  return
}
