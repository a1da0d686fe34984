// One of every collective the benchmark prices, with the bytes per device
// that CostModel.h's formulas give (n = devices in the group).
module {
  shard.grid @g(shape = 2x4)
  func.func @f(%a: tensor<4x16xf32>, %b: tensor<8x16xf32>, %h: tensor<4x16xf16>) {
    // 2 * 3/4 * 256 B = 384
    %0 = shard.all_reduce %a on @g grid_axes = [1] : tensor<4x16xf32> -> tensor<4x16xf32>
    // 1/2 * 512 B (the gathered result) = 256
    %1 = shard.all_gather %a on @g grid_axes = [0] gather_axis = 0 : tensor<4x16xf32> -> tensor<8x16xf32>
    // n = 8: 7/8 * 2048 B = 1792
    %2 = shard.all_gather %a on @g grid_axes = [0, 1] gather_axis = 0 : tensor<4x16xf32> -> tensor<32x16xf32>
    // 3/4 * 512 B (the operand) = 384
    %3 = shard.reduce_scatter %b on @g grid_axes = [1] scatter_axis = 0 : tensor<8x16xf32> -> tensor<2x16xf32>
    // 3/4 * 512 B = 384
    %4 = shard.all_to_all %b on @g grid_axes = [1] split_axis = 1 concat_axis = 0 : tensor<8x16xf32> -> tensor<32x4xf32>
    // local: 0
    %5 = shard.all_slice %b on @g grid_axes = [1] slice_axis = 1 : tensor<8x16xf32> -> tensor<8x4xf32>
    // whole local shard: 512
    %6 = dist.permute %b on @g sources = [1, 2] targets = [2, 1] : tensor<8x16xf32>
    // f16: 2 * 1/2 * 128 B = 128
    %7 = shard.all_reduce %h on @g grid_axes = [0] : tensor<4x16xf16> -> tensor<4x16xf16>
    return
  }
}
