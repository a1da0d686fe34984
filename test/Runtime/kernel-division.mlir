// Integer division and remainder in compiled loop nests: native code traps
// (SIGFPE) on a zero divisor and on the signed INT_MIN / -1, where the
// interpreter raises a located error, so only a constant divisor known to
// be neither compiles (lib/Lower/InterpreterSemantics.cpp mayTrap). A zero
// divisor gives the interpreter's error, rc 1 and no signal (`not` fails
// on a crash) under every --kernels mode; on good data compiled and
// interpreted agree bit for bit.
// RUN: rm -rf %t && mkdir -p %t
// RUN: not autoshard-run %s --entry generic_zero --kernels=interpreted 2>&1 | FileCheck %s --check-prefix=GZERO
// RUN: not autoshard-run %s --entry generic_zero --kernels=compiled --print-plan 2>&1 | FileCheck %s --check-prefixes=GZERO,GPLAN
// RUN: not autoshard-run %s --entry generic_zero --kernels=auto --compile-threshold 1 2>&1 | FileCheck %s --check-prefix=GZERO
// RUN: not autoshard-run %s --entry elementwise_zero --kernels=interpreted 2>&1 | FileCheck %s --check-prefix=EZERO
// RUN: not autoshard-run %s --entry elementwise_zero --kernels=compiled --print-plan 2>&1 | FileCheck %s --check-prefixes=EZERO,EPLAN
// RUN: not autoshard-run %s --entry elementwise_zero --kernels=auto --compile-threshold 1 2>&1 | FileCheck %s --check-prefix=EZERO
// GZERO: error: integer division by zero (at {{.*}}kernel-division.mlir:[[#@LINE+9]]:8 linalg.generic)
// GPLAN: = generic {{.*}} interpreted
// GPLAN-NOT: compiled
// EZERO: error: integer division by zero (at {{.*}}kernel-division.mlir:[[#@LINE+15]]:8 arith.remui)
// EPLAN: = generic {{.*}} interpreted
// EPLAN-NOT: compiled
#map = affine_map<(d0) -> (d0)>
func.func @generic_zero(%a: tensor<8xi32>, %b: tensor<8xi32> {dist.init = "zeros"}) -> tensor<8xi32> {
  %e = tensor.empty() : tensor<8xi32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %b : tensor<8xi32>, tensor<8xi32>) outs(%e : tensor<8xi32>) {
  ^bb0(%x: i32, %y: i32, %o: i32):
    %d = arith.divsi %x, %y : i32
    linalg.yield %d : i32
  } -> tensor<8xi32>
  return %r : tensor<8xi32>
}

func.func @elementwise_zero(%a: tensor<8xi32>, %b: tensor<8xi32> {dist.init = "zeros"}) -> tensor<8xi32> {
  %r = arith.remui %a, %b : tensor<8xi32>
  return %r : tensor<8xi32>
}

