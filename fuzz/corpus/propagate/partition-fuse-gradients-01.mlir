module {
  shard.grid @mesh(shape = 2x2)
  func.func @deps(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
    %e = tensor.empty() : tensor<4x8xf32>
    %w0 = linalg.mul {dist.phase = "backward"} ins(%a, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %rw0 = shard.all_reduce %w0 on @mesh grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
    %d0 = linalg.add {dist.phase = "backward"} ins(%a, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %rd0 = shard.all_reduce %d0 on @mesh grid_axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
    %d1 = linalg.add {dist.phase = "backward"} ins(%rd0, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %rd1 = shard.all_reduce %d1 on @mesh grid_axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
    %w1 = linalg.mul {dist.phase = "backward"} ins(%rd1, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %rw1 = shard.all_reduce %w1 on @mesh grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
    %u = linalg.sub {dist.phase = "optimizer"} ins(%rw0, %rw1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    return %u, %rd1, %w1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
}
