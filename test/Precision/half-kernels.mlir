// Compiled bf16/f16 loop nests (lib/Lower/HalfEmulation.cpp): a LayerNorm-
// like row program on bf16 storage (widen, f32 sums, a bf16-accumulated
// max, math on bf16, truncf back) and an f16 elementwise chain. Every nest
// is compiled (--print-plan), and the compiled outputs equal the
// interpreted ones bit for bit.
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-run %s --kernels=compiled --print-plan --output-dir %t/c | FileCheck %s
// RUN: autoshard-run %s --kernels=interpreted --print-plan --output-dir %t/i | FileCheck %s --check-prefix=INTERP
// RUN: autoshard-run --compare %t/c/output_0.npy %t/i/output_0.npy --rtol 0 --atol 0 | FileCheck %s --check-prefix=CMP
// RUN: autoshard-run --compare %t/c/output_1.npy %t/i/output_1.npy --rtol 0 --atol 0 | FileCheck %s --check-prefix=CMP
// RUN: autoshard-run --compare %t/c/output_2.npy %t/i/output_2.npy --rtol 0 --atol 0 | FileCheck %s --check-prefix=CMP

// CHECK: kernels {{.*}}autoshard-{{[0-9a-f]+}}.so
// CHECK-DAG: = generic %{{.*}} : bf16[64x96] compiled @autoshard_kernel_
// CHECK-DAG: = generic %{{.*}} : bf16[64] compiled @autoshard_kernel_
// CHECK-DAG: = generic %{{.*}} : f16[64x96] compiled @autoshard_kernel_
// CHECK-NOT: interpreted
// INTERP-NOT: compiled
// INTERP: = generic {{.*}} interpreted
// CMP: MATCH

#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @main(%x: tensor<64x96xbf16>, %gamma: tensor<96xbf16>, %h: tensor<64x96xf16>)
    -> (tensor<64x96xbf16>, tensor<64xbf16>, tensor<64x96xf16>) {
  %zf = arith.constant 0.0 : f32
  %lowest = arith.constant -3.0e38 : bf16
  %ef = tensor.empty() : tensor<64xf32>
  %eb = tensor.empty() : tensor<64xbf16>
  %e = tensor.empty() : tensor<64x96xbf16>
  %z = linalg.fill ins(%zf : f32) outs(%ef : tensor<64xf32>) -> tensor<64xf32>
  %m0 = linalg.fill ins(%lowest : bf16) outs(%eb : tensor<64xbf16>) -> tensor<64xbf16>
  // Sum of squares in f32 over bf16 inputs (the precision pass's form).
  %ss = linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x96xbf16>) outs(%z : tensor<64xf32>) {
  ^bb0(%a: bf16, %acc: f32):
    %w = arith.extf %a : bf16 to f32
    %sq = arith.mulf %w, %w : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  // RMS norm, scaled by gamma, rounded to bf16.
  %y = linalg.generic {indexing_maps = [#x, #row, #col, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss, %gamma : tensor<64x96xbf16>, tensor<64xf32>, tensor<96xbf16>) outs(%e : tensor<64x96xbf16>) {
  ^bb0(%a: bf16, %s: f32, %g: bf16, %o: bf16):
    %inv = arith.constant 0.010416667 : f32
    %eps = arith.constant 1.0e-5 : f32
    %ms = arith.mulf %s, %inv : f32
    %p = arith.addf %ms, %eps : f32
    %rs = math.rsqrt %p : f32
    %w = arith.extf %a : bf16 to f32
    %gw = arith.extf %g : bf16 to f32
    %n = arith.mulf %w, %rs : f32
    %t = arith.mulf %n, %gw : f32
    %r = arith.truncf %t : f32 to bf16
    %th = math.tanh %r : bf16
    %out = arith.addf %th, %a : bf16
    linalg.yield %out : bf16
  } -> tensor<64x96xbf16>
  // A row max accumulated in bf16.
  %mx = linalg.reduce ins(%y : tensor<64x96xbf16>) outs(%m0 : tensor<64xbf16>) dimensions = [1]
    (%a: bf16, %acc: bf16) {
      %m = arith.maximumf %a, %acc : bf16
      linalg.yield %m : bf16
    }
  // f16 elementwise on tensors: (h * h - h) / 3, then exp.
  %h2 = arith.mulf %h, %h : tensor<64x96xf16>
  %h3 = arith.subf %h2, %h : tensor<64x96xf16>
  %c3 = arith.constant dense<3.0> : tensor<64x96xf16>
  %h4 = arith.divf %h3, %c3 : tensor<64x96xf16>
  %h5 = math.exp %h4 : tensor<64x96xf16>
  return %y, %mx, %h5 : tensor<64x96xbf16>, tensor<64xbf16>, tensor<64x96xf16>
}
