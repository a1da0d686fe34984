// Misuse of training-step attributes and flags: one clear line (located for
// the attributes) and a non-zero exit.
// REQUIRES: mpi
// RUN: not autoshard-run %s --entry bad_layout 2>&1 | FileCheck %s --check-prefix=LAYOUT
// RUN: not autoshard-run %s --entry bad_type 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not autoshard-run %s --entry bad_index 2>&1 | FileCheck %s --check-prefix=INDEX
// RUN: not autoshard-run %s --entry twice 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not autoshard-run %s --entry bad_init 2>&1 | FileCheck %s --check-prefix=INIT
// The partitioned step fails on every rank; the job prints it once.
// RUN: not %mpirun -np 4 autoshard-run %s --entry bad_layout 2>&1 | FileCheck %s --check-prefix=LAYOUT

// RUN: not autoshard-run %s --entry no_loss --steps 2 --losses-out %t.json 2>&1 | FileCheck %s --check-prefix=LOSS
// LOSS: autoshard-run: error: --losses-out: result 0 ('w') is f32[4x4], not a rank-0 float loss
// RUN: not autoshard-run %s --entry untied --params-out %t.params 2>&1 | FileCheck %s --check-prefix=PARAMS
// PARAMS: autoshard-run: error: --params-out: no result of the program has dist.tied_arg
// RUN: not autoshard-run %s --entry no_loss --steps 0 2>&1 | FileCheck %s --check-prefix=STEPS
// STEPS: autoshard-run: error: --steps must be at least 1, got 0
// RUN: not autoshard-run %s --entry no_loss --steps 2 --repeat 3 2>&1 | FileCheck %s --check-prefix=REPEAT
// REPEAT: autoshard-run: error: --repeat times repeated runs on the same inputs; it cannot be combined with --steps > 1
// A bad --losses-out path fails before the first step.
// RUN: not autoshard-run %s --entry scalar_loss --steps 2 --losses-out %t.missing-dir/losses.json 2>&1 | FileCheck %s --check-prefix=LOSSFILE
// LOSSFILE: autoshard-run: error: cannot write --losses-out '{{.*}}missing-dir/losses.json': {{.*}}
// LOSSFILE-NOT: step 1

// A step without a loss still runs and reports each step.
// RUN: autoshard-run %s --entry no_loss --steps 2 --write-outputs=false | FileCheck %s --check-prefix=NOLOSS
// NOLOSS: step 1/2 ({{[0-9.]+}} ms)
// NOLOSS-NEXT: step 2/2 ({{[0-9.]+}} ms)

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
  shard.grid @mesh(shape = 2x2)
  // Same local type, another shard: feeding it back would mix up rows.
  func.func @bad_layout(
      %w: tensor<2x4xf32> {dist.name = "w", dist.layout = #dist.layout<#mesh, [[dp], []]>,
                           dist.global_type = tensor<4x4xf32>})
      -> (tensor<2x4xf32> {dist.name = "w", dist.tied_arg = 0 : i64,
                           dist.layout = #dist.layout<#mesh, [[mp], []]>,
                           dist.global_type = tensor<4x4xf32>}) {
    // LAYOUT: train-errors.mlir:[[@LINE+1]]:5: error: autoshard-run: result 0 ('w') is tied to argument 0 ('w') by dist.tied_arg but holds another shard: the result is tensor<2x4xf32> (global [4x4], layout {{\[\[}}mp], []]), the argument tensor<2x4xf32> (global [4x4], layout {{\[\[}}dp], []])
    return %w : tensor<2x4xf32>
  }
  // LAYOUT-NOT: error

  func.func @bad_type(%w: tensor<4x4xf32> {dist.name = "w"}, %v: tensor<2x4xf32>)
      -> (tensor<2x4xf32> {dist.tied_arg = 0 : i64}) {
    // TYPE: train-errors.mlir:[[@LINE+1]]:5: error: autoshard-run: result 0 ('result0') is tied to argument 0 ('w') by dist.tied_arg but holds another shard: the result is tensor<2x4xf32> (global [2x4], layout {{\[\[}}], []]), the argument tensor<4x4xf32> (global [4x4], layout {{\[\[}}], []])
    return %v : tensor<2x4xf32>
  }

  func.func @bad_index(%w: tensor<4x4xf32>)
      -> (tensor<4x4xf32> {dist.tied_arg = 1 : i64}) {
    // INDEX: train-errors.mlir:[[@LINE+1]]:5: error: autoshard-run: result 'result0': dist.tied_arg must be an argument index in [0, 1), got 1 : i64
    return %w : tensor<4x4xf32>
  }

  func.func @twice(%w: tensor<4x4xf32>)
      -> (tensor<4x4xf32> {dist.tied_arg = 0 : i64},
          tensor<4x4xf32> {dist.tied_arg = 0 : i64}) {
    // TWICE: train-errors.mlir:[[@LINE+1]]:5: error: autoshard-run: result 1 ('result1') is tied to argument 0 ('arg0') by dist.tied_arg but so is result 0
    return %w, %w : tensor<4x4xf32>, tensor<4x4xf32>
  }

  // INIT: train-errors.mlir:[[@LINE+1]]:23: error: autoshard-run: argument 'm': dist.init must be "zeros", got "ones"
  func.func @bad_init(%m: tensor<4x4xf32> {dist.name = "m", dist.init = "ones"})
      -> tensor<4x4xf32> {
    return %m : tensor<4x4xf32>
  }

  func.func @no_loss(%w: tensor<4x4xf32>)
      -> (tensor<4x4xf32> {dist.name = "w", dist.tied_arg = 0 : i64}) {
    return %w : tensor<4x4xf32>
  }

  func.func @scalar_loss(%l: tensor<f32>) -> tensor<f32> {
    return %l : tensor<f32>
  }

  func.func @untied(%w: tensor<4x4xf32>) -> tensor<4x4xf32> {
    return %w : tensor<4x4xf32>
  }
}
