module {
  shard.grid @mesh(shape = 2x2)
  func.func @kinds(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>, %x: tensor<4x8xf32>)
      -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<32xf32>, tensor<f32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<4xf32>, tensor<4x4xf32>) {
    %f = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
    %e = tensor.empty() : tensor<4x8xf32>
    %g0 = linalg.add {dist.phase = "backward"} ins(%a, %f : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %r0 = shard.all_reduce %g0 on @mesh grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
    %g1 = linalg.add {dist.phase = "backward"} ins(%a, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %c1 = tensor.collapse_shape %g1 [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
    %r1 = shard.all_reduce %c1 on @mesh grid_axes = [0] : tensor<32xf32> -> tensor<32xf32>
    %g2 = arith.addf %s, %s {dist.phase = "backward"} : tensor<f32>
    %r2 = shard.all_reduce %g2 on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
    %r3 = shard.all_reduce %g0 on @mesh grid_axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
    %r4 = shard.reduce_scatter %g1 on @mesh grid_axes = [0] scatter_axis = 0 : tensor<4x8xf32> -> tensor<2x8xf32>
    %e5 = tensor.empty() : tensor<8xf32>
    %g5 = linalg.add {dist.phase = "backward"} ins(%b, %b : tensor<8xf32>, tensor<8xf32>) outs(%e5 : tensor<8xf32>) -> tensor<8xf32>
    %r5 = shard.reduce_scatter %g5 on @mesh grid_axes = [0] scatter_axis = 0 : tensor<8xf32> -> tensor<4xf32>
    %r6 = shard.reduce_scatter %g0 on @mesh grid_axes = [0] scatter_axis = 1 : tensor<4x8xf32> -> tensor<4x4xf32>
    return %f, %r0, %r1, %r2, %r3, %r4, %r5, %r6 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<32xf32>, tensor<f32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<4xf32>, tensor<4x4xf32>
  }
}
