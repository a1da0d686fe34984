func.func @link_count(%a: tensor<8x8xf32>) {
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[x = 2, y = 2], bandwidth = [1.0]>, [[], []]>
  return
}
