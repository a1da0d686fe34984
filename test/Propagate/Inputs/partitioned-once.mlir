// A small annotated program that unsupported-input.mlir partitions once and
// then tries to partition again.
#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %a = dist.annotate %x : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []]>
  %y = math.tanh %a : tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
}
