shard.grid @g(shape = 2x2)
func.func @out_of_grid(%a: tensor<4x4xf32>) {
  %0 = dist.permute %a on @g sources = [4] targets = [0] : tensor<4x4xf32>
  return
}
