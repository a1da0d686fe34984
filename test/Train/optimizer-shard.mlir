// Optimizer parallel (optimizer-shard=true, MindSpore's optimizer parallel,
// ZeRO-1) on a Megatron MLP, dp=2 x mp=2, Adam. Batch 256 under the
// low-latency cluster (Inputs/cluster-low-latency.json) so that the plain
// step all-reduces every weight gradient over dp (matrix-mlp.test).
//
// threshold 8192 bytes: w1 (64x128, 32768 bytes) and w2 (128x16, 8192: at the
// threshold) have their state and update split over dp; b1 (512 bytes) stays
// replicated over dp.
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=adam lr=0.01 data-axis=dp optimizer-shard=true optimizer-shard-threshold=8192' | FileCheck %s --check-prefix=STEP
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=adam lr=0.01 data-axis=dp optimizer-shard=true optimizer-shard-threshold=8192' --dist-propagate='report=%t.json cluster=%S/Inputs/cluster-low-latency.json' --dist-partition | FileCheck %s --implicit-check-not='grid_axes = [0] : tensor<64x64xf32>' --implicit-check-not='grid_axes = [0] : tensor<64x16xf32>'
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// Without optimizer-shard (and with a threshold above every parameter): all
// gradients all-reduced, the whole state on every device.
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=adam lr=0.01 data-axis=dp' --dist-propagate='report=%t.plain.json cluster=%S/Inputs/cluster-low-latency.json' --dist-partition | FileCheck %s --check-prefix=PLAIN --implicit-check-not=shard.all_gather --implicit-check-not='grid_axes = [0] scatter_axis'
// RUN: FileCheck %s --check-prefix=REPORT-PLAIN < %t.plain.json
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=adam lr=0.01 data-axis=dp optimizer-shard=true optimizer-shard-threshold=32769' --dist-propagate='report=%t.high.json cluster=%S/Inputs/cluster-low-latency.json' --dist-partition | FileCheck %s --check-prefix=PLAIN --implicit-check-not=shard.all_gather --implicit-check-not='grid_axes = [0] scatter_axis'
// RUN: FileCheck %s --check-prefix=REPORT-PLAIN < %t.high.json
// With micro-batches the accumulated gradients of w1 and w2 live split
// over dp too (MindSpore's gradient_accumulation_shard): the first
// micro-batch's gradient and the sum are pinned to the state's layout.
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=adam lr=0.01 data-axis=dp optimizer-shard=true optimizer-shard-threshold=8192 micro-batches=2' > %t.acc.mlir
// RUN: FileCheck %s --check-prefix=ACC < %t.acc.mlir
// RUN: FileCheck %s --check-prefix=ACC-W2 < %t.acc.mlir
// RUN: autoshard-opt %t.acc.mlir --dist-propagate='report=%t.acc.json cluster=%S/Inputs/cluster-low-latency.json' | FileCheck %s --check-prefix=ACC-PROP
// RUN: FileCheck %s --check-prefix=ACC-REPORT < %t.acc.json
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=adam lr=0.01 data-axis=dp micro-batches=2' --dist-propagate='report=%t.acc-plain.json cluster=%S/Inputs/cluster-low-latency.json' -o /dev/null
// RUN: FileCheck %s --check-prefix=ACC-REPORT-PLAIN < %t.acc-plain.json
// The default threshold is MindSpore's 64 KB (65536 bytes): every parameter
// here is smaller, so nothing is split.
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=adam lr=0.01 data-axis=dp optimizer-shard=true' | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: func.func @train_step(
// DEFAULT-NOT: dist.annotate %arg3
// DEFAULT-NOT: dist.annotate %arg7
// DEFAULT: return
// SGD keeps no state, but its update is split the same way.
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=0.01 data-axis=dp optimizer-shard=true optimizer-shard-threshold=8192' --dist-propagate='cluster=%S/Inputs/cluster-low-latency.json' --dist-partition | FileCheck %s --check-prefix=SGD

