// Compiled loop-nest kernels (--kernels, lib/Lower/KernelCompiler.cpp):
// --print-plan marks every generic compiled or interpreted; compiled and
// interpreted runs agree bit for bit (math functions included); the
// --compile-threshold (loop iterations, here 12x8) of --kernels=auto; a
// 2-rank run builds the library
// once; a corrupt cached library is rebuilt; without a C compiler
// --kernels=compiled is a one-line error and auto falls back with a warning.
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-run %s --entry single --kernels=compiled --print-plan --output-dir %t/c | FileCheck %s
// RUN: autoshard-run %s --entry single --kernels=interpreted --print-plan --output-dir %t/i | FileCheck %s --check-prefix=INTERP
// RUN: autoshard-run --compare %t/c/output_0.npy %t/i/output_0.npy --rtol 0 --atol 0 | FileCheck %s --check-prefix=CMP
// RUN: autoshard-run --compare %t/c/output_1.npy %t/i/output_1.npy --rtol 0 --atol 0 | FileCheck %s --check-prefix=CMP
// RUN: autoshard-run %s --entry single --kernels=compiled --kernel-fusion=false --print-plan --output-dir %t/u | FileCheck %s --check-prefix=UNFUSED
// RUN: autoshard-run --compare %t/u/output_0.npy %t/i/output_0.npy --rtol 0 --atol 0 | FileCheck %s --check-prefix=CMP
// RUN: autoshard-run %s --entry single --kernels=auto --compile-threshold 96 --print-plan --write-outputs=false | FileCheck %s --check-prefix=AUTO
// RUN: autoshard-run %s --entry single --kernels=auto --compile-threshold 97 --print-plan --write-outputs=false | FileCheck %s --check-prefix=INTERP
// RUN: not autoshard-run %s --entry single --kernels=fast 2>&1 | FileCheck %s --check-prefix=BADMODE

// The fused chain: bias add + tanh-GELU-like + residual is one kernel, the
// row sum another, the scale a third (the sum's result is used twice).
// CHECK: kernels {{.*}}autoshard-{{[0-9a-f]+}}.so
// CHECK: = generic %{{.*}} : f32[12x8] compiled @autoshard_kernel_0
// CHECK: = generic %{{.*}} : f32[12] compiled @autoshard_kernel_1
// CHECK: = generic %{{.*}} : f32[12x8] compiled @autoshard_kernel_2
// CHECK-NOT: interpreted
// CHECK: output 0 'result0': f32[12x8]
// CHECK: output 1 'result1': f32[12]
// INTERP-NOT: kernels
// INTERP-NOT: compiled
// INTERP: = generic {{.*}} interpreted
// CMP: MATCH
// UNFUSED-COUNT-5: compiled @autoshard_kernel_
// UNFUSED-NOT: interpreted
// AUTO-COUNT-3: compiled @autoshard_kernel_
// AUTO-NOT: interpreted
// BADMODE: unknown --kernels 'fast' (expected auto, compiled or interpreted)

// Two ranks share one cache entry, built once under its lock.
// RUN: %if mpi %{ %mpirun -np 2 env AUTOSHARD_KERNEL_CACHE=%t/shared autoshard-run %s --kernels=compiled --output-dir %t/dist | FileCheck %s --check-prefix=DIST %}
// RUN: %if mpi %{ ls %t/shared | FileCheck %s --check-prefix=ONE --match-full-lines %}
// DIST: output 0 'result0': f32[8x6]
// ONE: autoshard-{{[0-9a-f]+}}.so
// ONE-NEXT: autoshard-{{[0-9a-f]+}}.so.lock
// ONE-NOT: {{.}}

// A corrupt cached library is rebuilt; results unchanged.
// RUN: env AUTOSHARD_KERNEL_CACHE=%t/cache autoshard-run %s --entry single --kernels=compiled --write-outputs=false
// RUN: for f in %t/cache/*.so; do echo garbage > $f; done
// RUN: env AUTOSHARD_KERNEL_CACHE=%t/cache autoshard-run %s --entry single --kernels=compiled --output-dir %t/r
// RUN: autoshard-run --compare %t/r/output_0.npy %t/i/output_0.npy --rtol 0 --atol 0 | FileCheck %s --check-prefix=CMP

