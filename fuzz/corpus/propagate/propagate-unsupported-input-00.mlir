#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @loop(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%x = %a) -> tensor<8x16xf32> {
    %y = math.tanh %x : tensor<8x16xf32>
    scf.yield %y : tensor<8x16xf32>
  }
  return %r : tensor<8x16xf32>
}
}
