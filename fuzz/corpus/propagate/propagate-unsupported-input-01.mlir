#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @branch(%a: tensor<8x16xf32>, %c: i1) -> tensor<8x16xf32> {
  %r = scf.if %c -> tensor<8x16xf32> {
    %y = math.tanh %a : tensor<8x16xf32>
    scf.yield %y : tensor<8x16xf32>
  } else {
    scf.yield %a : tensor<8x16xf32>
  }
  return %r : tensor<8x16xf32>
}
}
