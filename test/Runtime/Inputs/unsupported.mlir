func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 1 : index
  %v = arith.constant 2.0 : f32
  %y = tensor.insert %v into %x[%c] : tensor<4xf32>
  return %y : tensor<4xf32>
}
