// The upstream-`shard` flavour of the MLP: autoshard-opt and Debian's
// mlir-opt parse it, and upstream propagation + partitioning run on it.
// REQUIRES: upstream-mlir-opt
// RUN: %python %autoshard_src/scripts/gen_models.py mlp --layers 2 --batch 8 --hidden 16 --ffn 64 --annotate shard \
// RUN:   | FileCheck %s --check-prefix=GEN
// RUN: %python %autoshard_src/scripts/gen_models.py mlp --layers 2 --batch 8 --hidden 16 --ffn 64 --annotate shard \
// RUN:   | autoshard-opt -o /dev/null
// RUN: %python %autoshard_src/scripts/gen_models.py mlp --layers 2 --batch 8 --hidden 16 --ffn 64 --annotate shard \
// RUN:   | mlir-opt --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition))' \
// RUN:   | FileCheck %s

// GEN: shard.grid @grid(shape = 2x4)
// GEN: %[[S0:.*]] = shard.sharding @grid split_axes = {{\[\[}}0]] : !shard.sharding
// GEN-NEXT: shard.shard %x to %[[S0]] : tensor<8x16xf32>
// GEN: %[[S1:.*]] = shard.sharding @grid split_axes = {{\[\[}}], [1]] : !shard.sharding
// GEN-NEXT: shard.shard %w1_0 to %[[S1]] : tensor<16x64xf32>
// GEN: %[[S2:.*]] = shard.sharding @grid split_axes = {{\[\[}}1]] : !shard.sharding
// GEN-NEXT: shard.shard %w2_0 to %[[S2]] : tensor<64x16xf32>
// GEN-NOT: dist.

// Local shapes on the 2x4 grid: batch / 2, ffn / 4.
// CHECK: shard.grid @grid(shape = 2x4)
// CHECK: func.func @main(%{{.*}}: tensor<4x16xf32>, %{{.*}}: tensor<16x16xf32>, %{{.*}}: tensor<16x16xf32>, %{{.*}}: tensor<16x16xf32>, %{{.*}}: tensor<16x16xf32>)
// CHECK: shard.all_reduce {{.*}} grid_axes = [1]
// CHECK-NOT: shard.shard
