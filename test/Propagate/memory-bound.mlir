// memory_gib (cluster file) bounds the plan's bytes per device. A 4-layer
// MLP (64x256 activations, 256x1024 and 1024x256 weights, f32, dp = 2,
// mp = 4) with only its first weight annotated: the fastest plan runs
// layers 1-3 with replicated weights, 7,938,048 B per device. Under 5 MiB
// (0.005 GiB = 5,368,709 B) the multiplier search (MemoryBound.cpp) finds
// the weights of layers 1-2 split Megatron-style (w1 by columns, w2 by
// rows) and layer 3's second one by columns, 4,644,864 B, 7.14 us; the
// repair (MemoryRepair.cpp) then gives layer 3 back its replicated second
// weight (one more reduce-scatter less an all-reduce), 4,939,776 B, 6.93
// us, still within the bound. Under 6 MiB (6,442,451 B) the multiplier
// search stops at the same 7.14 us plan (no multiplier reaches another:
// the layers trade alike), and the repair gives layers 2-3 back their
// replicated weights: 6,438,912 B, 4.60 us. The report gives the fastest
// plan's and the multiplier's cost and bytes next to the plan's; the
// partitioned program still moves what the report says and the objective
// is what was emitted. A bound no plan meets is a one-line error with the
// smallest plan found; the default bound (80 GiB) keeps the fastest plan.
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"memory_gib": 0.005}' > %t/small.json
// RUN: echo '{"memory_gib": 0.006}' > %t/mid.json
// RUN: echo '{"memory_gib": 0.0001}' > %t/tiny.json
// RUN: autoshard-opt %s --dist-propagate=report=%t/free.json | FileCheck %s --check-prefix=FREE
// RUN: FileCheck %s --check-prefix=FREE-REPORT < %t/free.json
// RUN: autoshard-opt %s --dist-propagate="cluster=%t/small.json report=%t/small.json.out" | FileCheck %s --check-prefix=SMALL
// RUN: FileCheck %s --check-prefix=SMALL-REPORT < %t/small.json.out
// RUN: autoshard-opt %s --dist-propagate="cluster=%t/mid.json report=%t/mid.json.out" | FileCheck %s --check-prefix=MID
// RUN: FileCheck %s --check-prefix=MID-REPORT < %t/mid.json.out
// RUN: autoshard-opt %s --pass-pipeline='builtin.module(dist-propagate{cluster=%t/small.json report=%t/p.json},dist-partition)' -o %t/part.mlir
// RUN: %python %S/Inputs/ir_collectives.py %t/part.mlir %t/p.json | FileCheck %s --check-prefix=AGREE
// RUN: not autoshard-opt %s --dist-propagate=cluster=%t/tiny.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=TINY

// %arg3 ... %arg8: w1, w2 of layers 1, 2, 3.
// FREE-LABEL: func.func @mlp
// FREE-SAME: %arg3: tensor<256x1024xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}], []]>}
// FREE-SAME: %arg8: tensor<1024x256xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}], []]>}
// FREE-REPORT-NOT: largest_values
// FREE-REPORT: "memory_bound_bytes_per_device": 85899345920,
// FREE-REPORT-NEXT: "memory_bytes_per_device": 7938048,
// FREE-REPORT-NEXT: "memory_fits": true,
// FREE-REPORT-NOT: unbounded

// SMALL-LABEL: func.func @mlp
// SMALL-SAME: %arg3: tensor<256x1024xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}], [mp]]>}
// SMALL-SAME: %arg4: tensor<1024x256xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}mp], []]>}
// SMALL-SAME: %arg5: tensor<256x1024xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}], [mp]]>}
// SMALL-SAME: %arg6: tensor<1024x256xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}mp], []]>}
// SMALL-SAME: %arg7: tensor<256x1024xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}], []]>}
// SMALL-SAME: %arg8: tensor<1024x256xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}], []]>}
// Which values dominate the bounded plan: layer 3's weights, replicated
// (1 MiB each), then 256 KiB shards.
// SMALL-REPORT: "largest_values_per_device": [
// SMALL-REPORT-NEXT: {
// SMALL-REPORT-NEXT: "bytes": 1048576,
// SMALL-REPORT-NEXT: "value": "@mlp:%arg7"
// SMALL-REPORT-NEXT: },
// SMALL-REPORT-NEXT: {
// SMALL-REPORT-NEXT: "bytes": 1048576,
// SMALL-REPORT-NEXT: "value": "@mlp:%arg8"
// SMALL-REPORT-NEXT: },
// SMALL-REPORT-NEXT: {
// SMALL-REPORT-NEXT: "bytes": 262144,
// SMALL-REPORT: "memory_bound_bytes_per_device": 5368709.{{[0-9]*}},
// SMALL-REPORT-NEXT: "memory_bytes_per_device": 4939776,
// SMALL-REPORT-NEXT: "memory_fits": true,
// SMALL-REPORT: "solver_cost_us": [[COST:6\.931[0-9]{6}]]
// SMALL-REPORT: "total_cost_us": [[COST]]
// SMALL-REPORT-NEXT: "unbounded_cost_us": 2.27
// SMALL-REPORT-NEXT: "unbounded_memory_bytes_per_device": 7938048
// SMALL-REPORT-NEXT: "unrepaired_cost_us": 7.137
// SMALL-REPORT-NEXT: "unrepaired_memory_bytes_per_device": 4644864

