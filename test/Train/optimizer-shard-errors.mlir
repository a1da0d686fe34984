// optimizer-shard errors: one located error each, never a silent fallback.
// A parameter with no dim that divides is split unevenly (padded), not an
// error (PAD); one unevenly split on every dim already is.
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse optimizer=adam optimizer-shard=true' 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse optimizer=adam data-axis=dp optimizer-shard=true optimizer-shard-threshold=0' 2>&1 | FileCheck %s --check-prefix=PAD
// RUN: not autoshard-opt %s -split-input-file --dist-training-step='loss=mse optimizer=adam data-axis=dp optimizer-shard=true optimizer-shard-threshold=0' 2>&1 | FileCheck %s
// Above the parameters (60 and 80 bytes) they stay replicated: no error.
// RUN: autoshard-opt %s -split-input-file --dist-training-step='loss=mse optimizer=adam data-axis=dp optimizer-shard=true optimizer-shard-threshold=81' | FileCheck %s --check-prefix=SMALL

// Optimizer parallel splits over the data axis: there must be one.
// AXIS: optimizer-shard-errors.mlir:[[@LINE+8]]:3: error: dist-training-step: optimizer-shard needs a data-axis
// A parameter with no dim that divides over dp (3x5 on dp = 2): its rows
// split unevenly (2, 1), the state padded to 4x5.
// PAD: func.func @train_step(%arg0: tensor<3x5xf32> {dist.name = "w", dist.param}, %arg1: tensor<4x5xf32> {dist.init = "zeros", dist.name = "w.exp_avg"}, %arg2: tensor<4x5xf32> {dist.init = "zeros", dist.name = "w.exp_avg_sq"}
// PAD-NEXT: dist.annotate %arg1 : tensor<4x5xf32> as #dist.layout<#mesh, {{\[\[}}dp], []]>
// PAD: tensor.pad %arg0 low[0, 0] high[1, 0]
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
// (not divisible by 4 x 2) and 5 columns (not divisible by 2): the dim its
// own layout leaves whole is padded (5 -> 6 columns), so the state's rows
// stay the parameter's mp shards.
#mesh2 = #dist.mesh<[dp = 2, mp = 4]>
// PAD: func.func @train_step(%arg0: tensor<4x5xf32> {dist.name = "arg0", dist.param}, %arg1: tensor<4x6xf32> {dist.init = "zeros", dist.name = "arg0.exp_avg"}
// PAD-NEXT: dist.annotate %arg1 : tensor<4x6xf32> as #dist.layout<#mesh, {{\[\[}}mp], [dp]]>
// PAD: tensor.pad %arg0 low[0, 0] high[0, 1]
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

// -----

// Unevenly split on its only dim already (over mp): nothing left to pad.
#mesh3 = #dist.mesh<[dp = 2, mp = 2]>
// CHECK: optimizer-shard-errors.mlir:[[@LINE+2]]:3: error: dist-training-step: optimizer-shard: parameter 'arg0' ('tensor<3xf32>', layout {{\[\[}}mp]]) is unevenly split on every dim; its optimizer state cannot be split again over data axis 'dp'. Raise optimizer-shard-threshold above 12 bytes to keep it as it is
module attributes {dist.mesh = #mesh3} {
  func.func @main(%w: tensor<3xf32> {dist.param}, %x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    %ws = dist.annotate %w : tensor<3xf32> as #dist.layout<#mesh3, [[mp] sizes(1, 2)]>
    %e = tensor.empty() : tensor<4x3xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%x, %ws : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %s = arith.mulf %a, %b : f32
        linalg.yield %s : f32
      } -> tensor<4x3xf32>
    return %y : tensor<4x3xf32>
  }
}
