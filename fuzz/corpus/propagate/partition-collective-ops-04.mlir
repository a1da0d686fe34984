shard.grid @g(shape = 2x2)
func.func @group_size(%a: tensor<4x4xf32>) {
  %0 = dist.all_slice_uneven %a on @g grid_axes = [0] slice_axis = 0 sizes = [1, 1, 2] : tensor<4x4xf32> -> tensor<?x4xf32>
  return
}
