shard.grid @grid(shape = 2x4)
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<8x16xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s0 : tensor<8x16xf32>
  %s1 = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
  %w1s = shard.shard %w1 to %s1 : tensor<16x64xf32>
  %s2 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  %w2s = shard.shard %w2 to %s2 : tensor<64x16xf32>
  %e0 = tensor.empty() : tensor<8x64xf32>
  %h = linalg.matmul ins(%xs, %w1s : tensor<8x16xf32>, tensor<16x64xf32>) outs(%e0 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %e1 = tensor.empty() : tensor<8x16xf32>
  %y = linalg.matmul ins(%h, %w2s : tensor<8x64xf32>, tensor<64x16xf32>) outs(%e1 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
