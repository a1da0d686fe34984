// A hand-written training step (the shape --dist-training-step produces):
// y = x @ w, loss = mean((y - labels)^2), SGD with momentum (lr 0.1, 0.9);
// the buffer starts at zero (dist.init) and both updated tensors are tied
// to their arguments (dist.tied_arg). @main is partitioned on dp=2, mp=2
// (batch over dp, gradient all-reduced); @reference is the same step
// unpartitioned. --steps feeds the tied results back between steps.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-run %s --entry reference --steps 3 --losses-out %t/ref.json --params-out %t/ref-params --output-dir %t/ref | FileCheck %s
// RUN: %mpirun -np 4 autoshard-run %s --steps 3 --losses-out %t/dist.json --params-out %t/dist-params --output-dir %t/dist | FileCheck %s
// CHECK: step 1/3 loss {{[0-9]+\.[0-9]+}} ({{[0-9]+\.[0-9]+}} ms)
// CHECK-NEXT: step 2/3 loss {{[0-9]+\.[0-9]+}} (
// CHECK-NEXT: step 3/3 loss {{[0-9]+\.[0-9]+}} (
// CHECK-NEXT: losses -> {{.*}}.json
// CHECK-NEXT: output 0 'loss': f32[scalar]
// CHECK-NEXT: output 1 'onnx::MatMul_7': f32[4x4]
// CHECK-NEXT: output 2 'onnx::MatMul_7.momentum_buffer': f32[4x4]
// CHECK-NEXT: params: 2 tensors -> {{.*}}-params

// 4 ranks and 1 rank agree on every loss (which fall) and on the trained
// tensors, saved under the ONNX importer's file names; the normal outputs
// hold the last step's values.
// RUN: %python %S/Inputs/train_reference.py close-json %t/dist.json %t/ref.json 1e-5 | FileCheck %s --check-prefix=JSON
// JSON: MATCH 3 losses, falling
// RUN: autoshard-run --compare %t/dist-params/onnx__MatMul_7.npy %t/ref-params/onnx__MatMul_7.npy | FileCheck %s --check-prefix=CMP
// RUN: autoshard-run --compare %t/dist-params/onnx__MatMul_7.momentum_buffer.npy %t/ref-params/onnx__MatMul_7.momentum_buffer.npy | FileCheck %s --check-prefix=CMP
// RUN: autoshard-run --compare %t/dist/output_1.npy %t/dist-params/onnx__MatMul_7.npy --rtol 0 --atol 0 | FileCheck %s --check-prefix=CMP
// CMP: MATCH f32[4x4]

// numpy's independent three steps from the same files (momentum buffer at
// zero), against 4 ranks.
// RUN: %if numpy %{ %numpy_python %S/Inputs/npy_tool.py random %t/w.npy 4,4 float32 1 %}
// RUN: %if numpy %{ %numpy_python %S/Inputs/npy_tool.py random %t/x.npy 8,4 float32 2 %}
// RUN: %if numpy %{ %numpy_python %S/Inputs/npy_tool.py random %t/labels.npy 8,4 float32 3 %}
// RUN: %if numpy %{ %numpy_python %S/Inputs/train_reference.py momentum %t/w.npy %t/x.npy %t/labels.npy 3 0.1 0.9 %t/expected %}
// RUN: %if numpy %{ %mpirun -np 4 autoshard-run %s --steps 3 --input onnx::MatMul_7=%t/w.npy --input x=%t/x.npy --input labels=%t/labels.npy --losses-out %t/files.json --params-out %t/files-params --write-outputs=false | FileCheck %s --check-prefix=FILES %}
// FILES: step 3/3 loss
// FILES-NOT: output 0
// FILES: params: 2 tensors
// RUN: %if numpy %{ %python %S/Inputs/train_reference.py close-json %t/files.json %t/expected/losses.json 1e-5 | FileCheck %s --check-prefix=NUMPY %}
// NUMPY: MATCH 3 losses
// RUN: %if numpy %{ autoshard-run --compare %t/files-params/onnx__MatMul_7.npy %t/expected/w.npy --rtol 1e-5 --atol 1e-6 | FileCheck %s --check-prefix=CMP %}
// RUN: %if numpy %{ autoshard-run --compare %t/files-params/onnx__MatMul_7.momentum_buffer.npy %t/expected/m.npy --rtol 1e-5 --atol 1e-6 | FileCheck %s --check-prefix=CMP %}