// The pass pins the state arguments and the updated parameters and state:
// the parameter's own layout plus dp on its major-most dividing dim, as the
// dim's minor-most axis. Adam's step count and b1's state are left alone.
// STEP: func.func @train_step(
// STEP-NEXT: dist.annotate %arg3 : tensor<64x128xf32> as #dist.layout<#mesh, {{\[\[}}dp], [mp]]>
// STEP-NEXT: dist.annotate %arg4 : tensor<64x128xf32> as #dist.layout<#mesh, {{\[\[}}dp], [mp]]>
// STEP-NEXT: dist.annotate %arg7 : tensor<128x16xf32> as #dist.layout<#mesh, {{\[\[}}mp, dp], []]>
// STEP-NEXT: dist.annotate %arg8 : tensor<128x16xf32> as #dist.layout<#mesh, {{\[\[}}mp, dp], []]>
// STEP-NOT: dist.annotate %arg5
// STEP-NOT: dist.annotate %arg6
// STEP-NOT: dist.annotate %arg9
// The updated m, v and parameter of w1, then of w2, right after the
// optimizer ops that compute them.
// STEP: } -> tensor<64x128xf32>
// STEP-NEXT: dist.annotate %{{[0-9]+}} : tensor<64x128xf32> as #dist.layout<#mesh, {{\[\[}}dp], [mp]]>
// STEP-COUNT-2: dist.annotate %{{[0-9]+}} : tensor<64x128xf32> as #dist.layout<#mesh, {{\[\[}}dp], [mp]]>
// STEP-COUNT-3: dist.annotate %{{[0-9]+}} : tensor<128x16xf32> as #dist.layout<#mesh, {{\[\[}}mp, dp], []]>
// STEP-NOT: dist.annotate
// STEP: return

// Partitioned: the state arguments are local slices of the parameter's
// shard (w1 64x64 on mp -> 32x64; w2 64x16 -> 32x16), b1's is not.
// CHECK: func.func @train_step(
// CHECK-SAME: %arg3: tensor<32x64xf32> {{{.*}}dist.name = "w1.exp_avg"}
// CHECK-SAME: %arg5: tensor<64xf32> {{{.*}}dist.name = "b1.exp_avg"}
// CHECK-SAME: %arg7: tensor<32x16xf32> {{{.*}}dist.name = "w2.exp_avg"}
// CHECK-SAME: %arg9: tensor<f32> {{{.*}}dist.layout = #dist.layout<#mesh, []>, dist.name = "optimizer.step"}
// The parameters stay in their own layouts (not split over dp) ...
// CHECK-SAME: -> (tensor<f32> {{{.*}}}, tensor<64x64xf32> {{{.*}}dist.layout = #dist.layout<#mesh, {{\[\[}}], [mp]]>, dist.name = "w1", dist.tied_arg = 0 : i64}
// ... and their state leaves the step split, as it came in.
// CHECK-SAME: tensor<32x64xf32> {{{.*}}dist.name = "w1.exp_avg", dist.tied_arg = 3 : i64}
// Large gradients are reduce-scattered over dp, the small one all-reduced.
// CHECK: %[[GW2:.*]] = shard.reduce_scatter %{{.*}} on @mesh grid_axes = [0] scatter_axis = 0 : tensor<64x16xf32> -> tensor<32x16xf32>
// CHECK: %[[GB1:.*]] = shard.all_reduce %{{.*}} on @mesh grid_axes = [0] : tensor<64xf32> -> tensor<64xf32>
// CHECK: %[[GW1:.*]] = shard.reduce_scatter %{{.*}} on @mesh grid_axes = [0] scatter_axis = 0 : tensor<64x64xf32> -> tensor<32x64xf32>
// Each rank updates its slice of w1: the moments from the scattered
// gradient, the parameter from its slice ...
// CHECK: linalg.generic {{.*}} ins(%[[GW1]], %arg3 : tensor<32x64xf32>, tensor<32x64xf32>) outs(%{{.*}} : tensor<32x64xf32>)
// CHECK: %[[NEWW1:.*]] = linalg.generic {{.*}} ins(%all_slice{{[_0-9]*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<f32>) outs(%{{.*}} : tensor<32x64xf32>)
// ... and the updated parameters are all-gathered over dp.
// CHECK: %[[AGW1:.*]] = shard.all_gather %[[NEWW1]] on @mesh grid_axes = [0] gather_axis = 0 : tensor<32x64xf32> -> tensor<64x64xf32>
// CHECK: %[[AGW2:.*]] = shard.all_gather %{{.*}} on @mesh grid_axes = [0] gather_axis = 0 : tensor<32x16xf32> -> tensor<64x16xf32>
// CHECK: return %{{.*}}, %[[AGW1]], %{{.*}}, %[[AGW2]],
// Nowhere is a gradient of w1 or w2 all-reduced over dp
// (--implicit-check-not).

