// GEMM epilogues (lib/Lower/GemmEpilogue.cpp, Contraction.cpp): a bias
// added along a GEMM's columns, then ReLU or GELU (tanh or erf form), fold
// into the GEMM instruction, also when they are a chain of ops (grouped
// before kernel fusion); a result with other readers and a bias along the
// rows do not, and a residual add after them stays. The fused program
// equals the unfused one (AUTOSHARD_GEMM_EPILOGUES=0) on one rank and
// after a round trip through a plan file, and partitioned on 4 ranks it
// equals one rank (there the pipeline merges the identical products x w4,
// whose result then has many readers: their epilogues do not fold).
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-run %s --print-plan --output-dir %t/fused | FileCheck %s
// RUN: env AUTOSHARD_GEMM_EPILOGUES=0 autoshard-run %s --print-plan --output-dir %t/plain | FileCheck %s --check-prefix=PLAIN
// RUN: for i in 0 1 2 3 4 5 6 7 8 9 10 11 12; do autoshard-run --compare %t/fused/output_$i.npy %t/plain/output_$i.npy --rtol 1e-6 --atol 1e-6 || exit 1; done | FileCheck %s --check-prefix=MATCH
// Through a plan file (epilogues stored by name): the same bytes.
// RUN: autoshard compile %s --lower-only -o %t/e.asplan
// RUN: autoshard-run %t/e.asplan --output-dir %t/plan
// RUN: for i in 0 1 2 3 4 5 6 7 8 9 10 11 12; do cmp %t/plan/output_$i.npy %t/fused/output_$i.npy || exit 1; done
// The partitioned program: the biases are the local slices of the columns.
// RUN: autoshard-opt %s --autoshard-pipeline -o %t/p4.mlir
// RUN: %mpirun -np 4 autoshard-run %t/p4.mlir --print-plan --output-dir %t/fused4 --timeout 60 | FileCheck %s --check-prefix=PART
// RUN: for i in 0 1 2 3 4 5 6 7 8 9 10 11 12; do autoshard-run --compare %t/fused4/output_$i.npy %t/fused/output_$i.npy --rtol 1e-5 --atol 1e-6 || exit 1; done | FileCheck %s --check-prefix=MATCH

// Layer 1: bias add and ReLU as two generics.
// CHECK: = matmul {{.*}} : f32[8x32] epilogue bias_relu
// Layer 2: a linalg.broadcast bias, linalg.add, GELU in the gen_models form.
// CHECK: = matmul {{.*}} : f32[8x16] epilogue bias_gelu
// Layer 3: the sum has two readers: only the bias folds.
// CHECK: = matmul {{.*}} : f32[8x24] epilogue bias{{$}}
// CHECK-NEXT: = generic
// The GEMM result is returned too: nothing folds.
// CHECK: = matmul {{.*}} : f32[8x16]{{$}}
// CHECK: = generic
// The erf GELU in one op (ONNX's Gelu).
// CHECK: = matmul {{.*}} : f32[8x16] epilogue gelu_erf
// A bias along the rows (M) is no cuBLASLt bias.
// CHECK: = matmul {{.*}} : f32[8x16]{{$}}
// CHECK: = generic
// batch_matmul with a bias and a fused add+ReLU body; GELU without a bias.
// CHECK: = batch_matmul {{.*}} : f32[2x4x6] epilogue bias_relu
// CHECK: = matmul {{.*}} epilogue gelu
// C held [N][M] is computed as B^T A^T: the bias along M is its columns.
// CHECK: = matmul {{.*}} : f32[16x8] epilogue bias_relu
// bf16 inputs, f32 accumulation (--precision bf16's contractions).
// CHECK: = matmul {{.*}} : f32[8x16] epilogue bias_gelu
// The erf GELU as a chain of six ops (the bias add read twice in it).
// CHECK: = matmul {{.*}} : f32[8x16] epilogue bias_gelu_erf
// Bias, ReLU, then a residual add (the loop nest that stays).
// CHECK: [[R:%[0-9]+]] = matmul {{.*}} : f32[8x16] epilogue bias_relu
// CHECK: = generic [[R]], %0,
// CHECK-NOT: = {{.*}} epilogue

// PLAIN-NOT: = {{.*}} epilogue

// PART: epilogue bias_relu
// PART: epilogue bias_gelu

// MATCH-COUNT-13: MATCH

