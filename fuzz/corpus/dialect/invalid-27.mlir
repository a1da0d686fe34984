func.func @device_dup(%a: tensor<8x8xf32>) {
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[x = 2], devices = [1, 1]>, [[], []]>
  return
}
