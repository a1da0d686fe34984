shard.grid @g(shape = 2x2)
func.func @bad_sizes(%a: tensor<4x4xf32>) {
  %0 = dist.all_slice_uneven %a on @g grid_axes = [0] slice_axis = 0 sizes = [2, 3] : tensor<4x4xf32> -> tensor<?x4xf32>
  return
}
