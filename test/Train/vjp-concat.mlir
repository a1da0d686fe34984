// tensor.concat along d: each operand's gradient is the slice of dOut at its
// offset along d; operands that need none (here %b) get no slice.
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=1' | FileCheck %s

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<2x3xf32> {{.*}}, %[[C:[a-z0-9]+]]: tensor<2x4xf32>
// CHECK: tensor.concat dim(1)
// CHECK: %[[DA:.*]] = tensor.extract_slice %[[DY:.*]][0, 0] [2, 3] [1, 1] {dist.phase = "backward"} : tensor<2x9xf32> to tensor<2x3xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[DC:.*]] = tensor.extract_slice %[[DY]][0, 5] [2, 4] [1, 1] {dist.phase = "backward"} : tensor<2x9xf32> to tensor<2x4xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: ins(%[[DA]], %[[A]] : {{.*}}dist.phase = "optimizer"
// CHECK: ins(%[[DC]], %[[C]] : {{.*}}dist.phase = "optimizer"
func.func @main(%a: tensor<2x3xf32> {dist.param}, %b: tensor<2x2xf32>, %c: tensor<2x4xf32> {dist.param}) -> tensor<2x9xf32> {
  %y = tensor.concat dim(1) %a, %b, %c : (tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x4xf32>) -> tensor<2x9xf32>
  return %y : tensor<2x9xf32>
}
