// Both axes of a 2-D mesh on one matmul: rows over dp and the contraction
// over mp leave a partial sum over mp, resolved by one all_reduce in the dp
// group; rows over dp and columns over mp need nothing; both axes on one dim
// (rows over [dp, mp]) stay there through an elementwise consumer.
// RUN: autoshard-opt --dist-propagate %s | FileCheck %s
// RUN: autoshard-opt --dist-propagate=report=%t.json %s -o /dev/null
// RUN: FileCheck %s --check-prefix=REPORT < %t.json

#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
  // CHECK-LABEL: func.func @contraction_on_mp
  // CHECK-SAME: -> (tensor<8x32xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}dp], []]>})
  func.func @contraction_on_mp(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
    %xs = dist.annotate %x : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], [mp]]>
    %ws = dist.annotate %w : tensor<16x32xf32> as #dist.layout<#mesh, [[mp], []]>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x32xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
    // CHECK: linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], [mp]], {{\[\[}}mp], []], {{\[\[}}dp], []] partial sum [mp]], out = {{\[\[}}[dp], []] partial sum [mp]]>}
    // CHECK-NEXT: %[[R:.*]] = dist.reshard {{.*}} from #dist.layout<#mesh, {{\[\[}}dp], []] partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}dp], []]>
    // CHECK-NEXT: return {{.*}} %[[R]]
    %y = linalg.matmul ins(%xs, %ws : tensor<8x16xf32>, tensor<16x32xf32>) outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
    return %y : tensor<8x32xf32>
  }

  // CHECK-LABEL: func.func @rows_and_columns
  // CHECK-SAME: -> (tensor<8x32xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}dp], [mp]]>})
  func.func @rows_and_columns(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
    %xs = dist.annotate %x : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []]>
    %ws = dist.annotate %w : tensor<16x32xf32> as #dist.layout<#mesh, [[], [mp]]>
    %e = tensor.empty() : tensor<8x32xf32>
    // CHECK-NOT: dist.reshard
    // CHECK: linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], []], {{\[\[}}], [mp]], {{\[\[}}dp], [mp]]], out = {{\[\[}}[dp], [mp]]]>}
    // CHECK-NOT: dist.reshard
    %y = linalg.matmul ins(%xs, %ws : tensor<8x16xf32>, tensor<16x32xf32>) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
    return %y : tensor<8x32xf32>
  }

  // CHECK-LABEL: func.func @both_axes_on_rows
  // CHECK-SAME: -> (tensor<16x32xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}dp, mp], []]>})
  func.func @both_axes_on_rows(%x: tensor<16x16xf32>, %w: tensor<16x32xf32>) -> tensor<16x32xf32> {
    %xs = dist.annotate %x : tensor<16x16xf32> as #dist.layout<#mesh, [[dp, mp], []]>
    %e = tensor.empty() : tensor<16x32xf32>
    // CHECK-NOT: dist.reshard
    // CHECK: linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp, mp], []], {{\[\[}}], []], {{\[\[}}dp, mp], []]], out = {{\[\[}}[dp, mp], []]]>}
    %y = linalg.matmul ins(%xs, %w : tensor<16x16xf32>, tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
    %t = tensor.empty() : tensor<16x32xf32>
    // CHECK: linalg.generic {{.*}}dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp, mp], []], {{\[\[}}dp, mp], []]], out = {{\[\[}}[dp, mp], []]]>
    // CHECK-NOT: dist.reshard
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<16x32xf32>) outs(%t : tensor<16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = math.tanh %in : f32
      linalg.yield %m : f32
    } -> tensor<16x32xf32>
    return %r : tensor<16x32xf32>
  }
}

// Only the first function communicates: one all_reduce of the [4, 32] local
// rows over mp = 4: 2 * 3/4 * 512 B = 768 B.
// REPORT: "collectives": {
// REPORT-NEXT: "all_reduce": 1
// REPORT-NEXT: },
// REPORT-NEXT: "comm_bytes_per_device": 768,
// REPORT: "optimal": true,
// REPORT: "reshards": 1,
