// Recompute (--dist-training-step recompute=..., lib/Train/Recompute.cpp):
// a selected forward op whose result the backward reads is cloned right
// before the first backward read, with the selected (and no-data:
// tensor.empty, linalg.fill, arith.constant) producers it needs; the
// backward reads the clones (dist.phase = "backward", dist.recompute), the
// forward is unchanged. Model: h = x w1; a = h + b1; t = tanh(a) (marked
// dist.recompute); g = a * t; y = g w2. The backward reads g (dw2 = g^T dy),
// t and a (the product's and tanh's rules); y only the loss reads.
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=0.1 recompute=none' | FileCheck %s --check-prefixes=FWD,MARK
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=0.1 recompute=all' | FileCheck %s --check-prefixes=FWD,ALL
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=0.1 recompute=ops=linalg.generic' | FileCheck %s --check-prefixes=FWD,NAME
// RUN: not autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=0.1 recompute="ops=/act/*, /nothing/here*"' 2>&1 | FileCheck %s --check-prefix=UNMATCHED
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=0.1 recompute=ops=/act/M*' | FileCheck %s --check-prefixes=FWD,LOC

// The forward, unchanged and no longer marked (after the pass
// dist.recompute marks the clones only).
// FWD-LABEL: func.func @train_step(
// FWD: %[[H:.*]] = linalg.matmul ins(%arg3, %arg0 :
// FWD-NOT: dist.recompute
// FWD: %[[A:.*]] = linalg.generic {{.*}} ins(%[[H]], %arg1 :
// FWD-NOT: dist.recompute
// FWD: %[[T:.*]] = linalg.generic {{.*}} ins(%[[A]] :
// FWD-NOT: dist.recompute
// FWD: %[[G:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[T]] :
// FWD-NOT: dist.recompute
// FWD: %[[Y:.*]] = linalg.matmul ins(%[[G]], %arg2 :
// FWD-NOT: dist.recompute
// FWD: linalg.generic {{.*}} ins(%[[Y]], %arg4 {{.*}} attrs = {dist.phase = "loss"}

// recompute=none: only the marked tanh, before tanh's first backward read
// (the product's rule, after dw2's matmul), from the kept a.
// MARK-NOT: dist.recompute
// MARK: linalg.transpose ins(%[[G]] :
// MARK-NOT: dist.recompute
// MARK: %[[E:.*]] = tensor.empty() {dist.phase = "backward", dist.recompute} : tensor<8x32xf32>
// MARK-NEXT: %[[TC:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<8x32xf32>) outs(%[[E]] : tensor<8x32xf32>) attrs = {dist.phase = "backward", dist.recompute}
// MARK: math.tanh
// MARK-NOT: dist.recompute
// MARK: linalg.generic {{.*}} ins(%[[TC]], %{{.*}} : {{.*}} attrs = {dist.phase = "backward"}
// MARK-NOT: dist.recompute
// MARK: return

// recompute=all: the whole chain from the arguments (the matmul's zero init
// too), in the forward's order, before dw2's transpose; y is not cloned.
// ALL: linalg.transpose ins(%arg2 :
// ALL: %[[C0:.*]] = arith.constant {dist.phase = "backward", dist.recompute} 0.0
// ALL-NEXT: %[[E0:.*]] = tensor.empty() {dist.phase = "backward", dist.recompute}
// ALL-NEXT: %[[I0:.*]] = linalg.fill {dist.phase = "backward", dist.recompute} ins(%[[C0]] : f32) outs(%[[E0]] :
// ALL-NEXT: %[[HC:.*]] = linalg.matmul {dist.phase = "backward", dist.recompute} ins(%arg3, %arg0 : {{.*}}) outs(%[[I0]] :
// ALL-NEXT: tensor.empty() {dist.phase = "backward", dist.recompute}
// ALL-NEXT: %[[AC:.*]] = linalg.generic {{.*}} ins(%[[HC]], %arg1 : {{.*}} attrs = {dist.phase = "backward", dist.recompute}
// ALL: tensor.empty() {dist.phase = "backward", dist.recompute}
// ALL-NEXT: %[[TC:.*]] = linalg.generic {{.*}} ins(%[[AC]] : {{.*}} attrs = {dist.phase = "backward", dist.recompute}
// ALL: tensor.empty() {dist.phase = "backward", dist.recompute}
// ALL-NEXT: %[[GC:.*]] = linalg.generic {{.*}} ins(%[[AC]], %[[TC]] : {{.*}} attrs = {dist.phase = "backward", dist.recompute}
// ALL-NOT: dist.recompute
// ALL: linalg.transpose ins(%[[GC]] :
// ALL-NOT: dist.recompute
// ALL: linalg.generic {{.*}} ins(%[[TC]], %{{.*}} : {{.*}} attrs = {dist.phase = "backward"}
// ALL-NOT: dist.recompute
// ALL: linalg.generic {{.*}} ins(%[[AC]], %{{.*}} : {{.*}} attrs = {dist.phase = "backward"}
// ALL-NOT: dist.recompute
// ALL: return

