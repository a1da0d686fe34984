#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @strategy_shape(%a: tensor<6x32xf32>) -> tensor<6x32xf32> {
  %0 = arith.negf %a {dist.strategy = #dist.strategy<#mesh, in = [[[mp], []]]>} : tensor<6x32xf32>
  return %0 : tensor<6x32xf32>
}
