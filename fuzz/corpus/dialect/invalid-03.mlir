func.func @indivisible(%a: tensor<6x8xf32>) {
  %0 = dist.annotate %a : tensor<6x8xf32> as #dist.layout<#dist.mesh<[dp = 2, mp = 4]>, [[mp], []]>
  return
}
