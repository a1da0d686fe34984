#a = #dist.mesh<[x = 2]>
func.func @strategy_scalar(%v: f32, %t: tensor<4xf32>) -> f32 {
  %f = linalg.fill {dist.strategy = #dist.strategy<#a, in = [[], [[x]]]>} ins(%v : f32) outs(%t : tensor<4xf32>) -> tensor<4xf32>
  %0 = arith.negf %v {dist.strategy = #dist.strategy<#a, in = [[] partial sum [x]]>} : f32
  return %0 : f32
}
