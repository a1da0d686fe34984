// The dist collectives round-trip and verify against their grid.
// RUN: autoshard-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @ops
// CHECK: dist.permute %{{.*}} on @g sources = [1, 2] targets = [2, 1] : tensor<4x4xf32>
// CHECK: dist.make_partial %{{.*}} on @g grid_axes = [1] reduction = product : tensor<4x4xf32>
// CHECK: dist.all_gather_uneven %{{.*}} on @g grid_axes = [0] gather_axis = 0 sizes = [1, 3] : tensor<?x4xf32> -> tensor<4x4xf32>
// CHECK: dist.all_slice_uneven %{{.*}} on @g grid_axes = [0] slice_axis = 0 sizes = [1, 3] : tensor<4x4xf32> -> tensor<?x4xf32>
shard.grid @g(shape = 2x2)
func.func @ops(%a: tensor<4x4xf32>, %u: tensor<?x4xf32>) {
  %0 = dist.permute %a on @g sources = [1, 2] targets = [2, 1] : tensor<4x4xf32>
  %1 = dist.make_partial %a on @g grid_axes = [1] reduction = product : tensor<4x4xf32>
  %2 = dist.all_gather_uneven %u on @g grid_axes = [0] gather_axis = 0 sizes = [1, 3] : tensor<?x4xf32> -> tensor<4x4xf32>
  %3 = dist.all_slice_uneven %a on @g grid_axes = [0] slice_axis = 0 sizes = [1, 3] : tensor<4x4xf32> -> tensor<?x4xf32>
  return
}

// -----

shard.grid @g(shape = 2x2)
func.func @dup_target(%a: tensor<4x4xf32>) {
  // expected-error @below {{mesh position 2 appears twice among the targets}}
  %0 = dist.permute %a on @g sources = [1, 3] targets = [2, 2] : tensor<4x4xf32>
  return
}

// -----

shard.grid @g(shape = 2x2)
func.func @out_of_grid(%a: tensor<4x4xf32>) {
  // expected-error @below {{mesh position 4 is outside the grid of 4 devices}}
  %0 = dist.permute %a on @g sources = [4] targets = [0] : tensor<4x4xf32>
  return
}

// -----

shard.grid @g(shape = 2x2)
func.func @bad_sizes(%a: tensor<4x4xf32>) {
  // expected-error @below {{shard sizes sum to 5 but the full extent of axis 0 is 4}}
  %0 = dist.all_slice_uneven %a on @g grid_axes = [0] slice_axis = 0 sizes = [2, 3] : tensor<4x4xf32> -> tensor<?x4xf32>
  return
}

// -----

shard.grid @g(shape = 2x2)
func.func @group_size(%a: tensor<4x4xf32>) {
  // expected-error @below {{has 3 shard sizes but the device group has 2 devices}}
  %0 = dist.all_slice_uneven %a on @g grid_axes = [0] slice_axis = 0 sizes = [1, 1, 2] : tensor<4x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @no_grid(%a: tensor<4x4xf32>) {
  // expected-error @below {{refers to unknown shard.grid @nope}}
  %0 = dist.make_partial %a on @nope grid_axes = [0] reduction = sum : tensor<4x4xf32>
  return
}

// -----

shard.grid @g(shape = 2x2)
func.func @bad_axis(%a: tensor<4x4xf32>) {
  // expected-error @below {{grid axis 2 is out of range for a grid of rank 2}}
  %0 = dist.make_partial %a on @g grid_axes = [2] reduction = sum : tensor<4x4xf32>
  return
}
