// --dist-propagate is idempotent: propagating its own output changes
// nothing, neither the IR (every op keeps its strategy, no reshard is
// added) nor the report (the reshards it emitted, now in the input, are
// priced and counted like the ones it emits; a layout-free op keeps the
// partial-sum layout its consumer gave it).
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-opt %s --dist-propagate=report=%t/a1.json -o %t/a1.mlir
// RUN: autoshard-opt %t/a1.mlir --dist-propagate=report=%t/a2.json -o %t/a2.mlir
// RUN: diff %t/a1.mlir %t/a2.mlir
// RUN: %python %S/Inputs/same_reports.py %t/a1.json %t/a2.json | FileCheck %s --check-prefix=SAME
// RUN: FileCheck %s --input-file=%t/a1.mlir
//
// A GPT stack (partial sums on zero fills, shared reshards), its training
// step, and the 3-axis solver fallback.
// RUN: %python %autoshard_src/scripts/gen_models.py gpt --layers 2 > %t/gpt.mlir
// RUN: autoshard-opt %t/gpt.mlir --dist-propagate=report=%t/g1.json -o %t/g1.mlir
// RUN: autoshard-opt %t/g1.mlir --dist-propagate=report=%t/g2.json -o %t/g2.mlir
// RUN: diff %t/g1.mlir %t/g2.mlir
// RUN: %python %S/Inputs/same_reports.py %t/g1.json %t/g2.json | FileCheck %s --check-prefix=SAME
// RUN: autoshard-opt %autoshard_src/examples/gpt-train.mlir --dist-training-step --dist-propagate=report=%t/t1.json -o %t/t1.mlir
// RUN: autoshard-opt %t/t1.mlir --dist-propagate=report=%t/t2.json -o %t/t2.mlir
// RUN: diff %t/t1.mlir %t/t2.mlir
// RUN: %python %S/Inputs/same_reports.py %t/t1.json %t/t2.json | FileCheck %s --check-prefix=SAME
// RUN: autoshard-opt %t/gpt.mlir --dist-propagate="solver=local report=%t/l1.json" -o %t/l1.mlir
// RUN: autoshard-opt %t/l1.mlir --dist-propagate="solver=local report=%t/l2.json" -o %t/l2.mlir
// RUN: diff %t/l1.mlir %t/l2.mlir
// RUN: %python %S/Inputs/same_reports.py %t/l1.json %t/l2.json | FileCheck %s --check-prefix=SAME
//
// A reshard in the input is priced and counted like one the pass emits:
// the propagation report agrees with the partitioned program.
// RUN: autoshard-opt %t/a1.mlir --pass-pipeline='builtin.module(dist-propagate{report=%t/r.p.json},dist-partition{report=%t/r.q.json})' -o %t/r.mlir
// RUN: %python %S/Inputs/compare_reports.py %t/r.p.json %t/r.q.json all_reduce=1 | FileCheck %s --check-prefix=AGREE
// RUN: %python %S/Inputs/ir_collectives.py %t/r.mlir %t/r.p.json | FileCheck %s --check-prefix=AGREE-IR
// RUN: FileCheck %s --check-prefix=PRICED < %t/a2.json

// SAME: same
// AGREE: agree: {'all_reduce': 1}, 1536 bytes per device
// AGREE-IR: agree: propagate {'all_reduce': 1}, 1536 bytes per device
// The second run's objective includes the reshard it found in its input
// (2.010 us, the all-reduce; the first run's objective is the same).
// PRICED: "reshards": 1
// PRICED: "solver_cost_us": 2.0102{{[0-9]*}}

// CHECK: %[[INIT:.*]] = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = {{\[\[}}[], []] partial sum [mp]]>}
// CHECK: dist.reshard {{.*}} partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}], []]>

#mesh = #dist.mesh<[mp = 4]>
module attributes {dist.mesh = #mesh} {
  // Row-parallel matmul: the output is a pending sum over mp, all-reduced
  // for the result; the zero fill takes the partial layout.
  func.func @row_parallel(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>) -> tensor<8x32xf32> {
    %xs = dist.annotate %x : tensor<8x64xf32> as #dist.layout<#mesh, [[], [mp]]>
    %ws = dist.annotate %w : tensor<64x32xf32> as #dist.layout<#mesh, [[mp], []]>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x32xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
    %y = linalg.matmul ins(%xs, %ws : tensor<8x64xf32>, tensor<64x32xf32>) outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
    return %y : tensor<8x32xf32>
  }
}