// Optimizer state per device: w1 2 x 64x64 floats / 2 (dp) = 16384, w2
// 2 x 64x16 / 2 = 4096, b1 2 x 64 = 512 (replicated over dp), the step
// count 4: 20996 bytes, against 41476 without optimizer shard. Parameters
// and gradients are the same on both.
// REPORT: "gradient_bytes_per_device": 20736
// REPORT: "optimizer_state_bytes_per_device": 20996
// REPORT: "parameter_bytes_per_device": 20736

// Plain: all-reduces over dp, no reduce-scatter over dp, no all-gather
// (--implicit-check-not).
// PLAIN: shard.all_reduce %{{.*}} on @mesh grid_axes = [0] : tensor<64x16xf32>
// PLAIN: shard.all_reduce %{{.*}} on @mesh grid_axes = [0] : tensor<64xf32>
// PLAIN: shard.all_reduce %{{.*}} on @mesh grid_axes = [0] : tensor<64x64xf32>
// REPORT-PLAIN: "gradient_bytes_per_device": 20736
// REPORT-PLAIN: "optimizer_state_bytes_per_device": 41476
// REPORT-PLAIN: "parameter_bytes_per_device": 20736

// Micro-batch 1's w1 gradient, pinned split; micro-batch 2's added to it,
// the sum pinned split (and read by the update).
// ACC: %[[G1:.+]] = linalg.matmul {dist.phase = "backward"} {{.*}} -> tensor<64x128xf32>
// ACC-NEXT: %[[S1:.+]] = dist.annotate %[[G1]] : tensor<64x128xf32> as #dist.layout<#mesh, {{\[\[}}dp], [mp]]>
// ACC: %[[G2:.+]] = linalg.matmul {dist.phase = "backward"} {{.*}} -> tensor<64x128xf32>
// ACC: %[[SUM:.+]] = linalg.generic {{.*}} ins(%[[S1]], %[[G2]] : tensor<64x128xf32>, tensor<64x128xf32>)
// ACC: dist.annotate %[[SUM]] : tensor<64x128xf32> as #dist.layout<#mesh, {{\[\[}}dp], [mp]]>
// ACC-W2: %[[G1:.+]] = linalg.matmul {dist.phase = "backward"} {{.*}} -> tensor<128x16xf32>
// ACC-W2-NEXT: %[[S1:.+]] = dist.annotate %[[G1]] : tensor<128x16xf32> as #dist.layout<#mesh, {{\[\[}}mp, dp], []]>
// ACC-W2: %[[SUM:.+]] = linalg.generic {{.*}} ins(%[[S1]], %{{.+}} : tensor<128x16xf32>, tensor<128x16xf32>)
// ACC-W2: dist.annotate %[[SUM]] : tensor<128x16xf32> as #dist.layout<#mesh, {{\[\[}}mp, dp], []]>
// Propagated, both accumulation adds run on the split layouts.
// ACC-PROP: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<64x128xf32>, tensor<64x128xf32>) {{.*}}dist.strategy = #dist.strategy<#mesh, in = {{\[\[\[}}dp], [mp]], {{\[\[}}dp], [mp]], {{\[\[}}dp], [mp]]], out = {{\[\[\[}}dp], [mp]]]>
// ACC-PROP: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<128x16xf32>, tensor<128x16xf32>) {{.*}}dist.strategy = #dist.strategy<#mesh, in = {{\[\[\[}}mp, dp], []], {{\[\[}}mp, dp], []], {{\[\[}}mp, dp], []]], out = {{\[\[\[}}mp, dp], []]]>
// The gradients the update reads, per device: w1 32x64 + w2 32x16 (split
// over dp) + b1 64 floats = 10496 bytes, against 18688 without optimizer
// shard (w1's 64x64 sum kept whole).
// ACC-REPORT: "gradient_bytes_per_device": 10496
// ACC-REPORT-PLAIN: "gradient_bytes_per_device": 18688

