module {
  shard.grid @mesh(shape = 2x?)
  func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %s = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
    %a = shard.shard %x to %s : tensor<8x16xf32>
    %y = math.tanh %a : tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}
