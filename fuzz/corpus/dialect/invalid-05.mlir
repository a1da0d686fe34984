func.func @uneven_count(%a: tensor<10x4xf32>) {
  %0 = dist.annotate %a : tensor<10x4xf32> as #dist.layout<#dist.mesh<[x = 3]>, [[x] sizes(5, 5), []]>
  return
}