#mesh = #dist.mesh<[dp = 2, mp = 2]>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#col3 = affine_map<(b, i, j) -> (j)>
#ka = affine_map<(m, n, k) -> (m, k)>
#kb = affine_map<(m, n, k) -> (k, n)>
#kct = affine_map<(m, n, k) -> (n, m)>
#kc = affine_map<(m, n, k) -> (m, n)>
module attributes {dist.mesh = #mesh} {
func.func @main(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>,
                %w2: tensor<32x16xf32>, %b2: tensor<16xf32>,
                %w3: tensor<16x24xf32>, %b3: tensor<24xf32>,
                %w4: tensor<16x16xf32>, %b4: tensor<16xf32>, %b8: tensor<8xf32>,
                %qa: tensor<2x4x8xf32>, %qb: tensor<2x8x6xf32>, %qbias: tensor<6xf32>,
                %ha: tensor<8x16xbf16>, %hb: tensor<16x16xbf16>)
    -> (tensor<8x16xf32>, tensor<8x24xf32>, tensor<8x24xf32>, tensor<8x16xf32>,
        tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<2x4x6xf32>,
        tensor<8x16xf32>, tensor<16x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>,
        tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %xs = dist.annotate %x : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []]>
  %w1s = dist.annotate %w1 : tensor<16x32xf32> as #dist.layout<#mesh, [[], [mp]]>
  %b1s = dist.annotate %b1 : tensor<32xf32> as #dist.layout<#mesh, [[mp]]>
  %w2s = dist.annotate %w2 : tensor<32x16xf32> as #dist.layout<#mesh, [[], [mp]]>

