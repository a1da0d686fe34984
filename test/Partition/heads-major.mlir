// Attention's core in the heads-major reshape form: Q [B, S, NH, D] is
// transposed to [NH, B, S, D] and merged into batch_matmul's batch dim
// [NH*B]. With NH = 4 over mp (one head per device) and B = 4 over dp (two
// rows per device), heads on mp and batch on dp are the contiguous block
// [mp, dp] of the merged dim, so the core runs without a collective.
// RUN: autoshard-opt %s --dist-partition | FileCheck %s
// RUN: autoshard-opt %s --dist-partition | FileCheck %s --check-prefix=LOCAL
// LOCAL-NOT: shard.all
// LOCAL-NOT: {{= dist\.}}
//
// Numerics against the single-device program on 8 ranks (dp=2, mp=4) and
// 4 ranks (dp=1, mp=4).
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard verify %s --work-dir %t/a | FileCheck %s --check-prefix=PASS
// RUN: sed 's/dp = 2, mp = 4/dp = 1, mp = 4/' %s > %t/mesh-1x4.mlir
// RUN: autoshard verify %t/mesh-1x4.mlir --work-dir %t/b | FileCheck %s --check-prefix=PASS
// PASS: autoshard verify: PASS

#mesh = #dist.mesh<[dp = 2, mp = 4]>
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @heads_major
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x1x8xf32> {{.*}}) -> (tensor<2x8x1x8xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x8x1x8xf32>) outs(%{{.*}} : tensor<1x2x8x8xf32>) permutation = [2, 0, 1, 3]
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
// CHECK: %[[S:.*]] = linalg.batch_matmul ins(%[[C]], %[[C]] : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%{{.*}} : tensor<2x8x8xf32>)
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<2x8x8xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[G]] {{\[\[}}0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
// CHECK: %[[Y:.*]] = linalg.transpose ins(%[[E]] : tensor<1x2x8x8xf32>) outs(%{{.*}} : tensor<2x8x1x8xf32>) permutation = [1, 2, 0, 3]
// CHECK: return %[[Y]] : tensor<2x8x1x8xf32>
module attributes {dist.mesh = #mesh} {
func.func @heads_major(
    %x: tensor<4x8x4x8xf32> {dist.layout = #dist.layout<#mesh, [[dp], [], [mp], []]>})
    -> (tensor<4x8x4x8xf32> {dist.layout = #dist.layout<#mesh, [[dp], [], [mp], []]>}) {
  %cst = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1 : index
  %e0 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[mp], [dp], [], []]]>} : tensor<4x4x8x8xf32>
  %t = linalg.transpose ins(%x : tensor<4x8x4x8xf32>) outs(%e0 : tensor<4x4x8x8xf32>) permutation = [2, 0, 1, 3]
      {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [], [mp], []], [[mp], [dp], [], []]], out = [[[mp], [dp], [], []]]>}
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] {dist.strategy = #dist.strategy<#mesh, in = [[[mp], [dp], [], []]], out = [[[mp, dp], [], []]]>}
      : tensor<4x4x8x8xf32> into tensor<16x8x8xf32>
  %e1 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[mp, dp], [], []]]>} : tensor<16x8x8xf32>
  %f = linalg.fill {dist.strategy = #dist.strategy<#mesh, in = [[], [[mp, dp], [], []]], out = [[[mp, dp], [], []]]>}
      ins(%cst : f32) outs(%e1 : tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
  %s = linalg.batch_matmul {dist.strategy = #dist.strategy<#mesh, in = [[[mp, dp], [], []], [[mp, dp], [], []], [[mp, dp], [], []]], out = [[[mp, dp], [], []]]>}
      ins(%c, %c : tensor<16x8x8xf32>, tensor<16x8x8xf32>) outs(%f : tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
  // Scale each merged batch entry by its global index + 1, offset by the
  // device's block of [mp, dp] (mp major): wrong unless the merged layout
  // names the same entries as the [NH, B] one.
  %e3 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[mp, dp], [], []]]>} : tensor<16x8x8xf32>
  %g = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<16x8x8xf32>) outs(%e3 : tensor<16x8x8xf32>)
      attrs = {dist.strategy = #dist.strategy<#mesh, in = [[[mp, dp], [], []], [[mp, dp], [], []]], out = [[[mp, dp], [], []]]>} {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %i1 = arith.addi %i, %one : index
    %ii = arith.index_cast %i1 : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %r = arith.mulf %in, %fi : f32
    linalg.yield %r : f32
  } -> tensor<16x8x8xf32>
  %ex = tensor.expand_shape %g [[0, 1], [2], [3]] output_shape [4, 4, 8, 8] {dist.strategy = #dist.strategy<#mesh, in = [[[mp, dp], [], []]], out = [[[mp], [dp], [], []]]>}
      : tensor<16x8x8xf32> into tensor<4x4x8x8xf32>
  %e2 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], [], [mp], []]]>} : tensor<4x8x4x8xf32>
  %y = linalg.transpose ins(%ex : tensor<4x4x8x8xf32>) outs(%e2 : tensor<4x8x4x8xf32>) permutation = [1, 2, 0, 3]
      {dist.strategy = #dist.strategy<#mesh, in = [[[mp], [dp], [], []], [[dp], [], [mp], []]], out = [[[dp], [], [mp], []]]>}
  return {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [], [mp], []]]>} %y : tensor<4x8x4x8xf32>
}
}
