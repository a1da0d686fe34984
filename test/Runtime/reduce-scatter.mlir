// The partial-sum matmul of matmul-all-reduce.mlir resolved by a
// shard.reduce_scatter on dim 1 instead: the result stays split [[dp], [mp]].
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-run %s --entry reference --output-dir %t/ref
// RUN: %mpirun -np 4 autoshard-run %s --output-dir %t/dist | FileCheck %s
// RUN: autoshard-run --compare %t/dist/output_0.npy %t/ref/output_0.npy --rtol 1e-5 | FileCheck %s --check-prefix=CMP

// CHECK: output 0 'result0': f32[8x12]
// CMP: MATCH f32[8x12]

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
  shard.grid @mesh(shape = 2x2)
  func.func @main(
      %a: tensor<4x8xf32> {dist.layout = #dist.layout<#mesh, [[dp], [mp]]>,
                           dist.global_type = tensor<8x16xf32>},
      %b: tensor<8x12xf32> {dist.layout = #dist.layout<#mesh, [[mp], []]>,
                            dist.global_type = tensor<16x12xf32>})
      -> (tensor<4x6xf32> {dist.layout = #dist.layout<#mesh, [[dp], [mp]]>,
                           dist.global_type = tensor<8x12xf32>}) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x12xf32>
    %c0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x12xf32>) -> tensor<4x12xf32>
    %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x12xf32>)
                       outs(%c0 : tensor<4x12xf32>) -> tensor<4x12xf32>
    %c = shard.reduce_scatter %p on @mesh grid_axes = [1] scatter_axis = 1 : tensor<4x12xf32> -> tensor<4x6xf32>
    return %c : tensor<4x6xf32>
  }

  func.func @reference(%a: tensor<8x16xf32>, %b: tensor<16x12xf32>) -> tensor<8x12xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x12xf32>
    %c0 = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
    %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x12xf32>)
                       outs(%c0 : tensor<8x12xf32>) -> tensor<8x12xf32>
    return %c : tensor<8x12xf32>
  }
}