// ops=linalg.generic, by op name: a, t and g; the chain stops at the kept
// matmul h.
// NAME: linalg.transpose ins(%arg2 :
// NAME-NOT: linalg.matmul {dist.phase = "backward", dist.recompute}
// NAME: %[[AC:.*]] = linalg.generic {{.*}} ins(%[[H]], %arg1 : {{.*}} attrs = {dist.phase = "backward", dist.recompute}
// NAME: %[[TC:.*]] = linalg.generic {{.*}} ins(%[[AC]] : {{.*}} attrs = {dist.phase = "backward", dist.recompute}
// NAME: %[[GC:.*]] = linalg.generic {{.*}} ins(%[[AC]], %[[TC]] : {{.*}} attrs = {dist.phase = "backward", dist.recompute}
// NAME-NOT: dist.recompute
// NAME: linalg.transpose ins(%[[GC]] :
// NAME-NOT: dist.recompute
// NAME: return

// A glob that matches no forward op is an error, located at the step.
// UNMATCHED: recompute.mlir:{{[0-9]+}}:3: error: dist-training-step: recompute glob '/nothing/here*' matches no forward op

// ops=/act/M*, by ONNX node name (the location): g and the marked t, from
// the kept a.
// LOC: linalg.transpose ins(%arg2 :
// LOC: %[[TC:.*]] = linalg.generic {{.*}} ins(%[[A]] : {{.*}} attrs = {dist.phase = "backward", dist.recompute}
// LOC: %[[GC:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[TC]] : {{.*}} attrs = {dist.phase = "backward", dist.recompute}
// LOC: linalg.transpose ins(%[[GC]] :
#mesh = #dist.mesh<[dp = 2, mp = 2]>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<8x16xf32> {dist.name = "x"}, %w1: tensor<16x32xf32> {dist.param, dist.name = "w1"}, %b1: tensor<32xf32> {dist.param, dist.name = "b1"}, %w2: tensor<32x8xf32> {dist.param, dist.name = "w2"}) -> tensor<8x8xf32> {
    %zero = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<8x32xf32>
    %i0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %h = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%i0 : tensor<8x32xf32>) -> tensor<8x32xf32> loc("/fc1/MatMul")
    %e1 = tensor.empty() : tensor<8x32xf32>
    %a = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%h, %b1 : tensor<8x32xf32>, tensor<32xf32>) outs(%e1 : tensor<8x32xf32>) {
    ^bb0(%in: f32, %bb: f32, %out: f32):
      %s = arith.addf %in, %bb : f32
      linalg.yield %s : f32
    } -> tensor<8x32xf32> loc("/fc1/Add")
    %e2 = tensor.empty() : tensor<8x32xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<8x32xf32>) outs(%e2 : tensor<8x32xf32>) attrs = {dist.recompute} {
    ^bb0(%in: f32, %out: f32):
      %r = math.tanh %in : f32
      linalg.yield %r : f32
    } -> tensor<8x32xf32> loc("/act/Tanh")
    %e3 = tensor.empty() : tensor<8x32xf32>
    %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %t : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e3 : tensor<8x32xf32>) {
    ^bb0(%in: f32, %in2: f32, %out: f32):
      %r = arith.mulf %in, %in2 : f32
      linalg.yield %r : f32
    } -> tensor<8x32xf32> loc("/act/Mul")
    %e4 = tensor.empty() : tensor<8x8xf32>
    %i4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %y = linalg.matmul ins(%g, %w2 : tensor<8x32xf32>, tensor<32x8xf32>) outs(%i4 : tensor<8x8xf32>) -> tensor<8x8xf32> loc("/fc2/MatMul")
    return %y : tensor<8x8xf32>
  }
}
