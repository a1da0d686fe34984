// Rows split over [dp, mp]: an elementwise linalg.generic runs on the local
// rows, then the rows are gathered back two ways: over mp then dp (two
// shard.all_gather steps) and over both axes at once.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-run %s --entry reference --output-dir %t/ref
// RUN: %mpirun -np 4 autoshard-run %s --output-dir %t/dist | FileCheck %s
// RUN: autoshard-run --compare %t/dist/output_0.npy %t/ref/output_0.npy | FileCheck %s --check-prefix=CMP
// RUN: autoshard-run --compare %t/dist/output_1.npy %t/ref/output_0.npy | FileCheck %s --check-prefix=CMP

// CHECK: output 0 'result0': f32[8x6]
// CHECK: output 1 'result1': f32[8x6]
// CMP: MATCH f32[8x6]

#mesh = #dist.mesh<[dp = 2, mp = 2]>
#id = affine_map<(i, j) -> (i, j)>
module attributes {dist.mesh = #mesh} {
  shard.grid @mesh(shape = 2x2)
  func.func @main(
      %x: tensor<2x6xf32> {dist.layout = #dist.layout<#mesh, [[dp, mp], []]>,
                           dist.global_type = tensor<8x6xf32>})
      -> (tensor<8x6xf32> {dist.layout = #dist.layout<#mesh, [[], []]>,
                           dist.global_type = tensor<8x6xf32>},
          tensor<8x6xf32> {dist.layout = #dist.layout<#mesh, [[], []]>,
                           dist.global_type = tensor<8x6xf32>}) {
    %e = tensor.empty() : tensor<2x6xf32>
    %y = linalg.generic {indexing_maps = [#id, #id],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<2x6xf32>) outs(%e : tensor<2x6xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = math.tanh %a : f32
      %s = arith.mulf %t, %a : f32
      linalg.yield %s : f32
    } -> tensor<2x6xf32>
    %g1 = shard.all_gather %y on @mesh grid_axes = [1] gather_axis = 0 : tensor<2x6xf32> -> tensor<4x6xf32>
    %g2 = shard.all_gather %g1 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x6xf32> -> tensor<8x6xf32>
    %g3 = shard.all_gather %y on @mesh grid_axes = [0, 1] gather_axis = 0 : tensor<2x6xf32> -> tensor<8x6xf32>
    return %g2, %g3 : tensor<8x6xf32>, tensor<8x6xf32>
  }

  func.func @reference(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
    %e = tensor.empty() : tensor<8x6xf32>
    %y = linalg.generic {indexing_maps = [#id, #id],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = math.tanh %a : f32
      %s = arith.mulf %t, %a : f32
      linalg.yield %s : f32
    } -> tensor<8x6xf32>
    return %y : tensor<8x6xf32>
  }
}
