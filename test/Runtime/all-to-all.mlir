// Rows on mp -> columns on mp by shard.all_to_all, so a softmax over the
// rows (dim 0) runs locally; replicated over dp.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-run %s --entry reference --output-dir %t/ref
// RUN: %mpirun -np 4 autoshard-run %s --seed 7 --output-dir %t/dist | FileCheck %s
// RUN: autoshard-run %s --entry reference --seed 7 --output-dir %t/ref7
// RUN: autoshard-run --compare %t/dist/output_0.npy %t/ref7/output_0.npy | FileCheck %s --check-prefix=CMP
// Another seed gives other inputs:
// RUN: not autoshard-run --compare %t/ref/output_0.npy %t/ref7/output_0.npy | FileCheck %s --check-prefix=DIFF

// CHECK: output 0 'result0': f32[8x8]
// CMP: MATCH f32[8x8]
// DIFF: MISMATCH

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
  shard.grid @mesh(shape = 2x2)
  func.func @main(
      %x: tensor<4x8xf32> {dist.layout = #dist.layout<#mesh, [[mp], []]>,
                           dist.global_type = tensor<8x8xf32>})
      -> (tensor<8x4xf32> {dist.layout = #dist.layout<#mesh, [[], [mp]]>,
                           dist.global_type = tensor<8x8xf32>}) {
    %y = shard.all_to_all %x on @mesh grid_axes = [1] split_axis = 1 concat_axis = 0
        : tensor<4x8xf32> -> tensor<8x4xf32>
    %e = tensor.empty() : tensor<8x4xf32>
    %s = linalg.softmax dimension(0) ins(%y : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %s : tensor<8x4xf32>
  }

  func.func @reference(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %e = tensor.empty() : tensor<8x8xf32>
    %s = linalg.softmax dimension(0) ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %s : tensor<8x8xf32>
  }
}
