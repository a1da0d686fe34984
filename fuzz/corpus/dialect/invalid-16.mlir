#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @strategy_field(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = arith.negf %a {dist.strategy = #dist.strategy<#mesh, inputs = [[[dp], []]]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
