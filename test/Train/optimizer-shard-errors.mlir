// optimizer-shard errors: one located error each, never a silent fallback.
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse optimizer=adam optimizer-shard=true' 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse optimizer=adam data-axis=dp optimizer-shard=true optimizer-shard-threshold=0' 2>&1 | FileCheck %s
// Above the parameters (60 and 80 bytes) they stay replicated: no error.
// RUN: autoshard-opt %s -split-input-file --dist-training-step='loss=mse optimizer=adam data-axis=dp optimizer-shard=true optimizer-shard-threshold=81' | FileCheck %s --check-prefix=SMALL

// Optimizer parallel splits over the data axis: there must be one.
// AXIS: optimizer-shard-errors.mlir:[[@LINE+6]]:3: error: dist-training-step: optimizer-shard needs a data-axis
// A parameter with no dim that divides over dp (3x5 on dp = 2) would need an
// uneven split of its state, which the runtime cannot run: the error names it.
// CHECK: optimizer-shard-errors.mlir:[[@LINE+3]]:3: error: dist-training-step: optimizer-shard: parameter 'w' ('tensor<3x5xf32>', 60 bytes, layout {{\[\[}}], []]) has no dim that divides over data axis 'dp' (2 devices) times its own split; its optimizer state would need an uneven split, whose gathers the runtime cannot run (dynamic local shapes). Give it a dividing shape or layout, or raise optimizer-shard-threshold above 60 bytes to keep it replicated
#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%w: tensor<3x5xf32> {dist.param, dist.name = "w"}, %x: tensor<4x3xf32>) -> tensor<4x5xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %e = tensor.empty() : tensor<4x5xf32>
    %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
    %y = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x5xf32>) outs(%i : tensor<4x5xf32>) -> tensor<4x5xf32>
    return %y : tensor<4x5xf32>
  }
}
// SMALL: func.func @train_step(
// SMALL-NOT: dist.annotate %arg1
// SMALL-NOT: dist.annotate %arg2

// -----

// Its own split counts: 4x5 split [[mp], []] on dp = 2 x mp = 4 has 4 rows
// (not divisible by 4 x 2) and 5 columns (not divisible by 2).
#mesh2 = #dist.mesh<[dp = 2, mp = 4]>
// CHECK: optimizer-shard-errors.mlir:[[@LINE+2]]:3: error: dist-training-step: optimizer-shard: parameter 'arg0' ('tensor<4x5xf32>', 80 bytes, layout {{\[\[}}mp], []]) has no dim that divides
module attributes {dist.mesh = #mesh2} {
  func.func @main(%w: tensor<4x5xf32> {dist.param}, %x: tensor<4x4xf32>) -> tensor<4x5xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %ws = dist.annotate %w : tensor<4x5xf32> as #dist.layout<#mesh2, [[mp], []]>
    %e = tensor.empty() : tensor<4x5xf32>
    %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
    %y = linalg.matmul ins(%x, %ws : tensor<4x4xf32>, tensor<4x5xf32>) outs(%i : tensor<4x5xf32>) -> tensor<4x5xf32>
    return %y : tensor<4x5xf32>
  }
}
