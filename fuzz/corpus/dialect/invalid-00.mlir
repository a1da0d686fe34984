func.func @unknown_axis(%a: tensor<8x8xf32>) {
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[dp = 2, mp = 4]>, [[tp], []]>
  return
}
