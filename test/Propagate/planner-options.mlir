// One planner decision per module: --dist-propagate records its planner
// options on the module (dist.planner) and --dist-partition plans with them,
// so an option given to the propagate pass alone reaches the partition; an
// explicit option that disagrees with the record is an error.
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-opt %s --dist-propagate=enable-alltoall=true | FileCheck %s --check-prefix=RECORD
// RUN: autoshard-opt %s --dist-propagate | FileCheck %s --check-prefix=DEFAULT
//
// The all-to-all option on the propagate pass alone: the report's bytes are
// the partitioned program's, counted from its IR (before, the partition
// planned without all_to_all: all_gather + 2 all_slice, 768 B for 192 B).
// RUN: autoshard-opt %s --pass-pipeline='builtin.module(dist-propagate{enable-alltoall=true report=%t/p.json},dist-partition)' -o %t/part.mlir
// RUN: %python %S/Inputs/ir_collectives.py %t/part.mlir %t/p.json | FileCheck %s --check-prefix=AGREE
// AGREE: ir: {'all_slice': 1, 'all_to_all': 1}, 192 bytes per device
// AGREE-NEXT: agree: propagate {'all_slice': 1, 'all_to_all': 1}, 192 bytes per device
//
// The same on attention blocks (both forms the generator writes).
// RUN: %python %autoshard_src/scripts/gen_models.py attention --batch 8 --seq 64 --heads 8 --head-dim 32 \
// RUN:   | autoshard-opt --pass-pipeline='builtin.module(dist-propagate{enable-alltoall=true report=%t/att.json},dist-partition)' -o %t/att.mlir
// RUN: %python %S/Inputs/ir_collectives.py %t/att.mlir %t/att.json | FileCheck %s --check-prefix=ATT
// ATT: agree: propagate {'all_gather': 1, 'all_slice': 1, 'reduce_scatter': 1}, 458752 bytes per device
// RUN: %python %autoshard_src/scripts/gen_models.py attention --form einsum \
// RUN:   | autoshard-opt --pass-pipeline='builtin.module(dist-propagate{enable-alltoall=true report=%t/atte.json},dist-partition)' -o %t/atte.mlir
// RUN: %python %S/Inputs/ir_collectives.py %t/atte.mlir %t/atte.json | FileCheck %s --check-prefix=ATTE
// ATTE: agree: propagate {'all_reduce': 1}, 3072 bytes per device
//
// Conflicting explicit options are an error, in either pass.
// RUN: not autoshard-opt %s --pass-pipeline='builtin.module(dist-propagate{enable-alltoall=true},dist-partition{enable-alltoall=false})' 2>&1 | FileCheck %s --check-prefix=CONFLICT
// RUN: autoshard-opt %s --dist-propagate=enable-alltoall=true -o %t/prop.mlir
// RUN: not autoshard-opt %t/prop.mlir --dist-propagate=enable-alltoall=false 2>&1 | FileCheck %s --check-prefix=CONFLICT2
// A pass without the option follows the record.
// RUN: autoshard-opt %t/prop.mlir --dist-propagate | FileCheck %s --check-prefix=RECORD
// RUN: autoshard-opt %t/prop.mlir --dist-partition | FileCheck %s --check-prefix=FOLLOW

// RECORD: module attributes {dist.mesh = #mesh, dist.planner = {enable_alltoall = true}}
// DEFAULT: module attributes {dist.mesh = #mesh, dist.planner = {enable_alltoall = false}}
// CONFLICT: error: dist-partition: option enable-alltoall=false conflicts with the module's planner options {enable_alltoall = true}
// CONFLICT2: error: dist-propagate: option enable-alltoall=false conflicts with the module's planner options {enable_alltoall = true}
// FOLLOW: shard.all_to_all

#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
  // An axis moves between dims: one all_to_all with the option.
  func.func @moves(%x: tensor<4x8x16xf32>) -> tensor<32x16xf32> {
    %xs = dist.annotate %x : tensor<4x8x16xf32> as #dist.layout<#mesh, [[], [mp], []]>
    %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
    return %c : tensor<32x16xf32>
  }
}
