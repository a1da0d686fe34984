func.func @huge_mesh(%a: tensor<8x8xf32>) {
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[dp = 2, mp = 2, a = 4294967296, b = 4294967296]>, [[], []]>
  return
}
