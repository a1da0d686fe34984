#mesh = #dist.mesh<[h = 4]>
#rows = #dist.layout<#mesh, [[], [], [h], []]>
func.func @large_images(%x: tensor<8x4x256x256xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<8x8x256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %xs = dist.annotate %x : tensor<8x4x256x256xf32> as #rows
  %p = tensor.pad %xs low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<8x4x256x256xf32> to tensor<8x4x258x258xf32>
  %e = tensor.empty() : tensor<8x8x256x256xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8x256x256xf32>) -> tensor<8x8x256x256xf32>
  %c = linalg.conv_2d_nchw_fchw
      {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<8x4x258x258xf32>, tensor<8x4x3x3xf32>)
      outs(%i : tensor<8x8x256x256xf32>) -> tensor<8x8x256x256xf32>
  return %c : tensor<8x8x256x256xf32>
}
