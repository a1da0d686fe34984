func.func @not_a_mesh(%a: tensor<8x8xf32>) {
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<[2, 4], [[], []]>
  return
}
