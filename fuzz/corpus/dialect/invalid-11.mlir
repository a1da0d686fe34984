#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @result_arity(%a: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = arith.negf %a {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []]], out = [[[dp], []], [[dp], []]]>} : tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}
