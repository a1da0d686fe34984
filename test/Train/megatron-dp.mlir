// A two-block Megatron MLP trained data parallel on dp=2 x mp=2 (batch
// 4096, hidden 512, ffn 2048: sizes where the solver keeps both styles).
// Nothing in the backward is annotated: the collectives of data and tensor
// parallel training appear by themselves.
// RUN: autoshard-opt %S/Inputs/megatron-mlp.mlir --dist-training-step='loss=mse optimizer=sgd lr=0.1 data-axis=dp' --dist-propagate='report=%t.json' --dist-partition | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.json

// Forward: each row-parallel matmul's partial sum over mp is all-reduced.
// CHECK: shard.all_reduce %{{.*}} on @mesh grid_axes = [1] : tensor<2048x512xf32>
// The loss is a partial sum over both axes.
// CHECK: shard.all_reduce %{{.*}} on @mesh grid_axes = [0, 1] : tensor<f32>
// Backward: the gradient of a weight is a partial sum over the batch split
// (dp), all-reduced there ...
// CHECK: %[[DW:.*]] = linalg.matmul {dist.phase = "backward"} {{.*}} -> tensor<1024x512xf32>
// CHECK-NEXT: shard.all_reduce %[[DW]] on @mesh grid_axes = [0] : tensor<1024x512xf32>
// ... and the input gradient of the column-parallel layer is a partial sum
// over mp, all-reduced there.
// CHECK: %[[DX:.*]] = linalg.matmul {dist.phase = "backward"} {{.*}} -> tensor<2048x512xf32>
// CHECK-NEXT: shard.all_reduce %[[DX]] on @mesh grid_axes = [1] : tensor<2048x512xf32>
// CHECK: shard.all_reduce %{{.*}} on @mesh grid_axes = [0] : tensor<512x1024xf32>
// Every parameter leaves the step in its argument's layout: no gather.
// CHECK-NOT: shard.all_gather
// CHECK: return

// REPORT: "activation_bytes_per_device": {{[1-9][0-9]*}}
// REPORT: "gradient_bytes_per_device": 8388608
// REPORT: "optimizer_state_bytes_per_device": 0
// REPORT: "parameter_bytes_per_device": 8388608
