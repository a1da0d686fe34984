// Bad recompute specs and marks: one located error each (at the forward
// function the step is built from, or at the marked op), no crash.
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse recompute=some' 2>&1 | FileCheck %s --check-prefix=WORD
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse recompute=ops=' 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse recompute="ops=linalg.matmul,,x"' 2>&1 | FileCheck %s --check-prefix=EMPTY2
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse recompute=ops=[' 2>&1 | FileCheck %s --check-prefix=GLOB
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse recompute=ops=linalg.softmax' 2>&1 | FileCheck %s --check-prefix=NOMATCH
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse' 2>&1 | FileCheck %s --check-prefix=EFFECTS

// WORD: recompute-errors.mlir:[[@LINE+6]]:1: error: dist-training-step: recompute 'some' is not 'none', 'all' or 'ops=GLOB,...'
// EMPTY: recompute-errors.mlir:[[@LINE+5]]:1: error: dist-training-step: recompute 'ops=' has an empty glob
// EMPTY2: recompute-errors.mlir:[[@LINE+4]]:1: error: dist-training-step: recompute 'ops=linalg.matmul,,x' has an empty glob
// GLOB: recompute-errors.mlir:[[@LINE+3]]:1: error: dist-training-step: recompute glob '[': invalid glob pattern, unmatched '['
// NOMATCH: recompute-errors.mlir:[[@LINE+2]]:1: error: dist-training-step: recompute glob 'linalg.softmax' matches no forward op
// EFFECTS-NOT: error
func.func @main(%x: tensor<4x4xf32>, %w: tensor<4x4xf32> {dist.param}) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%i : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Only ops without memory effects are recomputed: marking a call is an
// error.
// EFFECTS: recompute-errors.mlir:[[@LINE+5]]:8: error: dist-training-step: 'func.call' is marked dist.recompute but has side effects
func.func private @scale(tensor<4x4xf32>) -> tensor<4x4xf32>
func.func @main(%x: tensor<4x4xf32>, %w: tensor<4x4xf32> {dist.param}) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %s = func.call @scale(%x) {dist.recompute} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%s, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%i : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
