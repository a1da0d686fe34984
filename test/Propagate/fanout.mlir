// Fan-out as a choice: x, split over both axes of a 2x4 grid, is read by
// two matmuls that want it split over g1 and two over g0. No reader's
// layout is a good shared one; the common intermediate is: one all-gather
// to replicated (7/8 of 256 KiB = 229,376 B per device), then local slices
// for every reader (two all-gathers from the producer moved 327,680 B).
// The objective the report gives is the cost of the reshards emitted, and
// the partitioned program's collectives (counted from its IR) are those the
// report promised, with every solver.
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-opt %s --dist-propagate=report=%t/p.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t/p.json
// RUN: autoshard-opt %s --pass-pipeline='builtin.module(dist-propagate{report=%t/p.json},dist-partition)' -o %t/dp.mlir
// RUN: %python %S/Inputs/ir_collectives.py %t/dp.mlir %t/p.json | FileCheck %s --check-prefix=IR
// RUN: autoshard-opt %s --pass-pipeline='builtin.module(dist-propagate{solver=local report=%t/l.json},dist-partition)' -o %t/l.mlir
// RUN: %python %S/Inputs/ir_collectives.py %t/l.mlir %t/l.json | FileCheck %s --check-prefix=IR
// RUN: autoshard-opt %s --pass-pipeline='builtin.module(dist-propagate{solver=exact report=%t/e.json},dist-partition)' -o %t/e.mlir
// RUN: %python %S/Inputs/ir_collectives.py %t/e.mlir %t/e.json | FileCheck %s --check-prefix=IR

// CHECK: %[[X:.*]] = dist.annotate
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[X]] {{.*}} from #dist.layout<#mesh, {{\[\[}}g0, g1], []]> to #dist.layout<#mesh, {{\[\[}}], []]>
// CHECK-NEXT: %[[G0:.*]] = dist.reshard %[[R]] {{.*}} from #dist.layout<#mesh, {{\[\[}}], []]> to #dist.layout<#mesh, {{\[\[}}g0], []]>
// CHECK-NEXT: %[[G1:.*]] = dist.reshard %[[R]] {{.*}} from #dist.layout<#mesh, {{\[\[}}], []]> to #dist.layout<#mesh, {{\[\[}}g1], []]>
// CHECK-NOT: dist.reshard %[[X]]
// CHECK: linalg.matmul {{.*}} ins(%[[G1]],
// CHECK: linalg.matmul {{.*}} ins(%[[G1]],
// CHECK: linalg.matmul {{.*}} ins(%[[G0]],
// CHECK: linalg.matmul {{.*}} ins(%[[G0]],

// REPORT: "collectives": {
// REPORT-NEXT: "all_gather": 1,
// REPORT-NEXT: "all_slice": 4
// REPORT: "comm_bytes_per_device": 229376,
// REPORT: "solver_cost_us": [[COST:[0-9]+\.[0-9]{9}]]
// REPORT: "total_cost_us": [[COST]]

// IR: agree: propagate {'all_gather': 1, 'all_slice': 4}, 229376 bytes per device

#mesh = #dist.mesh<[g0 = 2, g1 = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<256x256xf32>, %w: tensor<256x256xf32>) -> (tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>) {
    %xs = dist.annotate %x : tensor<256x256xf32> as #dist.layout<#mesh, [[g0, g1], []]>
    %e = tensor.empty() : tensor<256x256xf32>
    %y0 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[g1], []], [[], []], [[g1], []]], out = [[[g1], []]]>} ins(%xs, %w : tensor<256x256xf32>, tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
    %y1 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[g1], []], [[], []], [[g1], []]], out = [[[g1], []]]>} ins(%xs, %w : tensor<256x256xf32>, tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
    %y2 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[g0], []], [[], []], [[g0], []]], out = [[[g0], []]]>} ins(%xs, %w : tensor<256x256xf32>, tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
    %y3 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[g0], []], [[], []], [[g0], []]], out = [[[g0], []]]>} ins(%xs, %w : tensor<256x256xf32>, tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
    return %y0, %y1, %y2, %y3 : tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>
  }
}