  // relu(x w1 + b1)
  %e1 = tensor.empty() : tensor<8x32xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %m1 = linalg.matmul ins(%xs, %w1s : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %s1 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %b1s : tensor<8x32xf32>, tensor<32xf32>) outs(%e1 : tensor<8x32xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %b, %a : f32
      linalg.yield %r : f32
  } -> tensor<8x32xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s1 : tensor<8x32xf32>) outs(%e1 : tensor<8x32xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %zero : f32
      linalg.yield %r : f32
  } -> tensor<8x32xf32>

  // gelu(h1 w2 + broadcast(b2))
  %e2 = tensor.empty() : tensor<8x16xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m2 = linalg.matmul ins(%h1, %w2s : tensor<8x32xf32>, tensor<32x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %bb2 = linalg.broadcast ins(%b2 : tensor<16xf32>) outs(%e2 : tensor<8x16xf32>) dimensions = [0]
  %s2 = linalg.add ins(%m2, %bb2 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %g2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s2 : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %c_half = arith.constant 5.000000000e-01 : f32
      %c_one = arith.constant 1.000000000e+00 : f32
      %c_k = arith.constant 4.471500000e-02 : f32
      %c_s = arith.constant 7.978845608e-01 : f32
      %x2 = arith.mulf %in0, %in0 : f32
      %x3 = arith.mulf %x2, %in0 : f32
      %kx3 = arith.mulf %c_k, %x3 : f32
      %inner = arith.addf %in0, %kx3 : f32
      %scaled = arith.mulf %c_s, %inner : f32
      %th = math.tanh %scaled : f32
      %onep = arith.addf %c_one, %th : f32
      %hx = arith.mulf %c_half, %in0 : f32
      %r = arith.mulf %hx, %onep : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>

  // s3 = g2 w3 + b3, read twice: relu(s3) and s3 itself.
  %e3 = tensor.empty() : tensor<8x24xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %m3 = linalg.matmul ins(%g2, %w3 : tensor<8x16xf32>, tensor<16x24xf32>) outs(%z3 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %s3 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m3, %b3 : tensor<8x24xf32>, tensor<24xf32>) outs(%e3 : tensor<8x24xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
  } -> tensor<8x24xf32>
  %r3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s3 : tensor<8x24xf32>) outs(%e3 : tensor<8x24xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %zero : f32
      linalg.yield %r : f32
  } -> tensor<8x24xf32>

  // x w4 returned as well as with its bias: two readers.
  %m4 = linalg.matmul ins(%x, %w4 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %s4 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m4, %b4 : tensor<8x16xf32>, tensor<16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>

  // The erf GELU of x w4 (ONNX's Gelu): no epilogue.
  %m5 = linalg.matmul ins(%x, %w4 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %g5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m5 : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %c_half = arith.constant 5.000000000e-01 : f32
      %c_one = arith.constant 1.000000000e+00 : f32
      %c_r = arith.constant 0.707106769 : f32
      %t = arith.mulf %a, %c_r : f32
      %e = math.erf %t : f32
      %p = arith.addf %e, %c_one : f32
      %h = arith.mulf %a, %c_half : f32
      %r = arith.mulf %h, %p : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>

  // A bias along the rows.
  %m6 = linalg.matmul ins(%x, %w4 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %s6 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m6, %b8 : tensor<8x16xf32>, tensor<8xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>

  // relu(qa qb + qbias) per batch entry, in one generic.
  %eq = tensor.empty() : tensor<2x4x6xf32>
  %zq = linalg.fill ins(%zero : f32) outs(%eq : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %mq = linalg.batch_matmul ins(%qa, %qb : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%zq : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %rq = linalg.generic {indexing_maps = [#id3, #col3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mq, %qbias : tensor<2x4x6xf32>, tensor<6xf32>) outs(%eq : tensor<2x4x6xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
  } -> tensor<2x4x6xf32>

  // GELU with no bias (x * 0.5 * (1 + tanh(...)), x^3 as powf).
  %m7 = linalg.matmul ins(%x, %w4 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %g7 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m7 : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %c_half = arith.constant 5.000000000e-01 : f32
      %c_one = arith.constant 1.000000000e+00 : f32
      %c_three = arith.constant 3.000000000e+00 : f32
      %c_k = arith.constant 4.471500000e-02 : f32
      %c_s = arith.constant 0.797884583 : f32
      %a3 = math.powf %a, %c_three : f32
      %ka3 = arith.mulf %a3, %c_k : f32
      %in = arith.addf %ka3, %a : f32
      %sc = arith.mulf %in, %c_s : f32
      %th = math.tanh %sc : f32
      %p = arith.addf %th, %c_one : f32
      %h = arith.mulf %a, %c_half : f32
      %r = arith.mulf %h, %p : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>
  // (x w4)^T held [n][m] plus a bias along m (the rows of x), then ReLU.
  %et = tensor.empty() : tensor<16x8xf32>
  %zt = linalg.fill ins(%zero : f32) outs(%et : tensor<16x8xf32>) -> tensor<16x8xf32>
  %mt = linalg.generic {indexing_maps = [#ka, #kb, #kct], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w4 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%zt : tensor<16x8xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
  } -> tensor<16x8xf32>
  %rt = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mt, %b8 : tensor<16x8xf32>, tensor<8xf32>) outs(%et : tensor<16x8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
  } -> tensor<16x8xf32>

  // bf16 x bf16 -> f32 (the body extends the inputs) plus b4, GELU.
  %mh = linalg.generic {indexing_maps = [#ka, #kb, #kc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ha, %hb : tensor<8x16xbf16>, tensor<16x16xbf16>) outs(%z2 : tensor<8x16xf32>) {
    ^bb0(%a: bf16, %b: bf16, %c: f32):
      %ea = arith.extf %a : bf16 to f32
      %eb = arith.extf %b : bf16 to f32
      %p = arith.mulf %ea, %eb : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %gh = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mh, %b4 : tensor<8x16xf32>, tensor<16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %c_half = arith.constant 5.000000000e-01 : f32
      %c_one = arith.constant 1.000000000e+00 : f32
      %c_k = arith.constant 4.471500000e-02 : f32
      %c_s = arith.constant 7.978845608e-01 : f32
      %in0 = arith.addf %a, %b : f32
      %x2 = arith.mulf %in0, %in0 : f32
      %x3 = arith.mulf %x2, %in0 : f32
      %kx3 = arith.mulf %c_k, %x3 : f32
      %inner = arith.addf %in0, %kx3 : f32
      %scaled = arith.mulf %c_s, %inner : f32
      %th = math.tanh %scaled : f32
      %onep = arith.addf %c_one, %th : f32
      %hx = arith.mulf %c_half, %in0 : f32
      %r = arith.mulf %hx, %onep : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>

  // The erf GELU of x w4 + b4 spread over one op each (the ONNX exporter's
  // Add, Div, Erf, Add, Mul, Mul; here 1/sqrt(2) as a math.sqrt): the
  // chain becomes one op before kernel fusion and folds.
  %m9 = linalg.matmul ins(%x, %w4 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %s9 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m9, %b4 : tensor<8x16xf32>, tensor<16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %d9 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s9 : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %c_two = arith.constant 2.000000000e+00 : f32
      %q = math.sqrt %c_two : f32
      %r = arith.divf %a, %q : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %f9 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d9 : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.erf %a : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %p9 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%f9 : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %c_one = arith.constant 1.000000000e+00 : f32
      %r = arith.addf %a, %c_one : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %q9 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s9, %p9 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.mulf %a, %b : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %g9 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q9 : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %c_half = arith.constant 5.000000000e-01 : f32
      %r = arith.mulf %a, %c_half : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>

  // relu(x w4 + b4) + x: the bias and ReLU fold, the residual add stays a
  // loop nest of its own.
  %m10 = linalg.matmul ins(%x, %w4 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %s10 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m10, %b4 : tensor<8x16xf32>, tensor<16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %r10 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s10 : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %zero : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %y10 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r10, %x : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>
  return %g2, %s3, %r3, %m4, %s4, %g5, %s6, %rq, %g7, %rt, %gh, %g9, %y10
      : tensor<8x16xf32>, tensor<8x24xf32>, tensor<8x24xf32>, tensor<8x16xf32>,
        tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<2x4x6xf32>,
        tensor<8x16xf32>, tensor<16x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>,
        tensor<8x16xf32>
}
}