// No C compiler to link kernels (an empty cache, so nothing is reused).
// RUN: not env AUTOSHARD_KERNEL_CACHE=%t/nocc AUTOSHARD_KERNEL_CC=/nonexistent/cc autoshard-run %s --entry single --kernels=compiled 2>&1 | FileCheck %s --check-prefix=NOCC
// RUN: env AUTOSHARD_KERNEL_CACHE=%t/nocc AUTOSHARD_KERNEL_CC=/nonexistent/cc autoshard-run %s --entry single --kernels=auto --compile-threshold 1 --print-plan --output-dir %t/n 2>&1 | FileCheck %s --check-prefix=NOCCAUTO
// RUN: autoshard-run --compare %t/n/output_0.npy %t/i/output_0.npy --rtol 0 --atol 0 | FileCheck %s --check-prefix=CMP
// NOCC: cannot run '{{.*}}kernels.mlir':
// NOCC-NEXT: error: autoshard: compiled kernels: no C compiler driver (/nonexistent/cc) on PATH to link them; set AUTOSHARD_KERNEL_CC or use --kernels=interpreted
// NOCC-NOT: error
// NOCCAUTO: warning: autoshard: compiled kernels: no C compiler driver (/nonexistent/cc) on PATH to link them; set AUTOSHARD_KERNEL_CC or use --kernels=interpreted; interpreting every loop nest
// NOCCAUTO-NOT: compiled
// NOCCAUTO: output 0 'result0'

#mesh = #dist.mesh<[dp = 2]>
#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
module attributes {dist.mesh = #mesh} {
  shard.grid @mesh(shape = 2)
  func.func @single(%x: tensor<12x8xf32>, %bias: tensor<8xf32>,
                    %res: tensor<12x8xf32>) -> (tensor<12x8xf32>, tensor<12xf32>) {
    %e = tensor.empty() : tensor<12x8xf32>
    %er = tensor.empty() : tensor<12xf32>
    %zero = arith.constant 0.0 : f32
    %z = linalg.fill ins(%zero : f32) outs(%er : tensor<12xf32>) -> tensor<12xf32>
    %b = linalg.generic {indexing_maps = [#x, #col, #x], iterator_types = ["parallel", "parallel"]}
        ins(%x, %bias : tensor<12x8xf32>, tensor<8xf32>) outs(%e : tensor<12x8xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<12x8xf32>
    %g = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
        ins(%b : tensor<12x8xf32>) outs(%e : tensor<12x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %h = arith.constant 0.5 : f32
      %one = arith.constant 1.0 : f32
      %t = math.tanh %a : f32
      %p = arith.addf %t, %one : f32
      %q = arith.mulf %a, %p : f32
      %y = arith.mulf %q, %h : f32
      linalg.yield %y : f32
    } -> tensor<12x8xf32>
    %r = linalg.generic {indexing_maps = [#x, #x, #x], iterator_types = ["parallel", "parallel"]}
        ins(%g, %res : tensor<12x8xf32>, tensor<12x8xf32>) outs(%e : tensor<12x8xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<12x8xf32>
    %sum = linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
        ins(%r : tensor<12x8xf32>) outs(%z : tensor<12xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    } -> tensor<12xf32>
    %n = linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
        ins(%r, %sum : tensor<12x8xf32>, tensor<12xf32>) outs(%e : tensor<12x8xf32>) {
    ^bb0(%a: f32, %s: f32, %o: f32):
      %d = arith.divf %a, %s : f32
      %ex = math.exp %d : f32
      linalg.yield %ex : f32
    } -> tensor<12x8xf32>
    return %n, %sum : tensor<12x8xf32>, tensor<12xf32>
  }

  func.func @main(
      %x: tensor<4x6xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>,
                           dist.global_type = tensor<8x6xf32>})
      -> (tensor<4x6xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>,
                           dist.global_type = tensor<8x6xf32>}) {
    %e = tensor.empty() : tensor<4x6xf32>
    %y = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = math.erf %a : f32
      %s = arith.mulf %t, %a : f32
      linalg.yield %s : f32
    } -> tensor<4x6xf32>
    return %y : tensor<4x6xf32>
  }
}
