// --dist-fuse-gradients on partitioned training steps.
//
// The Megatron MLP of test/Train (2 layers, dp=2 x mp=2, batch over dp): its
// four weight gradients leave their matmuls as partial sums over dp (local
// 1024x512 / 512x1024 f32, 2 MiB each); the fifth gradient collective is the
// input gradient's all-reduce over mp, which the next backward matmul needs
// at once. Default threshold (64 MB): the four dp all-reduces become one,
// right after the last weight gradient is produced.
// RUN: autoshard-opt %S/../Train/Inputs/megatron-mlp.mlir --dist-training-step='loss=mse optimizer=sgd lr=0.1 data-axis=dp' --dist-propagate --dist-partition --dist-fuse-gradients='report=-' | FileCheck %s
// Threshold 4 MB: two buckets of two, the first placed right after its
// second gradient, before the backward goes on.
// RUN: autoshard-opt %S/../Train/Inputs/megatron-mlp.mlir --dist-training-step='loss=mse optimizer=sgd lr=0.1 data-axis=dp' --dist-propagate --dist-partition --dist-fuse-gradients='threshold-mb=4 report=-' | FileCheck %s --check-prefix=FOUR
// Threshold 0: nothing changes.
// RUN: autoshard-opt %S/../Train/Inputs/megatron-mlp.mlir --dist-training-step='loss=mse optimizer=sgd lr=0.1 data-axis=dp' --dist-propagate --dist-partition --dist-fuse-gradients='threshold-mb=0 report=-' | FileCheck %s --check-prefix=OFF --implicit-check-not=tensor.concat
// The JSON report.
// RUN: autoshard-opt %S/../Train/Inputs/megatron-mlp.mlir --dist-training-step='loss=mse optimizer=sgd lr=0.1 data-axis=dp' --dist-propagate --dist-partition --dist-fuse-gradients='report=%t.json' -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// autoshard-pipeline forwards fusion-threshold-mb and fusion-report.
// RUN: autoshard-opt %S/../Train/Inputs/megatron-mlp.mlir --dist-training-step='loss=mse optimizer=sgd lr=0.1 data-axis=dp' --autoshard-pipeline='fusion-threshold-mb=4 fusion-report=-' | FileCheck %s --check-prefix=PIPE
// Without a training step (no backward op) the pass does nothing.
// RUN: autoshard-opt %S/megatron-mlp.mlir --dist-partition --dist-fuse-gradients='report=-' | FileCheck %s --check-prefix=FORWARD
// The propagation report counts the collectives already in the
// hand-written programs (0 B before: they run whatever the plan) with the
// bytes the partition report counts on them: 660 and 512, 1,172 B in all.
// RUN: autoshard-opt %s --split-input-file --dist-propagate='report=-' -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=PROP
// RUN: autoshard-opt %s --split-input-file --dist-propagate --dist-partition='report=-' -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=PART
// PROP: collectives: all_reduce=5 reduce_scatter=3
// PROP-NEXT: comm bytes per device: 660
// PROP: collectives: all_reduce=4 all_slice=3
// PROP-NEXT: comm bytes per device: 512
// PART: "comm_bytes_per_device": 660,
// PART: "comm_bytes_per_device": 512,
// Hand-written partitioned programs below.
// RUN: autoshard-opt %s --split-input-file --dist-fuse-gradients='report=-' | FileCheck %s --check-prefix=HAND

