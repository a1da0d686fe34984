// A vocabulary-parallel embedding (Megatron): the table's rows are split over
// mp, so each device looks up only its rows and the result is a partial sum.
// The vocabulary (8) is small so the seeded ids (0..7) hit every device's rows.
// test/Driver/Inputs/embedding.mlir with the table and the projection marked
// trainable (`dist.param`; `w` too, else the training step would take it as a
// data input and split it over the data axis) and named, for
// test/Train/matrix-embedding.test.
#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%ids: tensor<4x6xi64> {dist.name = "ids"}, %table: tensor<8x16xf32> {dist.name = "table", dist.param}, %w: tensor<16x12xf32> {dist.name = "w", dist.param}) -> tensor<4x6x12xf32> {
    %ids_s = dist.annotate %ids : tensor<4x6xi64> as #dist.layout<#mesh, [[dp], []]>
    %table_s = dist.annotate %table : tensor<8x16xf32> as #dist.layout<#mesh, [[mp], []]>
    %w_s = dist.annotate %w : tensor<16x12xf32> as #dist.layout<#mesh, [[], [mp]]>
    %idx = tensor.expand_shape %ids_s [[0], [1, 2]] output_shape [4, 6, 1] : tensor<4x6xi64> into tensor<4x6x1xi64>
    // Pinning the lookup's strategy keeps it vocabulary-parallel even where
    // gathering this small table would be cheaper.
    %emb = tensor.gather %table_s[%idx] gather_dims([0]) {dist.strategy = #dist.strategy<#mesh, in = [[[mp], []], [[dp], [], []]]>} : (tensor<8x16xf32>, tensor<4x6x1xi64>) -> tensor<4x6x16xf32>
    %flat = tensor.collapse_shape %emb [[0, 1], [2]] : tensor<4x6x16xf32> into tensor<24x16xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<24x12xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<24x12xf32>) -> tensor<24x12xf32>
    %mm = linalg.matmul ins(%flat, %w_s : tensor<24x16xf32>, tensor<16x12xf32>) outs(%init : tensor<24x12xf32>) -> tensor<24x12xf32>
    %out = tensor.expand_shape %mm [[0, 1], [2]] output_shape [4, 6, 12] : tensor<24x12xf32> into tensor<4x6x12xf32>
    return %out : tensor<4x6x12xf32>
  }
}
