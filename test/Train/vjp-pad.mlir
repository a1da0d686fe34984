// tensor.pad (static low/high, constant pad value): dSource is the window of
// dOut at [low, low + source size); the pad value gets no gradient.
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=1' | FileCheck %s

// CHECK-LABEL: func.func @train_step(
// CHECK: tensor.pad %arg0 low[1, 0] high[2, 1]
// CHECK: %[[DX:.*]] = tensor.extract_slice %{{.*}}[1, 0] [2, 3] [1, 1] {dist.phase = "backward"} : tensor<5x4xf32> to tensor<2x3xf32>
// CHECK: ins(%[[DX]], %arg0 : {{.*}}dist.phase = "optimizer"
func.func @main(%x: tensor<2x3xf32> {dist.param}) -> tensor<5x4xf32> {
  %c = arith.constant 0.5 : f32
  %y = tensor.pad %x low[1, 0] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c : f32
  } : tensor<2x3xf32> to tensor<5x4xf32>
  return %y : tensor<5x4xf32>
}