// CHECK: dist-fuse-gradients: 5 gradient collectives -> 2 (1 fused bucket: 4 x all_reduce 8388608 B; threshold 64 MB)
// CHECK-LABEL: func.func @train_step
// CHECK: %[[G0:.+]] = linalg.matmul {dist.phase = "backward"} {{.*}} -> tensor<1024x512xf32>
// CHECK-NOT: grid_axes = [0]
// CHECK: shard.all_reduce %{{.*}} on @mesh grid_axes = [1] : tensor<2048x512xf32>
// CHECK: %[[G1:.+]] = linalg.matmul {dist.phase = "backward"} {{.*}} -> tensor<512x1024xf32>
// CHECK-NOT: grid_axes = [0]
// CHECK: %[[G2:.+]] = linalg.matmul {dist.phase = "backward"} {{.*}} -> tensor<1024x512xf32>
// CHECK-NOT: grid_axes = [0]
// CHECK: %[[G3:.+]] = linalg.matmul {dist.phase = "backward"} {{.*}} -> tensor<512x1024xf32>
// CHECK-NEXT: %[[C0:.+]] = tensor.collapse_shape %[[G0]] {{\[}}[0, 1]] {dist.phase = "backward"} : tensor<1024x512xf32> into tensor<524288xf32>
// CHECK-NEXT: %[[C1:.+]] = tensor.collapse_shape %[[G1]] {{\[}}[0, 1]] {dist.phase = "backward"} : tensor<512x1024xf32> into tensor<524288xf32>
// CHECK-NEXT: %[[C2:.+]] = tensor.collapse_shape %[[G2]]
// CHECK-NEXT: %[[C3:.+]] = tensor.collapse_shape %[[G3]]
// CHECK-NEXT: %[[CAT:.+]] = tensor.concat dim(0) %[[C0]], %[[C1]], %[[C2]], %[[C3]] {dist.phase = "backward"} : {{.*}} -> tensor<2097152xf32>
// CHECK-NEXT: %[[AR:.+]] = shard.all_reduce %[[CAT]] on @mesh grid_axes = [0] : tensor<2097152xf32> -> tensor<2097152xf32>
// CHECK-NEXT: %[[S0:.+]] = tensor.extract_slice %[[AR]][0] [524288] [1] {dist.phase = "backward"} : tensor<2097152xf32> to tensor<524288xf32>
// CHECK-NEXT: %[[D0:.+]] = tensor.expand_shape %[[S0]] {{\[}}[0, 1]] output_shape [1024, 512] {dist.phase = "backward"} : tensor<524288xf32> into tensor<1024x512xf32>
// CHECK-NEXT: %[[S1:.+]] = tensor.extract_slice %[[AR]][524288] [524288] [1]
// CHECK-NEXT: %[[D1:.+]] = tensor.expand_shape %[[S1]] {{\[}}[0, 1]] output_shape [512, 1024]
// CHECK-NEXT: %[[S2:.+]] = tensor.extract_slice %[[AR]][1048576] [524288] [1]
// CHECK-NEXT: %[[D2:.+]] = tensor.expand_shape %[[S2]] {{\[}}[0, 1]] output_shape [1024, 512]
// CHECK-NEXT: %[[S3:.+]] = tensor.extract_slice %[[AR]][1572864] [524288] [1]
// CHECK-NEXT: %[[D3:.+]] = tensor.expand_shape %[[S3]] {{\[}}[0, 1]] output_shape [512, 1024]
// CHECK-NOT: shard.all_reduce
// The updates read the reduced slices (the last gradient is the first
// parameter's).
// CHECK: linalg.generic {{.*}} ins(%[[D3]], %arg0 :
// CHECK: linalg.generic {{.*}} ins(%[[D2]], %arg1 :
// CHECK: linalg.generic {{.*}} ins(%[[D1]], %arg2 :
// CHECK: linalg.generic {{.*}} ins(%[[D0]], %arg3 :

