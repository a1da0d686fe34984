func.func @unknown_attr(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = arith.negf %a {dist.stratgy = 1 : i64} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