// Good data. Compiled: constant divisors that are neither 0 nor (signed) -1,
// in the body, captured from outside it, splat or not, index arithmetic as
// the ONNX importer emits it. Interpreted: a tensor divisor, a constant -1
// for divsi (INT_MIN / -1), a constant tensor holding a -1 for remsi.
// RUN: autoshard-run %s --entry good --kernels=compiled --print-plan --output-dir %t/c | FileCheck %s --check-prefix=GOOD
// RUN: autoshard-run %s --entry good --kernels=auto --compile-threshold 1 --print-plan --write-outputs=false | FileCheck %s --check-prefix=GOOD
// RUN: autoshard-run %s --entry good --kernels=interpreted --output-dir %t/i
// RUN: for k in 0 1 2 3 4 5 6 7 8; do cmp %t/c/output_$k.npy %t/i/output_$k.npy && echo SAME; done | FileCheck %s --check-prefix=CMP
// GOOD: kernels {{.*}}.so
// GOOD-DAG: [[R0:%[0-9]+]] = generic {{.*}} compiled @autoshard_kernel_
// GOOD-DAG: [[R1:%[0-9]+]] = generic {{.*}} compiled @autoshard_kernel_
// GOOD-DAG: [[R2:%[0-9]+]] = generic {{.*}} compiled @autoshard_kernel_
// GOOD-DAG: [[R3:%[0-9]+]] = generic {{.*}} compiled @autoshard_kernel_
// GOOD-DAG: [[R4:%[0-9]+]] = generic {{.*}} compiled @autoshard_kernel_
// GOOD-DAG: [[R5:%[0-9]+]] = generic {{.*}} interpreted
// GOOD-DAG: [[R6:%[0-9]+]] = generic {{.*}} interpreted
// GOOD-DAG: [[R7:%[0-9]+]] = generic {{.*}} interpreted
// GOOD-DAG: [[R8:%[0-9]+]] = generic {{.*}} interpreted
// GOOD: output [[R0]] 'result0'
// GOOD-NEXT: output [[R1]] 'result1'
// GOOD-NEXT: output [[R2]] 'result2'
// GOOD-NEXT: output [[R3]] 'result3'
// GOOD-NEXT: output [[R4]] 'result4'
// GOOD-NEXT: output [[R5]] 'result5'
// GOOD-NEXT: output [[R6]] 'result6'
// GOOD-NEXT: output [[R7]] 'result7'
// GOOD-NEXT: output [[R8]] 'result8'
// CMP-COUNT-9: {{^}}SAME
func.func @good(%a: tensor<8xi32>, %z: tensor<8xi32> {dist.init = "zeros"})
    -> (tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xindex>,
        tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>) {
  %e = tensor.empty() : tensor<8xi32>
  %m3 = arith.constant -3 : i32
  %r0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%a : tensor<8xi32>) outs(%e : tensor<8xi32>) {
  ^bb0(%x: i32, %o: i32):
    %c7 = arith.constant 7 : i32
    %q = arith.divsi %x, %m3 : i32
    %r = arith.remsi %x, %c7 : i32
    %s = arith.addi %q, %r : i32
    linalg.yield %s : i32
  } -> tensor<8xi32>
  %k = arith.constant dense<[1, 2, -3, 4, 5, -6, 7, 8]> : tensor<8xi32>
  %r1 = arith.remsi %a, %k : tensor<8xi32>
  %two = arith.constant dense<2> : tensor<8xi32>
  %r2 = arith.divsi %a, %two : tensor<8xi32>
  // Unsigned -1 is just the largest divisor.
  %r3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%a : tensor<8xi32>) outs(%e : tensor<8xi32>) {
  ^bb0(%x: i32, %o: i32):
    %cm1 = arith.constant -1 : i32
    %q = arith.divui %x, %cm1 : i32
    %r = arith.remui %x, %cm1 : i32
    %s = arith.addi %q, %r : i32
    linalg.yield %s : i32
  } -> tensor<8xi32>
  %ei = tensor.empty() : tensor<8xindex>
  %r4 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%ei : tensor<8xindex>) {
  ^bb0(%o: index):
    %i = linalg.index 0 : index
    %c3 = arith.constant 3 : index
    %r = arith.remui %i, %c3 : index
    %q = arith.divui %i, %c3 : index
    %s = arith.addi %q, %r : index
    linalg.yield %s : index
  } -> tensor<8xindex>

  %three = arith.constant dense<3> : tensor<8xi32>
  %d = arith.addi %z, %three : tensor<8xi32>
  %r5 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %d : tensor<8xi32>, tensor<8xi32>) outs(%e : tensor<8xi32>) {
  ^bb0(%x: i32, %y: i32, %o: i32):
    %q = arith.divsi %x, %y : i32
    linalg.yield %q : i32
  } -> tensor<8xi32>
  %r6 = arith.remsi %a, %d : tensor<8xi32>
  %r7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%a : tensor<8xi32>) outs(%e : tensor<8xi32>) {
  ^bb0(%x: i32, %o: i32):
    %cm1 = arith.constant -1 : i32
    %q = arith.divsi %x, %cm1 : i32
    linalg.yield %q : i32
  } -> tensor<8xi32>
  %km1 = arith.constant dense<[1, 2, 3, 4, -1, 6, 7, 8]> : tensor<8xi32>
  %r8 = arith.remsi %a, %km1 : tensor<8xi32>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8
      : tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xindex>,
        tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>
}
