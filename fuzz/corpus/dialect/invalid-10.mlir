#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @arity(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %e: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, splits = [[2, 1]]>}
      ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}
