// Multiply-accumulate linalg.generics run as GEMMs (lib/Lower/Contraction.cpp):
// the plan has Matmul/BatchMatmul and no interpreted loop nest, transposed
// operands fold into transA/transB (no Transpose), a result whose dims do
// not group is packed once; each output equals the loop-nest evaluator's
// (--gemm-contractions=false) on the same seeded inputs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-run %s --print-plan --output-dir %t/gemm | FileCheck %s
// RUN: autoshard-run %s --gemm-contractions=false --print-plan --output-dir %t/loops | FileCheck %s --check-prefix=LOOPS
// RUN: autoshard-run --compare %t/gemm/output_0.npy %t/loops/output_0.npy --rtol 1e-5 --atol 1e-6
// RUN: autoshard-run --compare %t/gemm/output_1.npy %t/loops/output_1.npy --rtol 1e-5 --atol 1e-6
// RUN: autoshard-run --compare %t/gemm/output_2.npy %t/loops/output_2.npy --rtol 1e-5 --atol 1e-6
// RUN: autoshard-run --compare %t/gemm/output_3.npy %t/loops/output_3.npy --rtol 1e-5 --atol 1e-6
// RUN: autoshard-run --compare %t/gemm/output_4.npy %t/loops/output_4.npy --rtol 1e-5 --atol 1e-6
// RUN: autoshard-run --compare %t/gemm/output_5.npy %t/loops/output_5.npy --rtol 1e-5 --atol 1e-6
// RUN: autoshard-run --compare %t/gemm/output_6.npy %t/loops/output_6.npy --rtol 1e-12 --atol 1e-12

// CHECK-NOT: generic
// The importer's rank-3 x rank-2 MatMul: one GEMM over the 2x3 rows.
// CHECK: = matmul {{.*}} : f32[6x5]
// CHECK-NOT: transpose
// Attention: Q K^T (K transposed per batch entry), then A V.
// CHECK: = batch_matmul {{.*}} : f32[6x4x5]
// CHECK-NOT: transpose
// CHECK: = batch_matmul {{.*}} : f32[6x4x6]
// Heads merged into the sequence (bhqd -> bqhd): the zero init is made in
// [b][h][q][d] order (the module's fill does not run) and the result
// transposed once.
// CHECK-NOT: transpose
// CHECK-NOT: fill {{.*}} : f32[2x4x3x6]
// CHECK: = fill {{.*}} : f32[6x4x6]
// CHECK-NOT: transpose
// CHECK: = batch_matmul {{.*}} : f32[6x4x6]
// CHECK: = transpose {{.*}} : f32[2x4x3x6]
// A weight broadcast over the batch (bhsd,hde->bhse): heads lead, so x is
// packed [h][b][s][d] and the result unpacked.
// CHECK: = transpose {{.*}} : f32[3x2x4x6]
// CHECK: = batch_matmul {{.*}} : f32[3x8x7]
// CHECK: = transpose {{.*}} : f32[2x3x4x7]
// Gemm with transB (A B^T).
// CHECK-NOT: transpose
// CHECK: = matmul {{.*}} : f32[4x5]
// f64, the result held [N][M]: computed as B^T A^T.
// CHECK-NOT: transpose
// CHECK: = matmul {{.*}} : f64[2x3]
// CHECK-NOT: transpose
// CHECK: output %{{.*}} 'result6'

// LOOPS-COUNT-7: generic
// LOOPS-NOT: matmul

#x = affine_map<(b, s, n, k) -> (b, s, k)>
#w = affine_map<(b, s, n, k) -> (k, n)>
#xw = affine_map<(b, s, n, k) -> (b, s, n)>
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#pvt = affine_map<(b, h, i, d, j) -> (b, i, h, d)>
#xb = affine_map<(b, h, s, e, d) -> (b, h, s, d)>
#wb = affine_map<(b, h, s, e, d) -> (h, d, e)>
#xwb = affine_map<(b, h, s, e, d) -> (b, h, s, e)>
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#bn = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#ct = affine_map<(m, n, k) -> (n, m)>
func.func @main(%x: tensor<2x3x4xf32>, %w: tensor<4x5xf32>,
                %q: tensor<2x3x4x6xf32>, %k: tensor<2x3x5x6xf32>,
                %p: tensor<2x3x4x5xf32>, %v: tensor<2x3x5x6xf32>,
                %wb: tensor<3x6x7xf32>,
                %ma: tensor<4x6xf32>, %mb: tensor<5x6xf32>,
                %da: tensor<3x4xf64>, %db: tensor<4x2xf64>, %dc: tensor<2x3xf64>)
    -> (tensor<2x3x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x6xf32>,
        tensor<2x4x3x6xf32>, tensor<2x3x4x7xf32>, tensor<4x5xf32>,
        tensor<2x3xf64>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x3x5xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %r0 = linalg.generic {indexing_maps = [#x, #w, #xw], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x3x4xf32>, tensor<4x5xf32>) outs(%z0 : tensor<2x3x5xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.mulf %in, %in_1 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x3x5xf32>

  %e1 = tensor.empty() : tensor<2x3x4x5xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  %r1 = linalg.generic {indexing_maps = [#q, #k, #qk], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x4x6xf32>, tensor<2x3x5x6xf32>) outs(%z1 : tensor<2x3x4x5xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.mulf %in, %in_1 : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<2x3x4x5xf32>

  %e2 = tensor.empty() : tensor<2x3x4x6xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3x4x6xf32>) -> tensor<2x3x4x6xf32>
  %r2 = linalg.generic {indexing_maps = [#p, #v, #pv], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x3x4x5xf32>, tensor<2x3x5x6xf32>) outs(%z2 : tensor<2x3x4x6xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.mulf %in_1, %in : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x3x4x6xf32>

  %e3 = tensor.empty() : tensor<2x4x3x6xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x4x3x6xf32>) -> tensor<2x4x3x6xf32>
  %r3 = linalg.generic {indexing_maps = [#p, #v, #pvt], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x3x4x5xf32>, tensor<2x3x5x6xf32>) outs(%z3 : tensor<2x4x3x6xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.mulf %in, %in_1 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x3x6xf32>

  %e4 = tensor.empty() : tensor<2x3x4x7xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<2x3x4x7xf32>) -> tensor<2x3x4x7xf32>
  %r4 = linalg.generic {indexing_maps = [#xb, #wb, #xwb], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %wb : tensor<2x3x4x6xf32>, tensor<3x6x7xf32>) outs(%z4 : tensor<2x3x4x7xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.mulf %in, %in_1 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x3x4x7xf32>

  %e5 = tensor.empty() : tensor<4x5xf32>
  %z5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r5 = linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ma, %mb : tensor<4x6xf32>, tensor<5x6xf32>) outs(%z5 : tensor<4x5xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.mulf %in, %in_1 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x5xf32>

  %r6 = linalg.generic {indexing_maps = [#a, #bn, #ct], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%da, %db : tensor<3x4xf64>, tensor<4x2xf64>) outs(%dc : tensor<2x3xf64>) {
  ^bb0(%in: f64, %in_1: f64, %out: f64):
    %0 = arith.mulf %in, %in_1 : f64
    %1 = arith.addf %out, %0 : f64
    linalg.yield %1 : f64
  } -> tensor<2x3xf64>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6
      : tensor<2x3x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x6xf32>,
        tensor<2x4x3x6xf32>, tensor<2x3x4x7xf32>, tensor<4x5xf32>,
        tensor<2x3xf64>
}