// dist.init = "zeros" starts at zero rather than seeded; --input still
// overrides it. "arg0" is the dist.name of argument 1, so --input arg0=
// feeds that argument, not argument 0.
// RUN: autoshard-run %s --entry zero_init --output-dir %t/zero | FileCheck %s --check-prefix=ZERO
// ZERO: output 0 'result0': f32[4x4] sum=0 absmax=0 ->
// ZERO: output 1 'result1': f32[4x4] sum={{.*}} absmax=0.{{[0-9]*[1-9]}}
// RUN: autoshard-run %S/Inputs/make-npy.mlir --entry f32_4x4 --output-dir %t/f32
// RUN: autoshard-run %s --entry zero_init --input state=%t/f32/output_0.npy --output-dir %t/zero2 | FileCheck %s --check-prefix=GIVEN
// GIVEN: output 0 'result0': f32[4x4] sum={{.*}} absmax=0.{{[0-9]*[1-9]}}
// RUN: autoshard-run %s --entry zero_init --input arg0=%t/f32/output_0.npy --output-dir %t/zero3 | FileCheck %s --check-prefix=ALIAS
// ALIAS: output 0 'result0': f32[4x4] sum=0 absmax=0 ->

// The watchdog covers every step: a rank stuck at step 2 ends the job.
// RUN: %mpirun -np 4 autoshard-run %s --steps 3 --debug-hang-rank 1 --debug-hang-step 2 --timeout 2 --write-outputs=false > %t/hang.log 2>&1; echo "exit status $?" >> %t/hang.log
// RUN: FileCheck %s --check-prefix=HANG < %t/hang.log
// HANG: step 1/3 loss
// HANG-NOT: step 2/3
// HANG: autoshard-run: error: rank {{[0-3]}}: timed out (--timeout) in {{.*}}: rank 1 did not arrive (no answer: stopped, dead or busy outside collectives)
// HANG: exit status {{[1-9][0-9]*$}}

