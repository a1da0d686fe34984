// The upstream-`shard` GPT (einsum form): embedding lookup as a masked sum
// over the vocabulary (upstream has no sharding model for tensor.gather),
// softmax as generics, no reshapes; upstream propagation + partitioning run
// on it. The table stays unannotated: the lookup indexes the vocabulary with
// linalg.index, which upstream partitioning leaves local.
// REQUIRES: upstream-mlir-opt
// RUN: %python %autoshard_src/scripts/gen_models.py gpt --layers 2 --annotate shard > %t.mlir
// RUN: FileCheck %s --check-prefix=GEN < %t.mlir
// RUN: autoshard-opt %t.mlir -o /dev/null
// RUN: mlir-opt --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition))' %t.mlir \
// RUN:   | FileCheck %s

// GEN: shard.grid @grid(shape = 2x4)
// GEN: func.func @main(%ids: tensor<4x8xi64>, %wte: tensor<64x32xf32>, %wpe: tensor<8x32xf32>
// GEN-SAME: %wq_0: tensor<32x4x8xf32>
// GEN-SAME: %wo_0: tensor<4x8x32xf32>
// GEN-SAME: -> tensor<4x8x64xf32>
// GEN: shard.shard %ids to
// GEN-NOT: shard.shard %wte
// GEN-NOT: tensor.gather
// GEN-NOT: linalg.softmax
// GEN-NOT: tensor.expand_shape
// GEN-NOT: tensor.collapse_shape
// GEN-NOT: arith.constant dense
// GEN: return

// CHECK: shard.grid @grid(shape = 2x4)
// CHECK: func.func @main(%{{.*}}: tensor<2x8xi64>
// CHECK: shard.all_reduce
// CHECK-NOT: shard.shard
