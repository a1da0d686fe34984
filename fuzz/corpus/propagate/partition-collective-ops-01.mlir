shard.grid @g(shape = 2x2)
func.func @dup_target(%a: tensor<4x4xf32>) {
  %0 = dist.permute %a on @g sources = [1, 3] targets = [2, 2] : tensor<4x4xf32>
  return
}
