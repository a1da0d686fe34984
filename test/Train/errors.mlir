// Bad input to --dist-training-step: one located error each, no crash.
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse' 2>&1 | FileCheck %s
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=hinge' 2>&1 | FileCheck %s --check-prefix=LOSS
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='optimizer=lbfgs' 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse data-axis=tp' 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse data-axis=dp' 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=cross_entropy' 2>&1 | FileCheck %s --check-prefix=CE

// CHECK: errors.mlir:[[@LINE+2]]:1: error: dist-training-step: @main has no parameters (arguments with dist.weight or dist.param)
#mesh = #dist.mesh<[dp = 2]>
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  return %x : tensor<4x4xf32>
}
// LOSS: error: dist-training-step: unknown loss 'hinge' (expected cross_entropy or mse)
// OPT: error: dist-training-step: unknown optimizer 'lbfgs' (expected sgd, momentum, adam or adamw)

// -----

// An op between a parameter and the loss without a VJP rule is named.
// CHECK: errors.mlir:[[@LINE+2]]:8: error: dist-training-step: no VJP rule for 'tensor.insert_slice' (it lies between a parameter and the loss)
func.func @main(%w: tensor<2x4xf32> {dist.param}, %x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = tensor.insert_slice %w into %x[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// cross_entropy needs logits with a class dim.
// CE: errors.mlir:[[@LINE+2]]:3: error: dist-training-step: cross_entropy needs logits of rank 2 or more (positions..., classes)
func.func @main(%w: tensor<4xf32> {dist.param}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// The batch must divide over the data axis.
#mesh3 = #dist.mesh<[dp = 3]>
// AXIS: errors.mlir:[[@LINE+3]]:3: error: dist-training-step: data-axis 'tp' is not an axis of the mesh [dp=3]
// BATCH: errors.mlir:[[@LINE+2]]:3: error: dist-training-step: the batch dim of 'x' (4) does not divide over data axis 'dp' (3 devices)
module attributes {dist.mesh = #mesh3} {
  func.func @main(%w: tensor<4x4xf32> {dist.param}, %x: tensor<4x4xf32> {dist.name = "x"}) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %0 = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}
