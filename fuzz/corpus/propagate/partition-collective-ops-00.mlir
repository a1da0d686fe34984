shard.grid @g(shape = 2x2)
func.func @ops(%a: tensor<4x4xf32>, %u: tensor<?x4xf32>) {
  %0 = dist.permute %a on @g sources = [1, 2] targets = [2, 1] : tensor<4x4xf32>
  %1 = dist.make_partial %a on @g grid_axes = [1] reduction = product : tensor<4x4xf32>
  %2 = dist.all_gather_uneven %u on @g grid_axes = [0] gather_axis = 0 sizes = [1, 3] : tensor<?x4xf32> -> tensor<4x4xf32>
  %3 = dist.all_slice_uneven %a on @g grid_axes = [0] slice_axis = 0 sizes = [1, 3] : tensor<4x4xf32> -> tensor<?x4xf32>
  return
}
