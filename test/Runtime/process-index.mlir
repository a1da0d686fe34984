// Rank-dependent offsets: each device slices its rows of a replicated input
// at shard.process_multi_index * 4 (tensor.extract_slice with a dynamic
// offset). dist.make_partial turns the replicated sum over mp into a
// partial-sum output that the assembly reduces again; an all_slice cuts
// columns on mp.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-run %s --entry reference --output-dir %t/ref
// RUN: %mpirun -np 4 autoshard-run %s --output-dir %t/dist | FileCheck %s
// RUN: autoshard-run --compare %t/dist/output_0.npy %t/ref/output_0.npy | FileCheck %s --check-prefix=CMP
// RUN: autoshard-run --compare %t/dist/output_1.npy %t/ref/output_1.npy | FileCheck %s --check-prefix=CMP

// CHECK: output 0 'result0': f32[8x4]
// CHECK: output 1 'result1': f32[8x4]
// CMP: MATCH f32[8x4]

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
  shard.grid @mesh(shape = 2x2)
  func.func @main(
      %x: tensor<8x4xf32> {dist.layout = #dist.layout<#mesh, [[], []]>,
                           dist.global_type = tensor<8x4xf32>})
      -> (tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []] partial sum [mp]>,
                           dist.global_type = tensor<8x4xf32>},
          tensor<4x2xf32> {dist.layout = #dist.layout<#mesh, [[dp], [mp]]>,
                           dist.global_type = tensor<8x4xf32>}) {
    %i = shard.process_multi_index on @mesh axes = [0] : index
    %c4 = arith.constant 4 : index
    %off = arith.muli %i, %c4 : index
    %rows = tensor.extract_slice %x[%off, 0] [4, 4] [1, 1] : tensor<8x4xf32> to tensor<4x4xf32>
    %p = dist.make_partial %rows on @mesh grid_axes = [1] reduction = sum : tensor<4x4xf32>
    %cols = shard.all_slice %rows on @mesh grid_axes = [1] slice_axis = 1 : tensor<4x4xf32> -> tensor<4x2xf32>
    return %p, %cols : tensor<4x4xf32>, tensor<4x2xf32>
  }

  func.func @reference(%x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
    return %x, %x : tensor<8x4xf32>, tensor<8x4xf32>
  }
}
