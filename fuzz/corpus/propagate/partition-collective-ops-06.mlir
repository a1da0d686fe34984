shard.grid @g(shape = 2x2)
func.func @bad_axis(%a: tensor<4x4xf32>) {
  %0 = dist.make_partial %a on @g grid_axes = [2] reduction = sum : tensor<4x4xf32>
  return
}
