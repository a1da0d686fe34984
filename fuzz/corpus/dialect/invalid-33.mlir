func.func @reshard_target(%a: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %0 = dist.reshard %a : tensor<8x6xf32> from #dist.layout<#dist.mesh<[x = 4]>, [[x], []]> to #dist.layout<#dist.mesh<[x = 4]>, [[], [x]]>
  return %0 : tensor<8x6xf32>
}
