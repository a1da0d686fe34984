// `explain` puts a remark on every reshard: its layouts, the consumer that
// forced it, why, its collectives, time and bytes. (A consumer's own user
// constraint is covered by conflicts.mlir.)
// RUN: autoshard-opt --dist-propagate=explain %s -split-input-file -verify-diagnostics | FileCheck %s

// The producer is pinned (priority 1) rows-split; three matmuls read it with
// column-split weights. Gathering the input once, shared by all three, beats
// gathering the three weights (each consumer would pay for the shared
// gather if reshards were priced per use: 3 x 2.010 us > 3 x 2.005 us).
#mesh = #dist.mesh<[mp = 4]>
module attributes {dist.mesh = #mesh} {
  // CHECK-LABEL: func.func @pinned_producer
  func.func @pinned_producer(%x: tensor<8x64xf32>, %w0: tensor<64x4xf32>, %w1: tensor<64x4xf32>, %w2: tensor<64x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
    // CHECK: %[[X:.*]] = dist.annotate
    // CHECK-NEXT: %[[G:.*]] = dist.reshard %[[X]] : tensor<8x64xf32> from #dist.layout<#mesh, {{\[\[}}mp], []]> to #dist.layout<#mesh, {{\[\[}}], []]>
    // CHECK-NOT: dist.reshard
    // CHECK: linalg.matmul {{.*}} ins(%[[G]],
    // CHECK: linalg.matmul {{.*}} ins(%[[G]],
    // CHECK: linalg.matmul {{.*}} ins(%[[G]],
    // CHECK-NOT: dist.reshard
    %xs = dist.annotate %x : tensor<8x64xf32> as #dist.layout<#mesh, [[mp], []]> priority 1
    %w0s = dist.annotate %w0 : tensor<64x4xf32> as #dist.layout<#mesh, [[], [mp]]>
    %w1s = dist.annotate %w1 : tensor<64x4xf32> as #dist.layout<#mesh, [[], [mp]]>
    %w2s = dist.annotate %w2 : tensor<64x4xf32> as #dist.layout<#mesh, [[], [mp]]>
    %e0 = tensor.empty() : tensor<8x4xf32>
    // expected-remark @below {{reshard [[mp], []] -> [[], []] for operand #0 of 'linalg.matmul': the producer's layout is pinned by a user constraint; all_gather(axes [mp], dim 0): [[mp], []] -> [[], []], 2.010 us, 1536 bytes per device}}
    %y0 = linalg.matmul ins(%xs, %w0s : tensor<8x64xf32>, tensor<64x4xf32>) outs(%e0 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %e1 = tensor.empty() : tensor<8x4xf32>
    %y1 = linalg.matmul ins(%xs, %w1s : tensor<8x64xf32>, tensor<64x4xf32>) outs(%e1 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %e2 = tensor.empty() : tensor<8x4xf32>
    %y2 = linalg.matmul ins(%xs, %w2s : tensor<8x64xf32>, tensor<64x4xf32>) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %y0, %y1, %y2 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
}

// -----

// A row-parallel matmul leaves a partial sum; a function result never is
// one, so the return forces the all_reduce.
#mesh = #dist.mesh<[mp = 4]>
module attributes {dist.mesh = #mesh} {
  // CHECK-LABEL: func.func @partial_result
  func.func @partial_result(%x: tensor<8x16xf32>, %w: tensor<16x8xf32>) -> tensor<8x8xf32> {
    %xs = dist.annotate %x : tensor<8x16xf32> as #dist.layout<#mesh, [[], [mp]]>
    %ws = dist.annotate %w : tensor<16x8xf32> as #dist.layout<#mesh, [[mp], []]>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x8xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
    // CHECK: linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[], [mp]], {{\[\[}}mp], []], {{\[\[}}], []] partial sum [mp]], out = {{\[\[}}[], []] partial sum [mp]]>}
    // CHECK-NEXT: dist.reshard {{.*}} from #dist.layout<#mesh, {{\[\[}}], []] partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}], []]>
    %y = linalg.matmul ins(%xs, %ws : tensor<8x16xf32>, tensor<16x8xf32>) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
    // expected-remark @below {{reshard [[], []] partial sum[mp] -> [[], []] for operand #0 of 'func.return': a function result is never a pending partial value; all_reduce(axes [mp], sum): [[], []] partial sum[mp] -> [[], []], 2.003 us, 384 bytes per device}}
    return %y : tensor<8x8xf32>
  }
}

// -----

// The elementwise op between the pinned input and the matmul is free to
// choose: it keeps the input's rows split and the matmul gathers its result
// (1536 B) rather than the [64, 64] weight (12 KiB), so the remark names the
// consumer's choice, not a user constraint.
#mesh = #dist.mesh<[mp = 4]>
module attributes {dist.mesh = #mesh} {
  // CHECK-LABEL: func.func @cheaper_overall
  func.func @cheaper_overall(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
    %xs = dist.annotate %x : tensor<8x64xf32> as #dist.layout<#mesh, [[mp], []]>
    %ws = dist.annotate %w : tensor<64x64xf32> as #dist.layout<#mesh, [[], [mp]]>
    %t = tensor.empty() : tensor<8x64xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<8x64xf32>) outs(%t : tensor<8x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<8x64xf32>
    %e = tensor.empty() : tensor<8x64xf32>
    // expected-remark @below {{reshard [[mp], []] -> [[], []] for operand #0 of 'linalg.matmul': the consumer's strategy is cheaper overall than one that fits}}
    %y = linalg.matmul ins(%r, %ws : tensor<8x64xf32>, tensor<64x64xf32>) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
    return %y : tensor<8x64xf32>
  }
}