#mesh = #dist.mesh<[dp = 2, mp = 2]>
#repl = #dist.layout<#mesh, [[], []]>
#rows = #dist.layout<#mesh, [[dp], []]>
#scalar = #dist.layout<#mesh, []>
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
#xT = affine_map<(b, i, j) -> (b, i)>
#dB = affine_map<(b, i, j) -> (b, j)>
#gO = affine_map<(b, i, j) -> (i, j)>
module attributes {dist.mesh = #mesh} {
  shard.grid @mesh(shape = 2x2)
  func.func @main(
      %w: tensor<4x4xf32> {dist.name = "onnx::MatMul_7", dist.layout = #repl, dist.global_type = tensor<4x4xf32>},
      %m: tensor<4x4xf32> {dist.name = "onnx::MatMul_7.momentum_buffer", dist.init = "zeros", dist.layout = #repl, dist.global_type = tensor<4x4xf32>},
      %x: tensor<4x4xf32> {dist.name = "x", dist.layout = #rows, dist.global_type = tensor<8x4xf32>},
      %labels: tensor<4x4xf32> {dist.name = "labels", dist.layout = #rows, dist.global_type = tensor<8x4xf32>})
      -> (tensor<f32> {dist.name = "loss", dist.layout = #scalar, dist.global_type = tensor<f32>},
          tensor<4x4xf32> {dist.name = "onnx::MatMul_7", dist.tied_arg = 0 : i64, dist.layout = #repl, dist.global_type = tensor<4x4xf32>},
          tensor<4x4xf32> {dist.name = "onnx::MatMul_7.momentum_buffer", dist.tied_arg = 1 : i64, dist.layout = #repl, dist.global_type = tensor<4x4xf32>}) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %c0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %y = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c0 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %d = arith.subf %y, %labels : tensor<4x4xf32>
    %se = tensor.empty() : tensor<f32>
    %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
    %lp = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
        ins(%d : tensor<4x4xf32>) outs(%s0 : tensor<f32>) {
      ^bb0(%a: f32, %acc: f32):
        %inv = arith.constant 0.03125 : f32
        %sq = arith.mulf %a, %a : f32
        %sc = arith.mulf %sq, %inv : f32
        %n = arith.addf %acc, %sc : f32
        linalg.yield %n : f32
    } -> tensor<f32>
    %loss = shard.all_reduce %lp on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
    %gp = linalg.generic {indexing_maps = [#xT, #dB, #gO], iterator_types = ["reduction", "parallel", "parallel"]}
        ins(%x, %d : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c0 : tensor<4x4xf32>) {
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %k = arith.constant 0.0625 : f32
        %p = arith.mulf %a, %b : f32
        %q = arith.mulf %p, %k : f32
        %n = arith.addf %acc, %q : f32
        linalg.yield %n : f32
    } -> tensor<4x4xf32>
    %g = shard.all_reduce %gp on @mesh grid_axes = [0] : tensor<4x4xf32> -> tensor<4x4xf32>
    %m2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%m, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %mu = arith.constant 0.9 : f32
        %am = arith.mulf %a, %mu : f32
        %n = arith.addf %am, %b : f32
        linalg.yield %n : f32
    } -> tensor<4x4xf32>
    %w2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w, %m2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %lr = arith.constant 0.1 : f32
        %s = arith.mulf %b, %lr : f32
        %n = arith.subf %a, %s : f32
        linalg.yield %n : f32
    } -> tensor<4x4xf32>
    return %loss, %w2, %m2 : tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>
  }
  func.func @reference(
      %w: tensor<4x4xf32> {dist.name = "onnx::MatMul_7"},
      %m: tensor<4x4xf32> {dist.name = "onnx::MatMul_7.momentum_buffer", dist.init = "zeros"},
      %x: tensor<8x4xf32> {dist.name = "x"},
      %labels: tensor<8x4xf32> {dist.name = "labels"})
      -> (tensor<f32> {dist.name = "loss"},
          tensor<4x4xf32> {dist.name = "onnx::MatMul_7", dist.tied_arg = 0 : i64},
          tensor<4x4xf32> {dist.name = "onnx::MatMul_7.momentum_buffer", dist.tied_arg = 1 : i64}) {
    %zero = arith.constant 0.0 : f32
    %e8 = tensor.empty() : tensor<8x4xf32>
    %c8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%c8 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %d = arith.subf %y, %labels : tensor<8x4xf32>
    %se = tensor.empty() : tensor<f32>
    %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
        ins(%d : tensor<8x4xf32>) outs(%s0 : tensor<f32>) {
      ^bb0(%a: f32, %acc: f32):
        %inv = arith.constant 0.03125 : f32
        %sq = arith.mulf %a, %a : f32
        %sc = arith.mulf %sq, %inv : f32
        %n = arith.addf %acc, %sc : f32
        linalg.yield %n : f32
    } -> tensor<f32>
    %e = tensor.empty() : tensor<4x4xf32>
    %c0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %g = linalg.generic {indexing_maps = [#xT, #dB, #gO], iterator_types = ["reduction", "parallel", "parallel"]}
        ins(%x, %d : tensor<8x4xf32>, tensor<8x4xf32>) outs(%c0 : tensor<4x4xf32>) {
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %k = arith.constant 0.0625 : f32
        %p = arith.mulf %a, %b : f32
        %q = arith.mulf %p, %k : f32
        %n = arith.addf %acc, %q : f32
        linalg.yield %n : f32
    } -> tensor<4x4xf32>
    %m2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%m, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %mu = arith.constant 0.9 : f32
        %am = arith.mulf %a, %mu : f32
        %n = arith.addf %am, %b : f32
        linalg.yield %n : f32
    } -> tensor<4x4xf32>
    %w2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w, %m2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %lr = arith.constant 0.1 : f32
        %s = arith.mulf %b, %lr : f32
        %n = arith.subf %a, %s : f32
        linalg.yield %n : f32
    } -> tensor<4x4xf32>
    return %loss, %w2, %m2 : tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>
  }

  func.func @zero_init(
      %state: tensor<4x4xf32> {dist.name = "state", dist.init = "zeros"},
      %other: tensor<4x4xf32> {dist.name = "arg0"})
      -> (tensor<4x4xf32>, tensor<4x4xf32>) {
    return %state, %other : tensor<4x4xf32>, tensor<4x4xf32>
  }
}
