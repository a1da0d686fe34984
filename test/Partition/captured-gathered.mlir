// A hand-written partitioned program whose linalg body reads a tensor it
// captures (tensor.extract of %whole) after resharding it to replicated:
// --dist-partition all-gathers it and 4 ranks equal the global program on
// one rank exactly. Leaving the capture split is an error
// (captured-split.mlir).
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-opt %s --dist-partition -o %t/part.mlir
// RUN: FileCheck %s --check-prefix=PART < %t/part.mlir
// RUN: autoshard-run %s --output-dir %t/ref > /dev/null
// RUN: %mpirun -np 4 autoshard-run %t/part.mlir --output-dir %t/dist > /dev/null
// RUN: autoshard-run --compare %t/dist/output_0.npy %t/ref/output_0.npy --rtol 0 --atol 0 | FileCheck %s

// PART: %[[AG:.*]] = shard.all_gather %arg0 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<16xf32>
// PART: linalg.generic
// PART: tensor.extract %[[AG]]
// CHECK: MATCH

#map = affine_map<(d0) -> (d0)>
#mesh = #dist.mesh<[x = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%table: tensor<16xf32> {dist.layout = #dist.layout<#mesh, [[x]]>},
                  %x: tensor<16xf32> {dist.layout = #dist.layout<#mesh, [[x]]>})
      -> (tensor<16xf32> {dist.layout = #dist.layout<#mesh, [[x]]>}) {
    %whole = dist.reshard %table : tensor<16xf32> from #dist.layout<#mesh, [[x]]> to #dist.layout<#mesh, [[]]>
    %e = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[x]]]>} : tensor<16xf32>
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>)
        attrs = {dist.strategy = #dist.strategy<#mesh, in = [[[x]], [[x]]], out = [[[x]]]>} {
    ^bb0(%in: f32, %out: f32):
      %i = linalg.index 0 : index
      %c4 = arith.constant 4 : index
      %j = arith.divui %i, %c4 : index
      %v = tensor.extract %whole[%j] : tensor<16xf32>
      %s = arith.addf %in, %v : f32
      linalg.yield %s : f32
    } -> tensor<16xf32>
    return %r : tensor<16xf32>
  }
}
