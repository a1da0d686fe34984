//===- Passes.td - Training-step passes --------------------*- tablegen -*-===//
#ifndef AUTOSHARD_TRAIN_PASSES_TD
#define AUTOSHARD_TRAIN_PASSES_TD

include "mlir/Pass/PassBase.td"

def DistTrainingStep : Pass<"dist-training-step", "::mlir::ModuleOp"> {
  let summary = "Turn a forward @main into a training step: loss, gradients "
                "and the optimizer update";
  let description = [{
    Replaces the forward function `@main(params..., inputs...) -> (out0, ...)`
    with

      @train_step(params..., optimizer_state..., inputs..., labels)
          -> (loss, params'..., optimizer_state'...)

    in linalg/tensor/arith/math on tensors. Parameters are the arguments
    with `dist.weight` (ONNX initializers) or `dist.param`. The loss is taken
    on output 0; gradients come from each op's VJP rule
    (`VjpOpInterface`, lib/Train/Vjp), summed where a value has several
    uses; the optimizer follows PyTorch's update formulas. Optimizer state
    arguments carry `dist.init = "zeros"`; every updated parameter and state
    result carries `dist.tied_arg` (the argument it replaces in the next
    step) and `dist.name`. Ops the pass builds carry `dist.phase`
    ("loss", "backward", "optimizer") so reports can tell the forward
    activations the backward keeps. An active op without a VJP rule is a
    located error that names it.

    The result is an ordinary program: `--dist-propagate` and
    `--dist-partition` shard it like any other (weight gradients of a
    batch-split step are partial sums over the data axis and get their
    all-reduce by themselves).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::autoshard::dist::DistDialect"
  ];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"cross_entropy\"",
           "Loss on output 0: 'cross_entropy' (logits over the last dim, "
           "integer labels, mean over positions) or 'mse' (mean)">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "'sgd', 'momentum', 'adam' or 'adamw' (PyTorch's formulas)">,
    Option<"lr", "lr", "double", /*default=*/"0.01", "Learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Momentum factor (optimizer=momentum)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "Adam's first-moment decay">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "Adam's second-moment decay">,
    Option<"eps", "eps", "double", /*default=*/"1e-8",
           "Adam's denominator epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "L2 penalty (sgd, momentum, adam) or decoupled decay (adamw)">,
    Option<"dataAxis", "data-axis", "std::string", /*default=*/"\"\"",
           "Mesh axis to split the inputs' and labels' dim 0 over (data "
           "parallel); empty: leave inputs as annotated">,
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "The forward function">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "Gradient accumulation: the forward takes one micro-batch (its "
           "declared batch b), the step's inputs and labels hold this many "
           "(dim 0 of K*b rows); forward and backward run on each, "
           "gradients accumulate, one update: the numbers of one step on "
           "the K*b batch">,
    Option<"optimizerShard", "optimizer-shard", "bool", /*default=*/"false",
           "Split the optimizer state and update of parameters at or above "
           "the threshold over the data axis (MindSpore's optimizer "
           "parallel, ZeRO): gradients are reduce-scattered, updated "
           "parameters all-gathered">,
    Option<"optimizerShardThreshold", "optimizer-shard-threshold", "int64_t",
           /*default=*/"65536",
           "Bytes from which a parameter's optimizer state is split">,
    Option<"recompute", "recompute", "std::string", /*default=*/"\"none\"",
           "Forward ops the backward recomputes instead of keeping their "
           "results: 'none', 'all', or 'ops=GLOB,...' (op names or "
           "dist.name / location globs); ops marked dist.recompute too">,
  ];
}

def DistMixedPrecision : Pass<"dist-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "Run the contractions in a lower precision with FP32 "
                "accumulation (automatic mixed precision)";
  let description = [{
    PyTorch autocast / MindSpore auto mixed precision on the tensor program:
    every matmul-like contraction (linalg.matmul, linalg.batch_matmul,
    linalg.matvec and any linalg op whose body is a multiply-accumulate with
    an operand-only loop, e.g. the importer's rank-3 contraction generics)
    gets its A and B operands `arith.truncf` to bf16 or f16, and keeps its
    f32 init and result: the body extends the products' factors back to f32,
    so the accumulation is FP32. Everything else stays FP32: elementwise ops,
    softmax, LayerNorm, reductions, losses and the optimizer (FP32 master
    weights). Run after --dist-training-step, so the backward GEMMs are
    covered too, and before --dist-propagate, so the cost model prices the
    2-byte operands and a reshard after a cast moves half the bytes.

    precision=tf32 leaves the program as it is and marks each contraction
    `dist.tf32` (lowered as a Matmul/BatchMatmul instruction with tf32 =
    true: TF32 inputs, FP32 accumulation on GPUs that have it); fp32 does
    nothing. The module gets `dist.precision`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect"
  ];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "fp32 (no change), tf32 (contractions marked dist.tf32), bf16 or "
           "fp16 (contraction inputs cast, FP32 accumulation)">,
  ];
}

def DistWidenF64 : Pass<"dist-widen-f64", "::mlir::ModuleOp"> {
  let summary = "Compute every f32 of the program in f64, keeping the f32 "
                "signature (a rounding reference for autoshard verify)";
  let description = [{
    Every f32 type inside the functions (scalars, tensor element types,
    block arguments of linalg bodies) becomes f64 and every f32 constant the
    same value in f64. Each function keeps its signature: its f32 arguments
    are `arith.extf` at entry and its results `arith.truncf` at the return,
    so seeded inputs and weight files feed the widened program exactly the
    values the f32 program reads and the outputs compare directly. Calls keep
    their callee's types (operands truncated, results extended). An extf to
    f64 or truncf from f64 that becomes an identity goes; casts from and to
    bf16/f16 stay. autoshard verify runs the result on one rank: its distance
    from the f32 program is the program's own FP32 rounding as the program
    propagates it (docs/design.md "Precision").
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect"
  ];
}

#endif // AUTOSHARD_TRAIN_PASSES_TD
