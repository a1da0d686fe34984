
#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
  // CHECK-LABEL: func.func @batch_passes
  // CHECK-SAME: -> (tensor<4x8x32xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}dp], [], [mp]]>})
  func.func @batch_passes(%x: tensor<4x8x16xf32>, %w: tensor<16x32xf32>) -> tensor<4x8x32xf32> {
    %xs = dist.annotate %x : tensor<4x8x16xf32> as #dist.layout<#mesh, [[dp], [], []]>
    %ws = dist.annotate %w : tensor<16x32xf32> as #dist.layout<#mesh, [[], [mp]]>
    // CHECK-NOT: dist.reshard
    // CHECK: tensor.collapse_shape {{.*}}dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], [], []]], out = {{\[\[}}[dp], []]]>
    %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
    %e = tensor.empty() : tensor<32x32xf32>
    // CHECK: linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], []], {{\[\[}}], [mp]], {{\[\[}}dp], [mp]]], out = {{\[\[}}[dp], [mp]]]>}
    %y = linalg.matmul ins(%c, %ws : tensor<32x16xf32>, tensor<16x32xf32>) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
    // CHECK: tensor.expand_shape {{.*}}dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], [mp]]], out = {{\[\[}}[dp], [], [mp]]]>
    // CHECK-NOT: dist.reshard
    %r = tensor.expand_shape %y [[0, 1], [2]] output_shape [4, 8, 32] : tensor<32x32xf32> into tensor<4x8x32xf32>
    return %r : tensor<4x8x32xf32>
  }

  // CHECK-LABEL: func.func @minor_split_stops
  func.func @minor_split_stops(%x: tensor<4x8x16xf32>) -> tensor<32x16xf32> {
    // The reshard's targets [[dp], [], [mp]] and [[], [], [dp, mp]] tie (one
    // all_gather over mp either way); the solver's order picks the latter.
    // CHECK: %[[X:.*]] = dist.annotate {{.*}}{{\[\[}}], [mp], []]>
    // CHECK-NEXT: %[[R:.*]] = dist.reshard %[[X]] : tensor<4x8x16xf32> from #dist.layout<#mesh, {{\[\[}}], [mp], []]> to #dist.layout<#mesh, {{\[\[}}], [], [dp, mp]]>
    // CHECK: tensor.collapse_shape %[[R]] {{.*}}dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[], [], [dp, mp]]], out = {{\[\[}}[], [dp, mp]]]>
    %xs = dist.annotate %x : tensor<4x8x16xf32> as #dist.layout<#mesh, [[], [mp], []]>
    %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
    return %c : tensor<32x16xf32>
  }
}
