#mesh = #dist.mesh<[h = 4]>
#rows = #dist.layout<#mesh, [[], [], [h], []]>
#whole = #dist.layout<#mesh, [[], [], [], []]>

func.func @convs(%x: tensor<2x4x16x16xf32>, %w1: tensor<8x4x3x3xf32>,
                 %w2: tensor<8x8x3x3xf32>) -> tensor<2x8x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %xs = dist.annotate %x : tensor<2x4x16x16xf32> as #rows
  %p1 = tensor.pad %xs low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<2x4x16x16xf32> to tensor<2x4x18x18xf32>
  %e1 = tensor.empty() : tensor<2x8x16x16xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %c1 = linalg.conv_2d_nchw_fchw
      {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
       dist.strategy = #dist.strategy<#mesh, in = [[[], [], [], []], [[], [], [], []]], out = [[[], [], [h], []]]>}
      ins(%p1, %w1 : tensor<2x4x18x18xf32>, tensor<8x4x3x3xf32>)
      outs(%i1 : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %p2 = tensor.pad %c1 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<2x8x16x16xf32> to tensor<2x8x18x18xf32>
  %e2 = tensor.empty() : tensor<2x8x8x8xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw
      {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>,
       dist.strategy = #dist.strategy<#mesh, in = [[[], [], [], []], [[], [], [], []]], out = [[[], [], [h], []]]>}
      ins(%p2, %w2 : tensor<2x8x18x18xf32>, tensor<8x8x3x3xf32>)
      outs(%i2 : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %e3 = tensor.empty() : tensor<2x8x4x4xf32>
  %i3 = linalg.fill ins(%ninf : f32) outs(%e3 : tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %m = linalg.pooling_nchw_max
      {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>,
       dist.strategy = #dist.strategy<#mesh, in = [[[], [], [], []], [[], []]], out = [[[], [], [h], []]]>}
      ins(%c2, %win : tensor<2x8x8x8xf32>, tensor<2x2xf32>)
      outs(%i3 : tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %r = dist.annotate %m : tensor<2x8x4x4xf32> as #rows
  return %r : tensor<2x8x4x4xf32>
}

func.func @replicated(%x: tensor<2x4x16x16xf32>, %w1: tensor<8x4x3x3xf32>) -> tensor<2x8x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %xs = dist.annotate %x : tensor<2x4x16x16xf32> as #whole
  %p1 = tensor.pad %xs low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<2x4x16x16xf32> to tensor<2x4x18x18xf32>
  %e1 = tensor.empty() : tensor<2x8x16x16xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %c1 = linalg.conv_2d_nchw_fchw
      {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
       dist.strategy = #dist.strategy<#mesh, in = [[[], [], [], []], [[], [], [], []]], out = [[[], [], [h], []]]>}
      ins(%p1, %w1 : tensor<2x4x18x18xf32>, tensor<8x4x3x3xf32>)
      outs(%i1 : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %r = dist.annotate %c1 : tensor<2x8x16x16xf32> as #rows
  return %r : tensor<2x8x16x16xf32>
}