// With SGD the same collectives on the gradients and updated parameters.
// SGD: shard.reduce_scatter %{{.*}} on @mesh grid_axes = [0] scatter_axis = 0 : tensor<64x16xf32> -> tensor<32x16xf32>
// SGD: shard.all_reduce %{{.*}} on @mesh grid_axes = [0] : tensor<64xf32>
// SGD: shard.reduce_scatter %{{.*}} on @mesh grid_axes = [0] scatter_axis = 0 : tensor<64x64xf32> -> tensor<32x64xf32>
// SGD: shard.all_gather %{{.*}} on @mesh grid_axes = [0] gather_axis = 0 : tensor<32x64xf32> -> tensor<64x64xf32>
// SGD: shard.all_gather %{{.*}} on @mesh grid_axes = [0] gather_axis = 0 : tensor<32x16xf32> -> tensor<64x16xf32>

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<256x64xf32> {dist.name = "x"}, %w1: tensor<64x128xf32> {dist.param, dist.name = "w1"}, %b1: tensor<128xf32> {dist.param, dist.name = "b1"}, %w2: tensor<128x16xf32> {dist.param, dist.name = "w2"}) -> tensor<256x16xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %w1s = dist.annotate %w1 : tensor<64x128xf32> as #dist.layout<#mesh, [[], [mp]]>
    %b1s = dist.annotate %b1 : tensor<128xf32> as #dist.layout<#mesh, [[mp]]>
    %w2s = dist.annotate %w2 : tensor<128x16xf32> as #dist.layout<#mesh, [[mp], []]>
    %e0 = tensor.empty() : tensor<256x128xf32>
    %i0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<256x128xf32>) -> tensor<256x128xf32>
    %h = linalg.matmul ins(%x, %w1s : tensor<256x64xf32>, tensor<64x128xf32>) outs(%i0 : tensor<256x128xf32>) -> tensor<256x128xf32>
    %e1 = tensor.empty() : tensor<256x128xf32>
    %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%h, %b1s : tensor<256x128xf32>, tensor<128xf32>) outs(%e1 : tensor<256x128xf32>) {
      ^bb0(%in: f32, %bias: f32, %out: f32):
        %s = arith.addf %in, %bias : f32
        %r = arith.maximumf %s, %zero : f32
        linalg.yield %r : f32
      } -> tensor<256x128xf32>
    %e2 = tensor.empty() : tensor<256x16xf32>
    %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<256x16xf32>) -> tensor<256x16xf32>
    %y = linalg.matmul ins(%a, %w2s : tensor<256x128xf32>, tensor<128x16xf32>) outs(%i2 : tensor<256x16xf32>) -> tensor<256x16xf32>
    return %y : tensor<256x16xf32>
  }
}
