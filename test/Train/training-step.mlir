// The training step of a two-layer MLP: signature (parameters, optimizer
// state, inputs, labels -> loss, tied parameters and state), the loss, the
// backward through matmul and a bias+ReLU generic, and Adam's update.
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=adam lr=0.01' | FileCheck %s
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=0.5' | FileCheck %s --check-prefix=SGD
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=momentum lr=0.5 momentum=0.8' | FileCheck %s --check-prefix=MOM

// CHECK-NOT: func.func @main
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %arg0: tensor<16x32xf32> {dist.name = "w1", dist.param}
// CHECK-SAME: %arg1: tensor<32xf32> {dist.name = "b1", dist.param}
// CHECK-SAME: %arg2: tensor<32x8xf32> {dist.name = "w2", dist.param}
// CHECK-SAME: %arg3: tensor<16x32xf32> {dist.init = "zeros", dist.name = "w1.exp_avg"}
// CHECK-SAME: %arg4: tensor<16x32xf32> {dist.init = "zeros", dist.name = "w1.exp_avg_sq"}
// CHECK-SAME: %arg9: tensor<f32> {dist.init = "zeros", dist.name = "optimizer.step"}
// CHECK-SAME: %arg10: tensor<8x16xf32> {dist.name = "x"}
// CHECK-SAME: %arg11: tensor<8x8xf32> {dist.name = "labels"}
// CHECK-SAME: -> (tensor<f32> {dist.name = "loss"},
// CHECK-SAME: tensor<16x32xf32> {dist.name = "w1", dist.tied_arg = 0 : i64}
// CHECK-SAME: tensor<16x32xf32> {dist.name = "w1.exp_avg", dist.tied_arg = 3 : i64}
// CHECK-SAME: tensor<f32> {dist.name = "optimizer.step", dist.tied_arg = 9 : i64}
// The forward, unchanged.
// CHECK: %[[H:.*]] = linalg.matmul ins(%arg10, %arg0
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[H]], %arg1
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[A]], %arg2
// mse: the mean of squares into a rank-0 tensor, and 2 (y - t) / 64.
// CHECK: %[[LOSS:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}} ins(%[[Y]], %arg11 {{.*}} attrs = {dist.phase = "loss"}
// CHECK: arith.constant 1.562500e-02
// CHECK: %[[DY:.*]] = linalg.generic {{.*}} ins(%[[Y]], %arg11 {{.*}} attrs = {dist.phase = "loss"}
// CHECK: arith.constant 3.125000e-02
// dA = dY w2^T; dw2 = A^T dY.
// CHECK: %[[W2T:.*]] = linalg.transpose ins(%arg2 : tensor<32x8xf32>) {{.*}} permutation = [1, 0]  {dist.phase = "backward"}
// CHECK: %[[DA:.*]] = linalg.matmul {dist.phase = "backward"} ins(%[[DY]], %[[W2T]]
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[A]]
// CHECK: %[[DW2:.*]] = linalg.matmul {dist.phase = "backward"} ins(%[[AT]], %[[DY]]
// ReLU: the gradient passes where h + b > 0; db sums it over the batch.
// CHECK: %[[DH:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%[[H]], %arg1, %[[DA]]
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK: %[[DB:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} ins(%[[H]], %arg1, %[[DA]]
// CHECK: %[[XT:.*]] = linalg.transpose ins(%arg10
// CHECK: %[[DW1:.*]] = linalg.matmul {dist.phase = "backward"} ins(%[[XT]], %[[DH]]
// Adam: the step count, then per parameter m, v and the bias-corrected step.
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%arg9 : tensor<f32>) {{.*}} attrs = {dist.phase = "optimizer"}
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%[[DW1]], %arg3
// CHECK: %[[V:.*]] = linalg.generic {{.*}} ins(%[[DW1]], %arg4
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%arg0, %[[M]], %[[V]], %[[T]]
// CHECK: math.powf
// CHECK: math.sqrt
// CHECK: return %[[LOSS]], %[[P]], {{.*}}, %[[M]], %[[V]], {{.*}}, %[[T]] :

// Plain SGD has no state: p - lr g.
// SGD-LABEL: func.func @train_step(
// SGD-SAME: %arg3: tensor<8x16xf32> {dist.name = "x"}, %arg4: tensor<8x8xf32> {dist.name = "labels"}
// SGD-SAME: -> (tensor<f32> {dist.name = "loss"}, tensor<16x32xf32> {dist.name = "w1", dist.tied_arg = 0 : i64}, tensor<32xf32> {dist.name = "b1", dist.tied_arg = 1 : i64}, tensor<32x8xf32> {dist.name = "w2", dist.tied_arg = 2 : i64})
// SGD: linalg.generic {{.*}} ins(%{{.*}}, %arg0 : tensor<16x32xf32>, tensor<16x32xf32>) {{.*}} attrs = {dist.phase = "optimizer"}
// SGD-NEXT: ^bb0(%[[G:.*]]: f32, %[[W:.*]]: f32, %{{.*}}: f32):
// SGD-NEXT: %[[LR:.*]] = arith.constant 5.000000e-01 : f32
// SGD-NEXT: %[[S:.*]] = arith.mulf %[[LR]], %[[G]]
// SGD-NEXT: arith.subf %[[W]], %[[S]]

// With momentum: buf = mu buf + g; p - lr buf.
// MOM-LABEL: func.func @train_step(
// MOM-SAME: %arg3: tensor<16x32xf32> {dist.init = "zeros", dist.name = "w1.momentum_buffer"}
// MOM: %[[BUF:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %arg3 : tensor<16x32xf32>, tensor<16x32xf32>)
// MOM: arith.constant 8.000000e-01
// MOM: linalg.generic {{.*}} ins(%[[BUF]], %arg0 :

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<8x16xf32> {dist.name = "x"}, %w1: tensor<16x32xf32> {dist.param, dist.name = "w1"}, %b1: tensor<32xf32> {dist.param, dist.name = "b1"}, %w2: tensor<32x8xf32> {dist.param, dist.name = "w2"}) -> tensor<8x8xf32> {
    %zero = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<8x32xf32>
    %i0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %h = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%i0 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %e1 = tensor.empty() : tensor<8x32xf32>
    %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%h, %b1 : tensor<8x32xf32>, tensor<32xf32>) outs(%e1 : tensor<8x32xf32>) {
    ^bb0(%in: f32, %bb: f32, %out: f32):
      %s = arith.addf %in, %bb : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
    } -> tensor<8x32xf32>
    %e2 = tensor.empty() : tensor<8x8xf32>
    %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %y = linalg.matmul ins(%a, %w2 : tensor<8x32xf32>, tensor<32x8xf32>) outs(%i2 : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}
