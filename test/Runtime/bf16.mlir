// bf16 end to end on 4 ranks: bf16 operands into an f32 GEMM, its partial
// sums over mp rounded to bf16 and all-reduced in bf16 (MPI user op: each
// pairwise add in f32, rounded to nearest even). Inputs and the output
// travel as float32 .npy (numpy has no bfloat16). numpy emulates every
// rounding and must match bit for bit; the unrounded product must not.
// REQUIRES: mpi, numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %numpy_python %S/Inputs/bf16_ref.py %t
// RUN: %mpirun -np 4 autoshard-run %s --input a=%t/a.npy --input b=%t/b.npy --output-dir %t/dist | FileCheck %s
// RUN: autoshard-run --compare %t/dist/output_0.npy %t/expected.npy --rtol 0 --atol 0 | FileCheck %s --check-prefix=CMP
// RUN: not autoshard-run --compare %t/dist/output_0.npy %t/exact.npy --rtol 0 --atol 0 | FileCheck %s --check-prefix=ROUNDED

// CHECK: output 0 'result0': bf16[8x12]
// CMP: MATCH f32[8x12]
// ROUNDED: MISMATCH

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
  shard.grid @mesh(shape = 2x2)
  func.func @main(
      %a: tensor<4x8xbf16> {dist.layout = #dist.layout<#mesh, [[dp], [mp]]>,
                            dist.global_type = tensor<8x16xbf16>, dist.name = "a"},
      %b: tensor<8x12xbf16> {dist.layout = #dist.layout<#mesh, [[mp], []]>,
                             dist.global_type = tensor<16x12xbf16>, dist.name = "b"})
      -> (tensor<4x12xbf16> {dist.layout = #dist.layout<#mesh, [[dp], []]>,
                             dist.global_type = tensor<8x12xbf16>}) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x12xf32>
    %c0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x12xf32>) -> tensor<4x12xf32>
    %p = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x12xbf16>)
                       outs(%c0 : tensor<4x12xf32>) -> tensor<4x12xf32>
    %ph = arith.truncf %p : tensor<4x12xf32> to tensor<4x12xbf16>
    %c = shard.all_reduce %ph on @mesh grid_axes = [1] : tensor<4x12xbf16> -> tensor<4x12xbf16>
    return %c : tensor<4x12xbf16>
  }
}