// MID-LABEL: func.func @mlp
// MID-SAME: %arg3: tensor<256x1024xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}], [mp]]>}
// MID-SAME: %arg4: tensor<1024x256xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}mp], []]>}
// MID-SAME: %arg5: tensor<256x1024xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}], []]>}
// MID-SAME: %arg6: tensor<1024x256xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}], []]>}
// MID-SAME: %arg7: tensor<256x1024xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}], []]>}
// MID-SAME: %arg8: tensor<1024x256xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}], []]>}
// MID-REPORT: "memory_bound_bytes_per_device": 6442450.{{[0-9]*}},
// MID-REPORT-NEXT: "memory_bytes_per_device": 6438912,
// MID-REPORT-NEXT: "memory_fits": true,
// MID-REPORT: "total_cost_us": 4.603
// MID-REPORT-NEXT: "unbounded_cost_us": 2.27
// MID-REPORT-NEXT: "unbounded_memory_bytes_per_device": 7938048
// MID-REPORT-NEXT: "unrepaired_cost_us": 7.137
// MID-REPORT-NEXT: "unrepaired_memory_bytes_per_device": 4644864

// AGREE: agree:

// TINY: error: dist-propagate: no plan fits memory_gib = 0.0001 (107374 bytes per device); the smallest plan found needs {{[0-9]+}} bytes per device
// TINY-NOT: see current operation

#mesh = #dist.mesh<[dp = 2, mp = 4]>
#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {dist.mesh = #mesh} {
  func.func @mlp(%x: tensor<64x256xf32>, %w1_0: tensor<256x1024xf32>, %w2_0: tensor<1024x256xf32>, %w1_1: tensor<256x1024xf32>, %w2_1: tensor<1024x256xf32>, %w1_2: tensor<256x1024xf32>, %w2_2: tensor<1024x256xf32>, %w1_3: tensor<256x1024xf32>, %w2_3: tensor<1024x256xf32>) -> tensor<64x256xf32> {
    %zero = arith.constant 0.0 : f32
    %w1_0s = dist.annotate %w1_0 : tensor<256x1024xf32> as #dist.layout<#mesh, [[], [mp]]>
    %e1_0 = tensor.empty() : tensor<64x1024xf32>
    %i1_0 = linalg.fill ins(%zero : f32) outs(%e1_0 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %h_0 = linalg.matmul ins(%x, %w1_0s : tensor<64x256xf32>, tensor<256x1024xf32>) outs(%i1_0 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %et_0 = tensor.empty() : tensor<64x1024xf32>
    %a_0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h_0 : tensor<64x1024xf32>) outs(%et_0 : tensor<64x1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.tanh %in : f32
      linalg.yield %t : f32
    } -> tensor<64x1024xf32>
    %e2_0 = tensor.empty() : tensor<64x256xf32>
    %i2_0 = linalg.fill ins(%zero : f32) outs(%e2_0 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %y_0 = linalg.matmul ins(%a_0, %w2_0 : tensor<64x1024xf32>, tensor<1024x256xf32>) outs(%i2_0 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %e1_1 = tensor.empty() : tensor<64x1024xf32>
    %i1_1 = linalg.fill ins(%zero : f32) outs(%e1_1 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %h_1 = linalg.matmul ins(%y_0, %w1_1 : tensor<64x256xf32>, tensor<256x1024xf32>) outs(%i1_1 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %et_1 = tensor.empty() : tensor<64x1024xf32>
    %a_1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h_1 : tensor<64x1024xf32>) outs(%et_1 : tensor<64x1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.tanh %in : f32
      linalg.yield %t : f32
    } -> tensor<64x1024xf32>
    %e2_1 = tensor.empty() : tensor<64x256xf32>
    %i2_1 = linalg.fill ins(%zero : f32) outs(%e2_1 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %y_1 = linalg.matmul ins(%a_1, %w2_1 : tensor<64x1024xf32>, tensor<1024x256xf32>) outs(%i2_1 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %e1_2 = tensor.empty() : tensor<64x1024xf32>
    %i1_2 = linalg.fill ins(%zero : f32) outs(%e1_2 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %h_2 = linalg.matmul ins(%y_1, %w1_2 : tensor<64x256xf32>, tensor<256x1024xf32>) outs(%i1_2 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %et_2 = tensor.empty() : tensor<64x1024xf32>
    %a_2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h_2 : tensor<64x1024xf32>) outs(%et_2 : tensor<64x1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.tanh %in : f32
      linalg.yield %t : f32
    } -> tensor<64x1024xf32>
    %e2_2 = tensor.empty() : tensor<64x256xf32>
    %i2_2 = linalg.fill ins(%zero : f32) outs(%e2_2 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %y_2 = linalg.matmul ins(%a_2, %w2_2 : tensor<64x1024xf32>, tensor<1024x256xf32>) outs(%i2_2 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %e1_3 = tensor.empty() : tensor<64x1024xf32>
    %i1_3 = linalg.fill ins(%zero : f32) outs(%e1_3 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %h_3 = linalg.matmul ins(%y_2, %w1_3 : tensor<64x256xf32>, tensor<256x1024xf32>) outs(%i1_3 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %et_3 = tensor.empty() : tensor<64x1024xf32>
    %a_3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h_3 : tensor<64x1024xf32>) outs(%et_3 : tensor<64x1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.tanh %in : f32
      linalg.yield %t : f32
    } -> tensor<64x1024xf32>
    %e2_3 = tensor.empty() : tensor<64x256xf32>
    %i2_3 = linalg.fill ins(%zero : f32) outs(%e2_3 : tensor<64x256xf32>) -> tensor<64x256xf32>
    %y_3 = linalg.matmul ins(%a_3, %w2_3 : tensor<64x1024xf32>, tensor<1024x256xf32>) outs(%i2_3 : tensor<64x256xf32>) -> tensor<64x256xf32>
    return %y_3 : tensor<64x256xf32>
  }
}
