// A zero tensor.pad passes a pending partial sum through (pad is linear when
// it pads with 0), so a batch-split weight gradient padded to a shape that
// divides the data axis is reduce-scattered on the padded shape, as an
// optimizer-sharded parameter that does not divide needs
// (test/Train/optimizer-shard-uneven.test). Any other pad value resolves the
// sum first.
// RUN: autoshard-opt --dist-test-sharding-rules --mlir-print-op-on-diagnostic=false %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=RULE
// RUN: autoshard-opt %s --dist-propagate --dist-partition | FileCheck %s

#mesh = #dist.mesh<[dp = 4]>
module attributes {dist.mesh = #mesh} {

// The rule: a sum factor no dim holds (its size is the mesh's 4 devices),
// with the source tied to the result ("acc"): both partial together.
// CHECK-LABEL: func.func @zero_pad
// CHECK: %[[G:.+]] = linalg.matmul {{.*}} -> tensor<10x30xf32>
// CHECK-NOT: all_reduce
// CHECK: %[[P:.+]] = tensor.pad %[[G]] low[0, 0] high[2, 0]
// CHECK: shard.reduce_scatter %[[P]] on @mesh grid_axes = [0] scatter_axis = 0 : tensor<12x30xf32> -> tensor<3x30xf32>
// CHECK-NOT: all_reduce
// CHECK: return
func.func @zero_pad(%x: tensor<64x10xf32>, %dy: tensor<64x30xf32>) -> tensor<12x30xf32> {
  %xs = dist.annotate %x : tensor<64x10xf32> as #dist.layout<#mesh, [[dp], []]>
  %dys = dist.annotate %dy : tensor<64x30xf32> as #dist.layout<#mesh, [[dp], []]>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x30xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<10x30xf32>) -> tensor<10x30xf32>
  %xt = tensor.empty() : tensor<10x64xf32>
  %t = linalg.transpose ins(%xs : tensor<64x10xf32>) outs(%xt : tensor<10x64xf32>) permutation = [1, 0]
  %g = linalg.matmul ins(%t, %dys : tensor<10x64xf32>, tensor<64x30xf32>) outs(%i : tensor<10x30xf32>) -> tensor<10x30xf32>
  // RULE: [[@LINE+1]]:8: remark: rule: factors: f0=10 rep, f1=12 rep, f2=30 par, sum=4 red(sum); operands: acc [f0][f2]; results: [f1][f2]
  %p = tensor.pad %g low[0, 0] high[2, 0] {
  ^bb0(%a: index, %b: index):
    tensor.yield %zero : f32
  } : tensor<10x30xf32> to tensor<12x30xf32>
  %s = dist.annotate %p : tensor<12x30xf32> as #dist.layout<#mesh, [[dp], []]>
  %r = arith.addf %s, %s : tensor<12x30xf32>
  return %r : tensor<12x30xf32>
}

// Padding with 1 is not linear: no sum factor, the gradient is all-reduced
// before the pad and each rank takes its slice of the padded result.
// CHECK-LABEL: func.func @one_pad
// CHECK: %[[G:.+]] = linalg.matmul {{.*}} -> tensor<10x30xf32>
// CHECK: %[[R:.+]] = shard.all_reduce %[[G]] on @mesh grid_axes = [0] : tensor<10x30xf32>
// CHECK: %[[P:.+]] = tensor.pad %[[R]] low[0, 0] high[2, 0]
// CHECK: shard.all_slice %[[P]] on @mesh grid_axes = [0] slice_axis = 0 : tensor<12x30xf32> -> tensor<3x30xf32>
// CHECK-NOT: reduce_scatter
// CHECK: return
func.func @one_pad(%x: tensor<64x10xf32>, %dy: tensor<64x30xf32>) -> tensor<12x30xf32> {
  %xs = dist.annotate %x : tensor<64x10xf32> as #dist.layout<#mesh, [[dp], []]>
  %dys = dist.annotate %dy : tensor<64x30xf32> as #dist.layout<#mesh, [[dp], []]>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<10x30xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<10x30xf32>) -> tensor<10x30xf32>
  %xt = tensor.empty() : tensor<10x64xf32>
  %t = linalg.transpose ins(%xs : tensor<64x10xf32>) outs(%xt : tensor<10x64xf32>) permutation = [1, 0]
  %g = linalg.matmul ins(%t, %dys : tensor<10x64xf32>, tensor<64x30xf32>) outs(%i : tensor<10x30xf32>) -> tensor<10x30xf32>
  // RULE: [[@LINE+1]]:8: remark: rule: factors: f0=10 rep, f1=12 rep, f2=30 par; operands: [f0][f2]; results: [f1][f2]
  %p = tensor.pad %g low[0, 0] high[2, 0] {
  ^bb0(%a: index, %b: index):
    tensor.yield %one : f32
  } : tensor<10x30xf32> to tensor<12x30xf32>
  %s = dist.annotate %p : tensor<12x30xf32> as #dist.layout<#mesh, [[dp], []]>
  %r = arith.addf %s, %s : tensor<12x30xf32>
  return %r : tensor<12x30xf32>
}
}
