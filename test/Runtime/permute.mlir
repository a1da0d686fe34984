// The axis swap [[dp], [mp]] -> [[mp], [dp]] on a 2x2 mesh is a
// dist.permute of positions 1 <-> 2; then an elementwise arith op on tensors.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-run %s --entry reference --output-dir %t/ref
// RUN: %mpirun -np 4 autoshard-run %s --output-dir %t/dist | FileCheck %s
// RUN: autoshard-run --compare %t/dist/output_0.npy %t/ref/output_0.npy | FileCheck %s --check-prefix=CMP

// CHECK: output 0 'result0': f32[8x8]
// CMP: MATCH f32[8x8]

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
  shard.grid @mesh(shape = 2x2)
  func.func @main(
      %x: tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], [mp]]>,
                           dist.global_type = tensor<8x8xf32>})
      -> (tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[mp], [dp]]>,
                           dist.global_type = tensor<8x8xf32>}) {
    %y = dist.permute %x on @mesh sources = [1, 2] targets = [2, 1] : tensor<4x4xf32>
    %z = arith.mulf %y, %y : tensor<4x4xf32>
    %w = arith.subf %z, %y : tensor<4x4xf32>
    return %w : tensor<4x4xf32>
  }

  func.func @reference(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %z = arith.mulf %x, %x : tensor<8x8xf32>
    %w = arith.subf %z, %x : tensor<8x8xf32>
    return %w : tensor<8x8xf32>
  }
}
