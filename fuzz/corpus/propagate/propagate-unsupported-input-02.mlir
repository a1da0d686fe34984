#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
func.func private @helper(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %y = math.tanh %a : tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
func.func @caller(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = func.call @helper(%a) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
}
