// Issue 22: input dist-propagate cannot handle gets one located error naming
// the problem up front (not a verifier error on the pass's own output).
// RUN: autoshard-opt %s --dist-propagate -split-input-file -verify-diagnostics
// Running the pipeline on its own output is an error, as the single passes'
// misuse is (it used to rewrite dist.global_type to the local shapes).
// RUN: autoshard-opt %S/Inputs/partitioned-once.mlir --autoshard-pipeline -o %t.once.mlir
// RUN: not autoshard-opt %t.once.mlir --autoshard-pipeline 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: dist-propagate: @main is already partitioned (argument #0 has dist.global_type); propagate and partition the global program, once

#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @loop(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @below {{dist-propagate: 'scf.for' is not supported: autoshard propagates layouts through straight-line functions; unroll the loop or resolve the branch first}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%x = %a) -> tensor<8x16xf32> {
    %y = math.tanh %x : tensor<8x16xf32>
    scf.yield %y : tensor<8x16xf32>
  }
  return %r : tensor<8x16xf32>
}
}

// -----

#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @branch(%a: tensor<8x16xf32>, %c: i1) -> tensor<8x16xf32> {
  // expected-error @below {{dist-propagate: 'scf.if' is not supported}}
  %r = scf.if %c -> tensor<8x16xf32> {
    %y = math.tanh %a : tensor<8x16xf32>
    scf.yield %y : tensor<8x16xf32>
  } else {
    scf.yield %a : tensor<8x16xf32>
  }
  return %r : tensor<8x16xf32>
}
}

// -----

#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
func.func private @helper(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %y = math.tanh %a : tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
func.func @caller(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @below {{dist-propagate: 'func.call' is not supported: autoshard propagates layouts through straight-line functions; inline the call first (--inline)}}
  %r = func.call @helper(%a) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
}

// -----

#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
// expected-error @below {{dist-propagate: @main is empty (no operations and no results): there is nothing to compile}}
func.func @main() {
  return
}
}

// -----

#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @zero(%a: tensor<8x16xf32>) -> tensor<8x0xf32> {
  // expected-error @below {{dist-propagate: 'tensor.extract_slice' has a zero-size result ('tensor<8x0xf32>'); autoshard does not support zero-size tensors}}
  %s = tensor.extract_slice %a[0, 0] [8, 0] [1, 1] : tensor<8x16xf32> to tensor<8x0xf32>
  return %s : tensor<8x0xf32>
}
}

// -----

// A grid with a dynamic size used to become a mesh axis of size
// -9223372036854775808 ("split count -9223372036854775808").
module {
  // expected-error @below {{dist-propagate: grid @mesh has a dynamic size ('?') on axis 1; autoshard needs a grid of static sizes}}
  shard.grid @mesh(shape = 2x?)
  func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %s = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
    %a = shard.shard %x to %s : tensor<8x16xf32>
    %y = math.tanh %a : tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}
