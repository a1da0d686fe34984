// Propagation chooses how to split a 3x3 conv whose input arrives split on
// its rows (h = 4 devices) by pricing a spatial split at the halo exchange
// --dist-partition makes of it (a permute per neighbour of the one row each
// needs), not at the all-gather of the whole input. Large images (8 x 4 x
// 256 x 256): the halo (2 permutes of 32 KiB) is cheaper than moving the
// batch split (an all-to-all of 1.5 MiB), so the conv splits its output rows
// and keeps them: 2 x (2 us + 32 KiB / 150 GB/s) = 4.437 us, where the
// all-gather it stands for costs 2 us + 6 MiB / 150 GB/s = 43.9 us. Small
// images (8 x 4 x 8 x 8): two permutes' latency (4.0 us) is dearer than
// moving to the batch split (an all-gather then a local slice: 2.041 us), so
// the conv runs batch-split.
// RUN: autoshard-opt %s --split-input-file --dist-propagate='report=-' -o %t.mlir | FileCheck %s --check-prefix=REPORT
// RUN: FileCheck %s < %t.mlir
// RUN: autoshard-opt %s --split-input-file --dist-propagate --dist-partition | FileCheck %s --check-prefix=PART

// CHECK-LABEL: func.func @large_images
// CHECK: linalg.conv_2d_nchw_fchw {{.*}}out = {{\[\[\[}}], [], [h], []]]>
// REPORT-LABEL: dist-propagate report
// REPORT: collectives: HaloExchange=1
// REPORT-NEXT: comm bytes per device: 65536
// REPORT-NEXT: comm time: 4.437 us
// PART-LABEL: func.func @large_images
// PART-NOT: shard.all_gather
// PART-COUNT-2: dist.permute %{{.*}} : tensor<8x4x1x256xf32>
// PART: linalg.conv_2d_nchw_fchw {{.*}} outs(%{{.*}} : tensor<8x8x64x256xf32>)
#mesh = #dist.mesh<[h = 4]>
#rows = #dist.layout<#mesh, [[], [], [h], []]>
func.func @large_images(%x: tensor<8x4x256x256xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<8x8x256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %xs = dist.annotate %x : tensor<8x4x256x256xf32> as #rows
  %p = tensor.pad %xs low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<8x4x256x256xf32> to tensor<8x4x258x258xf32>
  %e = tensor.empty() : tensor<8x8x256x256xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8x256x256xf32>) -> tensor<8x8x256x256xf32>
  %c = linalg.conv_2d_nchw_fchw
      {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<8x4x258x258xf32>, tensor<8x4x3x3xf32>)
      outs(%i : tensor<8x8x256x256xf32>) -> tensor<8x8x256x256xf32>
  return %c : tensor<8x8x256x256xf32>
}

// -----

// CHECK-LABEL: func.func @small_images
// CHECK: linalg.conv_2d_nchw_fchw {{.*}}out = {{\[\[\[}}h], [], [], []]]>
// REPORT-LABEL: dist-propagate report
// REPORT: collectives: all_gather=1 all_slice=1
// REPORT-NEXT: comm bytes per device: 6144
// REPORT-NEXT: comm time: 2.041 us
// PART-LABEL: func.func @small_images
// PART-NOT: dist.permute
// PART: shard.all_gather
// PART: shard.all_slice {{.*}} slice_axis = 0
// PART: linalg.conv_2d_nchw_fchw {{.*}} outs(%{{.*}} : tensor<2x8x8x8xf32>)
#mesh = #dist.mesh<[h = 4]>
#rows = #dist.layout<#mesh, [[], [], [h], []]>
func.func @small_images(%x: tensor<8x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<8x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %xs = dist.annotate %x : tensor<8x4x8x8xf32> as #rows
  %p = tensor.pad %xs low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<8x4x8x8xf32> to tensor<8x4x10x10xf32>
  %e = tensor.empty() : tensor<8x8x8x8xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw
      {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<8x4x10x10xf32>, tensor<8x4x3x3xf32>)
      outs(%i : tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf32>
  return %c : tensor<8x8x8x8xf32>
}
