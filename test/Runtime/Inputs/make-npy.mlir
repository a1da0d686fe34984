// Helpers for the error tests: write .npy files of given types.
func.func @f64_8x16(%x: tensor<8x16xf64>) -> tensor<8x16xf64> {
  return %x : tensor<8x16xf64>
}
func.func @f32_4x4(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  return %x : tensor<4x4xf32>
}
