// A tensor a linalg body reads with tensor.extract (a value defined above the
// op, not an operand) must be whole where the op runs: propagation exposes it
// as a replicated requirement (a dist.annotate marked autoshard.capture, right
// before the op), prices the reshard, and the partitioner all-gathers %table
// there. Before, the split %table was read with global indices on each rank's
// 4-element shard: i / 4 is always in range locally, so 4 ranks returned
// table[rank * 4 + i / 4] instead of table[i / 4], with no error.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-opt %s --dist-propagate | FileCheck %s --check-prefix=PROP
// RUN: autoshard-opt %s --dist-propagate | autoshard-opt --dist-propagate | FileCheck %s --check-prefix=TWICE
// RUN: autoshard-opt %s --dist-propagate --dist-partition | FileCheck %s --check-prefix=PART
// RUN: autoshard verify %s --ranks 4 --work-dir %t/v4 | FileCheck %s --check-prefix=OUT
// RUN: sed 's/x = 4/x = 2/' %s > %t/two.mlir
// RUN: autoshard verify %t/two.mlir --ranks 2 --work-dir %t/v2 | FileCheck %s --check-prefix=OUT

// PROP: %[[T:.*]] = dist.annotate %arg0 {{.*}} as #dist.layout<#mesh, {{\[\[}}x]]>
// PROP: %[[G:.*]] = dist.reshard %[[T]] {{.*}} from #dist.layout<#mesh, {{\[\[}}x]]> to #dist.layout<#mesh, {{\[\[}}]]>
// PROP: %[[C:.*]] = dist.annotate %[[G]] : tensor<16xf32> as #dist.layout<#mesh, {{\[\[}}]]> {autoshard.capture}
// PROP: linalg.generic
// PROP: tensor.extract %[[C]]

// TWICE-COUNT-1: autoshard.capture
// TWICE-NOT: autoshard.capture

// PART: %[[AG:.*]] = shard.all_gather %arg0 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<16xf32>
// PART: linalg.generic
// PART: tensor.extract %[[AG]]

// OUT: max abs err 0.000e+00
// OUT: autoshard verify: PASS

#mesh = #dist.mesh<[x = 4]>
#map = affine_map<(d0) -> (d0)>
module attributes {dist.mesh = #mesh} {
  func.func @main(%table: tensor<16xf32>, %x: tensor<16xf32>) -> tensor<16xf32> {
    %t = dist.annotate %table : tensor<16xf32> as #dist.layout<#mesh, [[x]]>
    %xs = dist.annotate %x : tensor<16xf32> as #dist.layout<#mesh, [[x]]>
    %e = tensor.empty() : tensor<16xf32>
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%xs : tensor<16xf32>) outs(%e : tensor<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %i = linalg.index 0 : index
      %c4 = arith.constant 4 : index
      %j = arith.divui %i, %c4 : index
      %v = tensor.extract %t[%j] : tensor<16xf32>
      %s = arith.addf %in, %v : f32
      linalg.yield %s : f32
    } -> tensor<16xf32>
    return %r : tensor<16xf32>
  }
}
