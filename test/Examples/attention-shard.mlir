// The upstream-`shard` flavour of attention defaults to the einsum form
// (linalg.generic contractions and reductions, no reshapes, no
// linalg.softmax): upstream sharding-propagation has no model for
// tensor.expand_shape/collapse_shape or linalg.softmax and stops on them.
// REQUIRES: upstream-mlir-opt
// RUN: %python %autoshard_src/scripts/gen_models.py attention --batch 2 --seq 8 --heads 4 --head-dim 16 --annotate shard --causal \
// RUN:   | FileCheck %s --check-prefix=GEN
// RUN: %python %autoshard_src/scripts/gen_models.py attention --batch 2 --seq 8 --heads 4 --head-dim 16 --annotate shard --causal \
// RUN:   | autoshard-opt -o /dev/null
// RUN: %python %autoshard_src/scripts/gen_models.py attention --batch 2 --seq 8 --heads 4 --head-dim 16 --annotate shard --causal \
// RUN:   | mlir-opt --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition))' \
// RUN:   | FileCheck %s
// The same form annotated for autoshard.
// RUN: %python %autoshard_src/scripts/gen_models.py attention --batch 2 --seq 8 --heads 4 --head-dim 16 --form einsum \
// RUN:   | autoshard-opt | FileCheck %s --check-prefix=DIST

// Wq/Wk/Wv are [E, NH, D] (the bytes of [E, E]) split on heads, Wo is
// [NH, D, E] split on heads.
// GEN: shard.grid @grid(shape = 2x4)
// GEN: func.func @main(%x: tensor<2x8x64xf32>, %wq: tensor<64x4x16xf32>, %wk: tensor<64x4x16xf32>, %wv: tensor<64x4x16xf32>, %wo: tensor<4x16x64xf32>)
// GEN: shard.shard %x to %{{.*}} : tensor<2x8x64xf32>
// GEN: split_axes = {{\[\[}}], [1]]
// GEN-NEXT: shard.shard %wq
// GEN: split_axes = {{\[\[}}1]]
// GEN-NEXT: shard.shard %wo
// GEN-NOT: tensor.expand_shape
// GEN-NOT: tensor.collapse_shape
// GEN-NOT: linalg.softmax
// GEN: linalg.index 2
// GEN: linalg.index 3
// GEN: math.exp
// GEN: return %{{.*}} : tensor<2x8x64xf32>

// Per device: batch / 2, heads / 4.
// CHECK: func.func @main(%{{.*}}: tensor<1x8x64xf32>, %{{.*}}: tensor<64x1x16xf32>, %{{.*}}: tensor<64x1x16xf32>, %{{.*}}: tensor<64x1x16xf32>, %{{.*}}: tensor<1x16x64xf32>)
// CHECK: shard.all_reduce {{.*}} grid_axes = [1]
// CHECK-NOT: shard.shard

// DIST: dist.annotate %{{.*}} : tensor<64x4x16xf32> as #dist.layout<#mesh, {{\[\[}}], [mp], []]>
// DIST: dist.annotate %{{.*}} : tensor<4x16x64xf32> as #dist.layout<#mesh, {{\[\[}}mp], [], []]>
// DIST-COUNT-5: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
