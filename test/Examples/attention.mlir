// The self-attention generator, reshape form (what importers produce):
// QKV projections, heads split out and moved in front of the batch, scaled
// QK^T, softmax, .V, heads merged, output projection. Heads on mp, batch on dp.
// RUN: %python %autoshard_src/scripts/gen_models.py attention --batch 2 --seq 8 --heads 4 --head-dim 16 \
// RUN:   | autoshard-opt | FileCheck %s
// RUN: %python %autoshard_src/scripts/gen_models.py attention --batch 2 --seq 8 --heads 4 --head-dim 16 --causal \
// RUN:   | autoshard-opt | FileCheck %s --check-prefix=CAUSAL

// CHECK: module attributes {dist.mesh = #mesh}
// CHECK: func.func @main(%[[X:[a-z0-9_]+]]: tensor<2x8x64xf32>, %[[WQ:[a-z0-9_]+]]: tensor<64x64xf32>, %[[WK:[a-z0-9_]+]]: tensor<64x64xf32>, %[[WV:[a-z0-9_]+]]: tensor<64x64xf32>, %[[WO:[a-z0-9_]+]]: tensor<64x64xf32>) -> tensor<2x8x64xf32>
// CHECK-DAG: %[[AX:.*]] = dist.annotate %[[X]] : tensor<2x8x64xf32> as #dist.layout<#mesh, {{\[\[}}dp], [], []]>
// CHECK-DAG: %[[AQ:.*]] = dist.annotate %[[WQ]] : tensor<64x64xf32> as #dist.layout<#mesh, {{\[\[}}], [mp]]>
// CHECK-DAG: %[[AK:.*]] = dist.annotate %[[WK]] : tensor<64x64xf32> as #dist.layout<#mesh, {{\[\[}}], [mp]]>
// CHECK-DAG: %[[AV:.*]] = dist.annotate %[[WV]] : tensor<64x64xf32> as #dist.layout<#mesh, {{\[\[}}], [mp]]>
// CHECK-DAG: %[[AO:.*]] = dist.annotate %[[WO]] : tensor<64x64xf32> as #dist.layout<#mesh, {{\[\[}}mp], []]>
// CHECK: %[[T:.*]] = tensor.collapse_shape %[[AX]] {{\[\[}}0, 1], [2]] : tensor<2x8x64xf32> into tensor<16x64xf32>
// Q: [B*S, E] -> [B, S, NH, D] -> [NH, B, S, D] -> [NH*B, S, D] (heads-major)
// CHECK: %[[Q:.*]] = linalg.matmul ins(%[[T]], %[[AQ]] : tensor<16x64xf32>, tensor<64x64xf32>)
// CHECK: %[[Q4:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0, 1], [2, 3]] output_shape [2, 8, 4, 16] : tensor<16x64xf32> into tensor<2x8x4x16xf32>
// CHECK: %[[QT:.*]] = linalg.transpose ins(%[[Q4]] : tensor<2x8x4x16xf32>) outs(%{{.*}} : tensor<4x2x8x16xf32>) permutation = [2, 0, 1, 3]
// CHECK: %[[QB:.*]] = tensor.collapse_shape %[[QT]] {{\[\[}}0, 1], [2], [3]] : tensor<4x2x8x16xf32> into tensor<8x8x16xf32>
// K is transposed for QK^T: [NH, B, D, S].
// CHECK: %[[K:.*]] = linalg.matmul ins(%[[T]], %[[AK]]
// CHECK: %[[K4:.*]] = tensor.expand_shape %[[K]]
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[K4]] : tensor<2x8x4x16xf32>) outs(%{{.*}} : tensor<4x2x16x8xf32>) permutation = [2, 0, 3, 1]
// CHECK: %[[KB:.*]] = tensor.collapse_shape %[[KT]] {{.*}} into tensor<8x16x8xf32>
// CHECK: %[[V:.*]] = linalg.matmul ins(%[[T]], %[[AV]]
// CHECK: %[[VB:.*]] = tensor.collapse_shape {{.*}} into tensor<8x8x16xf32>
// CHECK: %[[S:.*]] = linalg.batch_matmul ins(%[[QB]], %[[KB]] : tensor<8x8x16xf32>, tensor<8x16x8xf32>) outs(%{{.*}} : tensor<8x8x8xf32>)
// 1/sqrt(16)
// CHECK: %[[SC:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<8x8x8xf32>)
// CHECK: arith.constant 2.500000e-01 : f32
// CHECK: %[[P:.*]] = linalg.softmax dimension(2) ins(%[[SC]] : tensor<8x8x8xf32>)
// CHECK: %[[C:.*]] = linalg.batch_matmul ins(%[[P]], %[[VB]] : tensor<8x8x8xf32>, tensor<8x8x16xf32>) outs(%{{.*}} : tensor<8x8x16xf32>)
// CHECK: %[[C4:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0, 1], [2], [3]] output_shape [4, 2, 8, 16]
// CHECK: %[[CT:.*]] = linalg.transpose ins(%[[C4]] : tensor<4x2x8x16xf32>) outs(%{{.*}} : tensor<2x8x4x16xf32>) permutation = [1, 2, 0, 3]
// CHECK: %[[CM:.*]] = tensor.collapse_shape %[[CT]] {{\[\[}}0, 1], [2, 3]] : tensor<2x8x4x16xf32> into tensor<16x64xf32>
// CHECK: %[[O:.*]] = linalg.matmul ins(%[[CM]], %[[AO]] : tensor<16x64xf32>, tensor<64x64xf32>)
// CHECK: %[[R:.*]] = tensor.expand_shape %[[O]] {{\[\[}}0, 1], [2]] output_shape [2, 8, 64]
// CHECK: return %[[R]] : tensor<2x8x64xf32>

// The causal mask: 0 on and below the diagonal, -1e9 above, broadcast over
// batch*heads and added to the scaled scores.
// CAUSAL: %[[M:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, -1.000000e+09, -1.000000e+09, -1.000000e+09, -1.000000e+09, -1.000000e+09, -1.000000e+09, -1.000000e+09], [0.000000e+00, 0.000000e+00, -1.000000e+09,
// CAUSAL-SAME: [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<8x8xf32>
// CAUSAL: linalg.generic {{.*}} ins(%{{.*}}, %[[M]] : tensor<8x8x8xf32>, tensor<8x8xf32>)
// CAUSAL: linalg.softmax
