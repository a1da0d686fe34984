#sq = #dist.mesh<[x = 2, y = 2]>
func.func @ambiguous(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = arith.negf %a {dist.strategy = #dist.strategy<#sq, splits = [[2, 1]]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
