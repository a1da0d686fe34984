// RUN: autoshard-opt --dist-test-sharding-rules --mlir-print-op-on-diagnostic=false %s -o /dev/null 2>&1 | FileCheck %s

// Named linalg ops: one factor per loop (named after the loop, as in the
// op's indexing maps), contraction loops are sum reductions, and the
// accumulator init is tied to the result ("acc": it takes the result's
// partial sum) while an unread init is marked "init".

func.func @named(%a: tensor<8x64xf32>, %b: tensor<64x16xf32>, %c: tensor<8x16xf32>,
                 %ba: tensor<2x8x64xf32>, %bb: tensor<2x64x16xf32>, %bc: tensor<2x8x16xf32>,
                 %v: tensor<64xf32>, %vc: tensor<8xf32>) {
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=16 par, d2=64 red(sum); operands: [d0][d2], [d2][d1], acc [d0][d1]; results: [d0][d1]
  %0 = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=2 par, d1=8 par, d2=16 par, d3=64 red(sum); operands: [d0][d1][d3], [d0][d3][d2], acc [d0][d1][d2]; results: [d0][d1][d2]
  %1 = linalg.batch_matmul ins(%ba, %bb : tensor<2x8x64xf32>, tensor<2x64x16xf32>) outs(%bc : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=64 red(sum); operands: [d0][d1], [d1], acc [d0]; results: [d0]
  %2 = linalg.matvec ins(%a, %v : tensor<8x64xf32>, tensor<64xf32>) outs(%vc : tensor<8xf32>) -> tensor<8xf32>
  %e = tensor.empty() : tensor<64x8xf32>
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=64 par, d1=8 par; operands: [d1][d0], init [d0][d1]; results: [d0][d1]
  %3 = linalg.transpose ins(%a : tensor<8x64xf32>) outs(%e : tensor<64x8xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<8x16xf32>
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=16 par; operands: [d0], init [d0][d1]; results: [d0][d1]
  %4 = linalg.broadcast ins(%vc : tensor<8xf32>) outs(%e2 : tensor<8x16xf32>) dimensions = [1]
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=64 red(max); operands: [d0][d1], acc [d0]; results: [d0]
  %5 = linalg.reduce ins(%a : tensor<8x64xf32>) outs(%vc : tensor<8xf32>) dimensions = [1]
    (%in: f32, %out: f32) {
      %m = arith.maximumf %out, %in : f32
      linalg.yield %m : f32
    }
  %cst = arith.constant 0.0 : f32
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=16 par; operands: scalar, init [d0][d1]; results: [d0][d1]
  %6 = linalg.fill ins(%cst : f32) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=16 par; operands: [d0][d1], [d0][d1], init [d0][d1]; results: [d0][d1]
  %7 = linalg.add ins(%c, %c : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// A convolution window indexes the input with d1 + d4: splitting either
// loop would need halos, so both stay whole.
// CHECK-LABEL: remark: rule: factors: d0=1 par, d1=6 rep, d2=6 rep, d3=4 par, d4=3 rep, d5=3 rep, d6=2 red(sum); operands: [d0][][][d6], [d4][d5][d6][d3], acc [d0][d1][d2][d3]; results: [d0][d1][d2][d3]
func.func @conv(%in: tensor<1x8x8x2xf32>, %f: tensor<3x3x2x4xf32>, %o: tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf ins(%in, %f : tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) outs(%o : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  return %0 : tensor<1x6x6x4xf32>
}