// FOUR: dist-fuse-gradients: 5 gradient collectives -> 3 (2 fused buckets: 2 x all_reduce 4194304 B, 2 x all_reduce 4194304 B; threshold 4 MB)
// FOUR: %[[G0:.+]] = linalg.matmul {dist.phase = "backward"} {{.*}} -> tensor<1024x512xf32>
// FOUR: %[[G1:.+]] = linalg.matmul {dist.phase = "backward"} {{.*}} -> tensor<512x1024xf32>
// FOUR-NEXT: %[[C0:.+]] = tensor.collapse_shape %[[G0]]
// FOUR-NEXT: %[[C1:.+]] = tensor.collapse_shape %[[G1]]
// FOUR-NEXT: %[[CAT:.+]] = tensor.concat dim(0) %[[C0]], %[[C1]] {{.*}} -> tensor<1048576xf32>
// FOUR-NEXT: shard.all_reduce %[[CAT]] on @mesh grid_axes = [0] : tensor<1048576xf32> -> tensor<1048576xf32>
// FOUR: %[[G2:.+]] = linalg.matmul {dist.phase = "backward"} {{.*}} -> tensor<1024x512xf32>
// FOUR: %[[G3:.+]] = linalg.matmul {dist.phase = "backward"} {{.*}} -> tensor<512x1024xf32>
// FOUR-NEXT: %[[C2:.+]] = tensor.collapse_shape %[[G2]]
// FOUR-NEXT: %[[C3:.+]] = tensor.collapse_shape %[[G3]]
// FOUR-NEXT: %[[CAT2:.+]] = tensor.concat dim(0) %[[C2]], %[[C3]] {{.*}} -> tensor<1048576xf32>
// FOUR-NEXT: shard.all_reduce %[[CAT2]] on @mesh grid_axes = [0] : tensor<1048576xf32> -> tensor<1048576xf32>

// OFF: dist-fuse-gradients: 5 gradient collectives -> 5 (0 fused buckets; threshold 0 MB)
// OFF-COUNT-4: shard.all_reduce {{.*}} grid_axes = [0] : tensor<{{1024x512|512x1024}}xf32>

// JSON-DAG: "pass": "dist-fuse-gradients"
// JSON-DAG: "gradient_collectives_before": 5
// JSON-DAG: "gradient_collectives_after": 2
// JSON-DAG: "fused_buckets": 1
// JSON-DAG: "gradient_bytes_per_device": 12582912
// JSON-DAG: "bytes": 8388608
// JSON-DAG: "collectives": 4
// JSON-DAG: "kind": "all_reduce"
// JSON-DAG: "reduction": "sum"
// JSON-DAG: "element_type": "f32"
// JSON-DAG: "threshold_mb": 64

// PIPE: dist-fuse-gradients: 5 gradient collectives -> 3 (2 fused buckets
// PIPE-COUNT-2: shard.all_reduce %{{.*}} on @mesh grid_axes = [0] : tensor<1048576xf32>

// FORWARD: dist-fuse-gradients: 0 gradient collectives -> 0 (0 fused buckets; threshold 64 MB)
// FORWARD-COUNT-2: shard.all_reduce {{.*}} grid_axes = [1] : tensor<4x16xf32>

