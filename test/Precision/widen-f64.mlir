// --dist-widen-f64: the program with every f32 computed in f64, the
// reference autoshard verify measures FP32 rounding against
// (test/Precision/verify-fp32.test). The signature stays f32 (arguments
// extended at entry, results truncated at the return) so seeded inputs and
// weight files give both programs the same values; constants keep their f32
// value exactly; casts from and to bf16 stay, an extf/truncf that becomes an
// identity goes; a call keeps its callee's f32 types.
// RUN: autoshard-opt %s --split-input-file --dist-widen-f64 --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x2xbf16>, %[[N:.*]]: tensor<4xi32>) -> (tensor<4x2xf32>, f32)
// CHECK-NEXT: %[[XW:.*]] = arith.extf %[[X]] : tensor<4x8xf32> to tensor<4x8xf64>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// 0.1f is 0.100000001490116...: the f32 value, not the decimal one.
// CHECK-DAG: arith.constant dense<[1.500000e+00, 0.10000000149011612]> : tensor<2xf64>
// CHECK: %[[Y0:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%{{.*}} : tensor<4x2xf64>)
// CHECK: %[[XB:.*]] = arith.truncf %[[XW]] : tensor<4x8xf64> to tensor<4x8xbf16>
// The bf16 GEMM accumulates in f64 (the named op's body extends to it).
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[XB]], %[[W]] : tensor<4x8xbf16>, tensor<8x2xbf16>) outs(%[[Y0]] : tensor<4x2xf64>) -> tensor<4x2xf64>
// The call takes and gives the callee's f32.
// CHECK-NEXT: %[[YT:.*]] = arith.truncf %[[Y]] : tensor<4x2xf64> to tensor<4x2xf32>
// CHECK-NEXT: %[[R:.*]] = call @scale(%[[YT]]) : (tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[RW:.*]] = arith.extf %[[R]] : tensor<4x2xf32> to tensor<4x2xf64>
// The program's own f32 -> f64 -> f32 round trip is gone.
// CHECK-NEXT: %[[OUT:.*]] = arith.truncf %[[RW]] : tensor<4x2xf64> to tensor<4x2xf32>
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[ZERO]] : f64 to f32
// CHECK-NEXT: return %[[OUT]], %[[T]] : tensor<4x2xf32>, f32
// CHECK-LABEL: func.func private @scale(
// CHECK-SAME: %[[A:.*]]: tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[AW:.*]] = arith.extf %[[A]] : tensor<4x2xf32> to tensor<4x2xf64>
// CHECK-NEXT: %[[TENTH:.*]] = arith.constant dense<0.10000000149011612> : tensor<4x2xf64>
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[AW]], %[[TENTH]] : tensor<4x2xf64>
// CHECK-NEXT: %[[MT:.*]] = arith.truncf %[[M]] : tensor<4x2xf64> to tensor<4x2xf32>
// CHECK-NEXT: return %[[MT]] : tensor<4x2xf32>
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x2xbf16>, %n: tensor<4xi32>) -> (tensor<4x2xf32>, f32) {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant dense<[1.5, 0.1]> : tensor<2xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %y0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %xb = arith.truncf %x : tensor<4x8xf32> to tensor<4x8xbf16>
  %y = linalg.matmul ins(%xb, %w : tensor<4x8xbf16>, tensor<8x2xbf16>) outs(%y0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %s = func.call @scale(%y) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %d = arith.extf %zero : f32 to f64
  %t = arith.truncf %d : f64 to f32
  return %s, %t : tensor<4x2xf32>, f32
}
func.func private @scale(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %c = arith.constant dense<0.1> : tensor<4x2xf32>
  %r = arith.mulf %a, %c : tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// An f32 constant the pass cannot rewrite (a resource blob) is an error at
// the op, not a program left half widened.
func.func @blob(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @below {{dist-widen-f64: cannot widen this op's f32 attribute}}
  %c = arith.constant dense_resource<two> : tensor<2xf32>
  %r = arith.addf %x, %c : tensor<2xf32>
  return %r : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      two: "0x040000000000803F00000040"
    }
  }
#-}
