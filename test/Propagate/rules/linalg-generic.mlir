// RUN: autoshard-opt --dist-test-sharding-rules --mlir-print-op-on-diagnostic=false %s -o /dev/null 2>&1 | FileCheck %s

// linalg.generic rules come from the indexing maps and iterator types; the
// kind of a reduction comes from the payload's combiner, and an unknown
// combiner keeps the reduction loop whole.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#bcast = affine_map<(d0, d1) -> (0, d1)>

func.func @generic(%x: tensor<8x16xf32>, %y: tensor<1x16xf32>, %r: tensor<8xf32>,
                   %i: tensor<8x16xi32>, %ri: tensor<8xi32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  // Elementwise: the payload has one op, so one flop per element.
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=16 par; operands: [d0][d1], [d0][d1], init [d0][d1]; results: [d0][d1]
  %0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %x : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
  } -> tensor<8x16xf32>
  // Broadcast of a size-1 dim: the operand dim holds no factor.
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=16 par; operands: [d0][d1], [][d1], init [d0][d1]; results: [d0][d1]
  %1 = linalg.generic {indexing_maps = [#id, #bcast, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<8x16xf32>, tensor<1x16xf32>) outs(%e : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.mulf %a, %b : f32
      linalg.yield %s : f32
  } -> tensor<8x16xf32>
  // Row sum: addf combiner -> sum.
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=16 red(sum); operands: [d0][d1], acc [d0]; results: [d0]
  %2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%r : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %o, %a : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  // Row max with maxnumf -> max.
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=16 red(max); operands: [d0][d1], acc [d0]; results: [d0]
  %3 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%r : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.maxnumf %a, %o : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  // Product.
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=16 red(product); operands: [d0][d1], acc [d0]; results: [d0]
  %4 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%r : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.mulf %o, %a : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  // Not a combiner of the accumulator with an independent term
  // (o * 0.5 + a): the reduction loop needs replication.
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=16 rep; operands: [d0][d1], acc [d0]; results: [d0]
  %5 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%r : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %h = arith.constant 0.5 : f32
      %m = arith.mulf %o, %h : f32
      %s = arith.addf %m, %a : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  // Unsigned max has no partial-reduction kind (an all-reduce max compares
  // signed): replicated reduction loop.
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=16 rep; operands: [d0][d1], acc [d0]; results: [d0]
  %6 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%i : tensor<8x16xi32>) outs(%ri : tensor<8xi32>) {
    ^bb0(%a: i32, %o: i32):
      %s = arith.maxui %o, %a : i32
      linalg.yield %s : i32
  } -> tensor<8xi32>
  // The term depends on the accumulator (o + o * a): not a reduction we can split.
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: d0=8 par, d1=16 rep; operands: [d0][d1], acc [d0]; results: [d0]
  %7 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%r : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %o, %a : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  return
}

// A loop indexing two dims of one tensor (a diagonal) cannot be split.
// CHECK-LABEL: remark: rule: factors: d0=8 rep; operands: [d0][], init [d0]; results: [d0]
#diag = affine_map<(d0) -> (d0, d0)>
#vec = affine_map<(d0) -> (d0)>
func.func @diagonal(%m: tensor<8x8xf32>, %o: tensor<8xf32>) -> tensor<8xf32> {
  %0 = linalg.generic {indexing_maps = [#diag, #vec], iterator_types = ["parallel"]}
      ins(%m : tensor<8x8xf32>) outs(%o : tensor<8xf32>) {
    ^bb0(%a: f32, %b: f32):
      linalg.yield %a : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