// Gradients of every rank, a reshape partitioning rebuilt without
// dist.phase, two reduce_scatters, and what stays alone.
module {
  shard.grid @mesh(shape = 2x2)
  func.func @kinds(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>, %x: tensor<4x8xf32>)
      -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<32xf32>, tensor<f32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<4xf32>, tensor<4x4xf32>) {
    %f = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
    %e = tensor.empty() : tensor<4x8xf32>
    %g0 = linalg.add {dist.phase = "backward"} ins(%a, %f : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %r0 = shard.all_reduce %g0 on @mesh grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
    %g1 = linalg.add {dist.phase = "backward"} ins(%a, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %c1 = tensor.collapse_shape %g1 [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
    %r1 = shard.all_reduce %c1 on @mesh grid_axes = [0] : tensor<32xf32> -> tensor<32xf32>
    %g2 = arith.addf %s, %s {dist.phase = "backward"} : tensor<f32>
    %r2 = shard.all_reduce %g2 on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
    %r3 = shard.all_reduce %g0 on @mesh grid_axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
    %r4 = shard.reduce_scatter %g1 on @mesh grid_axes = [0] scatter_axis = 0 : tensor<4x8xf32> -> tensor<2x8xf32>
    %e5 = tensor.empty() : tensor<8xf32>
    %g5 = linalg.add {dist.phase = "backward"} ins(%b, %b : tensor<8xf32>, tensor<8xf32>) outs(%e5 : tensor<8xf32>) -> tensor<8xf32>
    %r5 = shard.reduce_scatter %g5 on @mesh grid_axes = [0] scatter_axis = 0 : tensor<8xf32> -> tensor<4xf32>
    %r6 = shard.reduce_scatter %g0 on @mesh grid_axes = [0] scatter_axis = 1 : tensor<4x8xf32> -> tensor<4x4xf32>
    return %f, %r0, %r1, %r2, %r3, %r4, %r5, %r6 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<32xf32>, tensor<f32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<4xf32>, tensor<4x4xf32>
  }
}

// HAND: dist-fuse-gradients: 7 gradient collectives -> 4 (2 fused buckets: 3 x all_reduce 260 B, 2 x reduce_scatter 160 B; threshold 64 MB)
// HAND-LABEL: func.func @kinds
// A forward collective is no gradient.
// HAND: %[[F:.+]] = shard.all_reduce %arg3 on @mesh grid_axes = [0] : tensor<4x8xf32>
// HAND: %[[G0:.+]] = linalg.add
// HAND: %[[G1:.+]] = linalg.add
// HAND: %[[R1:.+]] = tensor.collapse_shape %[[G1]] {{\[}}[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
// HAND: %[[G2:.+]] = arith.addf
// A rank-1 gradient goes in as it is; a rank-0 one as tensor<1xf32>.
// HAND-NEXT: %[[C0:.+]] = tensor.collapse_shape %[[G0]] {{\[}}[0, 1]] {dist.phase = "backward"}
// HAND-NEXT: %[[C2:.+]] = tensor.expand_shape %[[G2]] [] output_shape [1] {dist.phase = "backward"} : tensor<f32> into tensor<1xf32>
// HAND-NEXT: %[[CAT:.+]] = tensor.concat dim(0) %[[C0]], %[[R1]], %[[C2]] {{.*}} -> tensor<65xf32>
// HAND-NEXT: %[[AR:.+]] = shard.all_reduce %[[CAT]] on @mesh grid_axes = [0] : tensor<65xf32> -> tensor<65xf32>
// HAND-NEXT: %[[S0:.+]] = tensor.extract_slice %[[AR]][0] [32] [1]
// HAND-NEXT: %[[D0:.+]] = tensor.expand_shape %[[S0]] {{\[}}[0, 1]] output_shape [4, 8]
// HAND-NEXT: %[[D1:.+]] = tensor.extract_slice %[[AR]][32] [32] [1]
// HAND-NEXT: %[[S2:.+]] = tensor.extract_slice %[[AR]][64] [1] [1]
// HAND-NEXT: %[[D2:.+]] = tensor.collapse_shape %[[S2]] [] {dist.phase = "backward"} : tensor<1xf32> into tensor<f32>
// Alone on its axes: unchanged.
// HAND-NEXT: %[[R3:.+]] = shard.all_reduce %[[G0]] on @mesh grid_axes = [1]
// HAND: %[[G5:.+]] = linalg.add {{.*}} -> tensor<8xf32>
// Reduce-scatters: each operand viewed as [group, numel / group], concatenated
// on dim 1, scattered on dim 0.
// HAND-NEXT: %[[F1:.+]] = tensor.collapse_shape %[[G1]] {{\[}}[0, 1]] {{.*}} into tensor<32xf32>
// HAND-NEXT: %[[V1:.+]] = tensor.expand_shape %[[F1]] {{\[}}[0, 1]] output_shape [2, 16] {{.*}} into tensor<2x16xf32>
// HAND-NEXT: %[[V5:.+]] = tensor.expand_shape %[[G5]] {{\[}}[0, 1]] output_shape [2, 4] {{.*}} into tensor<2x4xf32>
// HAND-NEXT: %[[CAT2:.+]] = tensor.concat dim(1) %[[V1]], %[[V5]] {{.*}} -> tensor<2x20xf32>
// HAND-NEXT: %[[RS:.+]] = shard.reduce_scatter %[[CAT2]] on @mesh grid_axes = [0] scatter_axis = 0 : tensor<2x20xf32> -> tensor<1x20xf32>
// HAND-NEXT: %[[T4:.+]] = tensor.extract_slice %[[RS]][0, 0] [1, 16] [1, 1] {{.*}} to tensor<1x16xf32>
// HAND-NEXT: %[[U4:.+]] = tensor.collapse_shape %[[T4]] {{\[}}[0, 1]] {{.*}} into tensor<16xf32>
// HAND-NEXT: %[[D4:.+]] = tensor.expand_shape %[[U4]] {{\[}}[0, 1]] output_shape [2, 8] {{.*}} into tensor<2x8xf32>
// HAND-NEXT: %[[T5:.+]] = tensor.extract_slice %[[RS]][0, 16] [1, 4] [1, 1] {{.*}} to tensor<1x4xf32>
// HAND-NEXT: %[[D5:.+]] = tensor.collapse_shape %[[T5]] {{\[}}[0, 1]] {{.*}} into tensor<4xf32>
// Scattering dim 1 of a 4x8 shard is not a contiguous block: left alone.
// HAND-NEXT: %[[R6:.+]] = shard.reduce_scatter %[[G0]] on @mesh grid_axes = [0] scatter_axis = 1
// HAND-NEXT: return %[[F]], %[[D0]], %[[D1]], %[[D2]], %[[R3]], %[[D4]], %[[D5]], %[[R6]] :

// -----

// An activation gradient's all-reduce is needed by the next backward op, so
// the next one cannot join it; the weight gradients around them can, their
// collective moving to after the last of them.
module {
  shard.grid @mesh(shape = 2x2)
  func.func @deps(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
    %e = tensor.empty() : tensor<4x8xf32>
    %w0 = linalg.mul {dist.phase = "backward"} ins(%a, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %rw0 = shard.all_reduce %w0 on @mesh grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
    %d0 = linalg.add {dist.phase = "backward"} ins(%a, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %rd0 = shard.all_reduce %d0 on @mesh grid_axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
    %d1 = linalg.add {dist.phase = "backward"} ins(%rd0, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %rd1 = shard.all_reduce %d1 on @mesh grid_axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
    %w1 = linalg.mul {dist.phase = "backward"} ins(%rd1, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %rw1 = shard.all_reduce %w1 on @mesh grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
    %u = linalg.sub {dist.phase = "optimizer"} ins(%rw0, %rw1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    return %u, %rd1, %w1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
}
// HAND: dist-fuse-gradients: 4 gradient collectives -> 3 (1 fused bucket: 2 x all_reduce 256 B; threshold 64 MB)
// HAND-LABEL: func.func @deps
// HAND: %[[W0:.+]] = linalg.mul
// HAND-NEXT: %[[D0:.+]] = linalg.add
// HAND-NEXT: %[[RD0:.+]] = shard.all_reduce %[[D0]] on @mesh grid_axes = [1]
// HAND-NEXT: %[[D1:.+]] = linalg.add {dist.phase = "backward"} ins(%[[RD0]],
// HAND-NEXT: %[[RD1:.+]] = shard.all_reduce %[[D1]] on @mesh grid_axes = [1]
// HAND-NEXT: %[[W1:.+]] = linalg.mul {dist.phase = "backward"} ins(%[[RD1]],
// HAND-NEXT: %[[C0:.+]] = tensor.collapse_shape %[[W0]]
// HAND-NEXT: %[[C1:.+]] = tensor.collapse_shape %[[W1]]
// HAND-NEXT: %[[CAT:.+]] = tensor.concat dim(0) %[[C0]], %[[C1]]
// HAND-NEXT: shard.all_reduce %[[CAT]] on @mesh grid_axes = [0] : tensor<64xf32>
