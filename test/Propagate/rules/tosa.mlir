// RUN: autoshard-opt --dist-test-sharding-rules --mlir-print-op-on-diagnostic=false %s -o /dev/null 2>&1 | FileCheck %s

func.func @tosa(%y: tensor<2x4x6xf32>, %w: tensor<2x6x5xf32>, %idx: tensor<2x3xi32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  // Zero points are replicated.
  // CHECK: [[@LINE+1]]:9: remark: rule: factors: n=2 par, h=4 par, w=5 par, c=6 red(sum); operands: [n][h][c], [n][c][w], [], []; results: [n][h][w]
  %mm = tosa.matmul %y, %w, %zp, %zp : (tensor<2x4x6xf32>, tensor<2x6x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x5xf32>
  // CHECK: [[@LINE+1]]:9: remark: rule: factors: f0=2 par, f1=4 red(sum), f2=5 par; operands: [f0][f1][f2]; results: [f0][][f2]
  %rs = tosa.reduce_sum %mm {axis = 1 : i32} : (tensor<2x4x5xf32>) -> tensor<2x1x5xf32>
  // CHECK: [[@LINE+1]]:9: remark: rule: factors: f0=2 par, f1=4 par, f2=5 red(max); operands: [f0][f1][f2]; results: [f0][f1][]
  %rm = tosa.reduce_max %mm {axis = 2 : i32} : (tensor<2x4x5xf32>) -> tensor<2x4x1xf32>
  // CHECK: [[@LINE+1]]:9: remark: rule: factors: f0=2 par, f1=4 par, f2=5 red(min); operands: [f0][f1][f2]; results: [f0][f1][]
  %rn = tosa.reduce_min %mm {axis = 2 : i32} : (tensor<2x4x5xf32>) -> tensor<2x4x1xf32>
  // CHECK: [[@LINE+1]]:9: remark: rule: factors: f0=2 red(product), f1=4 par, f2=5 par; operands: [f0][f1][f2]; results: [][f1][f2]
  %rp = tosa.reduce_product %mm {axis = 0 : i32} : (tensor<2x4x5xf32>) -> tensor<1x4x5xf32>
  %b = tosa.greater %mm, %mm : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xi1>
  // Boolean any has no partial-reduction kind: its axis stays whole.
  // CHECK: [[@LINE+1]]:9: remark: rule: factors: f0=2 par, f1=4 rep, f2=5 par; operands: [f0][f1][f2]; results: [f0][][f2]
  %ra = tosa.reduce_any %b {axis = 1 : i32} : (tensor<2x4x5xi1>) -> tensor<2x1x5xi1>
  %sh = tosa.const_shape {values = dense<[8, 5]> : tensor<2xindex>} : () -> !tosa.shape<2>
  // CHECK: [[@LINE+1]]:9: remark: rule: factors: f0=2 par, f1=4 par, f2=5 par; operands: [f0][f1][f2], scalar; results: [f0,f1][f2]
  %re = tosa.reshape %mm, %sh : (tensor<2x4x5xf32>, !tosa.shape<2>) -> tensor<8x5xf32>
  // CHECK: [[@LINE+1]]:9: remark: rule: factors: f0=2 par, f1=4 par, f2=5 par; operands: [f0][f1][f2]; results: [f2][f0][f1]
  %tr = tosa.transpose %mm {perms = array<i32: 2, 0, 1>} : (tensor<2x4x5xf32>) -> tensor<5x2x4xf32>
  // Broadcast operand: its size-1 dim holds no factor.
  // CHECK: [[@LINE+1]]:9: remark: rule: factors: f0=2 par, f1=4 par, f2=5 par; operands: [f0][f1][f2], [f0][][f2]; results: [f0][f1][f2]
  %ad = tosa.add %mm, %rs : (tensor<2x4x5xf32>, tensor<2x1x5xf32>) -> tensor<2x4x5xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // CHECK: [[@LINE+1]]:9: remark: rule: factors: f0=2 par, f1=4 par, f2=5 par; operands: [f0][f1][f2], [f0][f1][f2], []; results: [f0][f1][f2]
  %mu = tosa.mul %mm, %ad, %shift : (tensor<2x4x5xf32>, tensor<2x4x5xf32>, tensor<1xi8>) -> tensor<2x4x5xf32>
  // CHECK: [[@LINE+1]]:9: remark: rule: factors: f0=2 par, f1=4 par, f2=5 par; operands: [f0][f1][f2]; results: [f0][f1][f2]
  %ex = tosa.exp %mm : (tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  // CHECK: [[@LINE+1]]:9: remark: rule: factors: n=2 par, k=4 red(sum), c=6 par, w=3 par; operands: [n][k][c], [n][w]; results: [n][w][c]
  %tg = tosa.gather %y, %idx : (tensor<2x4x6xf32>, tensor<2x3xi32>) -> tensor<2x3x6xf32>
  return
}
