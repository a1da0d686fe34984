// Seeded training data for the `autoshard train` tests (no numpy needed):
// autoshard-run writes each argument back as output_<i>.npy.
func.func @batch(%x: tensor<8x8xf32>, %targets: tensor<8x8xf32>,
                 %classes: tensor<8xi64>, %odd: tensor<7x8xf32>,
                 %scalar: tensor<f32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xi64>, tensor<7x8xf32>,
        tensor<f32>) {
  return %x, %targets, %classes, %odd, %scalar
      : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xi64>, tensor<7x8xf32>,
        tensor<f32>
}
