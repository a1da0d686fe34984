//===- MixedPrecision.cpp - The --dist-mixed-precision pass ---------------===//
//
// Automatic mixed precision as PyTorch autocast and MindSpore's auto mixed
// precision do it: the GEMMs take 2-byte inputs and accumulate in FP32, and
// everything else -- softmax, LayerNorm, reductions, losses, the optimizer
// and the master weights it updates -- stays FP32. It runs on the whole
// program after the training step is built, so the backward's GEMMs (the
// transposed products of the VJP rules) are covered like the forward's, and
// before propagation, so the cost model sees the 2-byte operands.
//
// A contraction keeps its f32 init and result; its inputs become
// `arith.truncf` of the f32 values (one cast per value and type, right after
// the value is made, so a reshard of it can move the 2-byte copy) and its
// body extends them back (`arith.extf`) before the multiply: on named ops
// this is exactly the region their builder makes for bf16 ins and f32 outs.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Train/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"

namespace autoshard {
#define GEN_PASS_DEF_DISTMIXEDPRECISION
#include "autoshard/Train/Passes.h.inc"
} // namespace autoshard

using namespace mlir;
using namespace autoshard;

namespace {

constexpr StringLiteral kPrecisionAttr = "dist.precision";
constexpr StringLiteral kTf32Attr = "dist.tf32";
constexpr StringLiteral kPhaseAttr = "dist.phase";

/// Whether `op` is a matrix-product-like contraction of f32 tensors: two
/// inputs, one init, a multiply-accumulate body, at least one reduction
/// loop, and a loop that only one input has (M or N). The last excludes the
/// batched dot products of softmax' and LayerNorm's backward (sum(dy * y))
/// and the parameter gradients of LayerNorm (sum over rows of dy * xhat):
/// those are reductions autocast keeps in FP32.
bool isMatmulLike(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || !op.hasPureTensorSemantics())
    return false;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.getElementType().isF32())
      return false;
  }
  if (!linalg::isaContractionOpInterface(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  return succeeded(dims) && !dims->k.empty() &&
         (!dims->m.empty() || !dims->n.empty());
}

class MixedPrecision {
public:
  explicit MixedPrecision(FloatType low) : low(low) {}

  /// Transposes whose casts were made from their inputs: erased once
  /// nothing reads them any more.
  SmallVector<Operation *> replaced;

  /// Casts the inputs of `op` to the low precision and extends them back
  /// inside its body.
  void lower(linalg::LinalgOp op) {
    Block &body = op->getRegion(0).front();
    for (OpOperand *input : op.getDpsInputOperands()) {
      input->set(truncated(input->get()));
      BlockArgument arg = body.getArgument(input->getOperandNumber());
      arg.setType(low);
      OpBuilder b = OpBuilder::atBlockBegin(&body);
      auto ext = arith::ExtFOp::create(b, op.getLoc(), b.getF32Type(), arg);
      arg.replaceAllUsesExcept(ext.getResult(), ext);
    }
  }

private:
  /// `value` in the low precision: one cast per value.
  Value truncated(Value value) {
    if (Value known = casts.lookup(value))
      return known;
    Value made = makeCast(value);
    casts[value] = made;
    return made;
  }

  /// A new cast of `value`, right after its definition, in the phase that
  /// made it.
  Value makeCast(Value value) {
    OpBuilder b(value.getContext());
    Operation *def = value.getDefiningOp();
    // A transposed operand (the backward's W^T, X^T) is the transpose of the
    // cast: the weight is cast once, as autocast caches it, and the
    // transpose still folds into the GEMM when lowered.
    if (auto transpose = dyn_cast_or_null<linalg::TransposeOp>(def);
        transpose && transpose.hasPureTensorSemantics()) {
      Value input = truncated(transpose.getInput());
      b.setInsertionPoint(transpose);
      auto init = tensor::EmptyOp::create(
          b, transpose.getLoc(),
          cast<RankedTensorType>(value.getType()).getShape(), low);
      auto lowered = linalg::TransposeOp::create(
          b, transpose.getLoc(), input, init, transpose.getPermutation());
      if (Attribute phase = def->getAttr(kPhaseAttr)) {
        init->setAttr(kPhaseAttr, phase);
        lowered->setAttr(kPhaseAttr, phase);
      }
      replaced.push_back(transpose);
      return lowered->getResult(0);
    }
    if (def)
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(value).getOwner());
    auto type = cast<RankedTensorType>(value.getType());
    auto trunc =
        arith::TruncFOp::create(b, value.getLoc(), type.clone(low), value);
    if (def)
      if (Attribute phase = def->getAttr(kPhaseAttr))
        trunc->setAttr(kPhaseAttr, phase);
    return trunc.getResult();
  }

  FloatType low;
  llvm::DenseMap<Value, Value> casts;
};

struct DistMixedPrecisionPass
    : public autoshard::impl::DistMixedPrecisionBase<DistMixedPrecisionPass> {
  using DistMixedPrecisionBase::DistMixedPrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    if (precision != "fp32" && precision != "tf32" && precision != "bf16" &&
        precision != "fp16") {
      module.emitError() << "dist-mixed-precision: unknown precision '"
                         << precision
                         << "' (expected fp32, tf32, bf16 or fp16)";
      return signalPassFailure();
    }
    if (precision == "fp32")
      return;
    module->setAttr(kPrecisionAttr, StringAttr::get(ctx, precision));
    SmallVector<linalg::LinalgOp> contractions;
    module.walk([&](linalg::LinalgOp op) {
      if (isMatmulLike(op))
        contractions.push_back(op);
    });
    if (precision == "tf32") {
      for (linalg::LinalgOp op : contractions)
        op->setAttr(kTf32Attr, UnitAttr::get(ctx));
      return;
    }
    FloatType low = precision == "bf16" ? FloatType(BFloat16Type::get(ctx))
                                        : FloatType(Float16Type::get(ctx));
    MixedPrecision rewriter(low);
    for (linalg::LinalgOp op : contractions)
      rewriter.lower(op);
    for (Operation *op : rewriter.replaced)
      if (op->use_empty())
        op->erase();
  }
};

} // namespace
