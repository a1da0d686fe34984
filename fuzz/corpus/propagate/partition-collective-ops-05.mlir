func.func @no_grid(%a: tensor<4x4xf32>) {
  %0 = dist.make_partial %a on @nope grid_axes = [0] reduction = sum : tensor<4x4xf32>
  return
}
