func.func @mesh_field(%a: tensor<8x8xf32>) {
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[x = 2], speed = [1.0]>, [[], []]>
  return
}
