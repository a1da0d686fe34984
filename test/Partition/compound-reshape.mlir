// A reshape may pass a split of a minor dim of a compound (merged) dim when
// every more major dim of the group is split down to one element per device,
// as ShardingRule::getLayouts allows: the merged dim's axes are then the
// concatenation of the group's axes, major dim first, and each device's
// block stays contiguous. Here [B, NH, D] with B = 2 over dp (one batch row
// per device) and NH = 4 over mp merges into [B*NH] over [dp, mp] and back.
// RUN: autoshard-opt %s --dist-partition | FileCheck %s
// RUN: autoshard-opt %s --dist-partition | FileCheck %s --check-prefix=LOCAL
// LOCAL-NOT: shard.all
// LOCAL-NOT: {{= dist\.}}
//
// The partitioned program computes what the single-device one does, on
// 8 ranks (dp=2, mp=4: one head per device) and on 4 ranks (dp=2, mp=2:
// two heads per device, still one batch row).
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard verify %s --work-dir %t/a | FileCheck %s --check-prefix=PASS
// RUN: sed 's/dp = 2, mp = 4/dp = 2, mp = 2/' %s > %t/mesh-2x2.mlir
// RUN: autoshard verify %t/mesh-2x2.mlir --work-dir %t/b | FileCheck %s --check-prefix=PASS
// PASS: autoshard verify: PASS

#mesh = #dist.mesh<[dp = 2, mp = 4]>
#map = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @collapse_batch_heads
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x8xf32> {{.*}}) -> (tensor<1x1x8xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<1x1x8xf32> into tensor<1x8xf32>
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<1x8xf32>)
// CHECK: linalg.index 0
// CHECK: arith.addi
// CHECK: %[[E:.*]] = tensor.expand_shape %[[T]] {{\[\[}}0, 1], [2]] output_shape [1, 1, 8] : tensor<1x8xf32> into tensor<1x1x8xf32>
// CHECK: return %[[E]] : tensor<1x1x8xf32>
module attributes {dist.mesh = #mesh} {
func.func @collapse_batch_heads(
    %x: tensor<2x4x8xf32> {dist.layout = #dist.layout<#mesh, [[dp], [mp], []]>})
    -> (tensor<2x4x8xf32> {dist.layout = #dist.layout<#mesh, [[dp], [mp], []]>}) {
  %one = arith.constant 1 : index
  %c = tensor.collapse_shape %x [[0, 1], [2]] {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp], []]], out = [[[dp, mp], []]]>}
      : tensor<2x4x8xf32> into tensor<8x8xf32>
  %e = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp, mp], []]]>} : tensor<8x8xf32>
  // Scale each merged row by its global index + 1: the index is offset by
  // the device's block of [dp, mp], so the merged layout must name the same
  // rows the [B, NH] layout does or the numbers come out wrong.
  %t = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>)
      attrs = {dist.strategy = #dist.strategy<#mesh, in = [[[dp, mp], []], [[dp, mp], []]], out = [[[dp, mp], []]]>} {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %i1 = arith.addi %i, %one : index
    %ii = arith.index_cast %i1 : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %r = arith.mulf %in, %fi : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %y = tensor.expand_shape %t [[0, 1], [2]] output_shape [2, 4, 8] {dist.strategy = #dist.strategy<#mesh, in = [[[dp, mp], []]], out = [[[dp], [mp], []]]>}
      : tensor<8x8xf32> into tensor<2x4x8xf32>
  return {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp], []]]>} %y : tensor<2x4x8xf32>
}
}
