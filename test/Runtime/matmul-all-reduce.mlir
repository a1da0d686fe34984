// A [8x16] has rows on dp and K on mp, B [16x12] K on mp: the local matmul
// is a partial sum over mp, resolved by shard.all_reduce. The 4-rank result
// must equal @reference (the unpartitioned program) run on one rank.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-run %s --entry reference --output-dir %t/ref | FileCheck %s
// RUN: %mpirun -np 4 autoshard-run %s --output-dir %t/dist | FileCheck %s
// RUN: autoshard-run --compare %t/dist/output_0.npy %t/ref/output_0.npy --rtol 1e-5 | FileCheck %s --check-prefix=CMP
// The same with inputs from files (the reference's own seeded inputs are
// not used): numpy computes the expected product independently.
// RUN: %if numpy %{ %numpy_python %S/Inputs/npy_tool.py random %t/a.npy 8,16 float32 1 %}
// RUN: %if numpy %{ %numpy_python %S/Inputs/npy_tool.py random %t/b.npy 16,12 float32 2 %}
// RUN: %if numpy %{ %numpy_python %S/Inputs/npy_tool.py matmul %t/a.npy %t/b.npy %t/expected.npy %}
// RUN: %if numpy %{ %mpirun -np 4 autoshard-run %s --input a=%t/a.npy --input arg1=%t/b.npy --output-dir %t/files %}
// RUN: %if numpy %{ autoshard-run --compare %t/files/output_0.npy %t/expected.npy --rtol 1e-5 --atol 1e-5 | FileCheck %s --check-prefix=CMP %}

// CHECK: output 0 'result0': f32[8x12]
// CMP: MATCH f32[8x12]

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
  shard.grid @mesh(shape = 2x2)
  func.func @main(
      %a: tensor<4x8xf32> {dist.layout = #dist.layout<#mesh, [[dp], [mp]]>,
                           dist.global_type = tensor<8x16xf32>, dist.name = "a"},
      %b: tensor<8x12xf32> {dist.layout = #dist.layout<#mesh, [[mp], []]>,
                            dist.global_type = tensor<16x12xf32>})
      -> (tensor<4x12xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>,
                            dist.global_type = tensor<8x12xf32>}) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x12xf32>
    %c0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x12xf32>) -> tensor<4x12xf32>
    %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x12xf32>)
                       outs(%c0 : tensor<4x12xf32>) -> tensor<4x12xf32>
    %c = shard.all_reduce %p on @mesh grid_axes = [1] : tensor<4x12xf32> -> tensor<4x12xf32>
    return %c : tensor<4x12xf32>
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
