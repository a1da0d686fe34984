#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @impossible(%a: tensor<12x32xf32>) -> tensor<12x32xf32> {
  %0 = arith.negf %a {dist.strategy = #dist.strategy<#mesh, splits = [[3, 1]]>} : tensor<12x32xf32>
  return %0 : tensor<12x32xf32>
}
