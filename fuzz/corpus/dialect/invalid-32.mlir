func.func @reshard_meshes(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#dist.mesh<[x = 2]>, [[x], []]> to #dist.layout<#dist.mesh<[y = 2]>, [[y], []]>
  return %0 : tensor<8x8xf32>
}
