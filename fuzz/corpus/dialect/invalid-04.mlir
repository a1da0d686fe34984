func.func @uneven_sum(%a: tensor<10x4xf32>) {
  %0 = dist.annotate %a : tensor<10x4xf32> as #dist.layout<#dist.mesh<[x = 3]>, [[x] sizes(2, 4, 3), []]>
  return
}
