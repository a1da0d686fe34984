func.func @bad_priority(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = arith.negf %a {dist.priority = "high"} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
