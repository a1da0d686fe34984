func.func @not_a_strategy(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = arith.negf %a {dist.strategy = [[2, 1]]} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
