//===- Generic.cpp - VJP of linalg.generic --------------------------------===//
//
// One rule covers elementwise ops, broadcasts, reductions and contractions:
// a generic computes y[out(i)] = combine(y, f(x_0[m_0(i)], ...)) over the
// loop points i, with combine absent (all loops parallel) or one of
// add / max / min. The gradient of input k is then itself a generic over the
// same loops:
//
//   dx_k[m_k(i)] += dy[out(i)] * w(i) * df/dx_k(i)
//
// where w = 1 for an add (or no) combiner and [f(i) == y[out(i)]] for max
// and min; loops absent from m_k are reductions. df/dx_k is the body's
// scalar derivative (ScalarDiff), so LayerNorm, GELU, softmax pieces and the
// importer's contraction generics need no rule of their own. The gradient
// generic reads only the inputs its body uses.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "autoshard/Train/ScalarDiff.h"
#include "autoshard/Train/VjpOpInterface.h"
#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace autoshard::vjp {
namespace {

enum class Combiner { None, Add, Max, Min };

/// The body split into combine(out, f).
struct BodyForm {
  Combiner combiner = Combiner::None;
  Value f; // the per-point value (in the original body)
};

FailureOr<BodyForm> matchBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  Value out = body.getArgument(op.getNumDpsInputs());
  Value yielded = body.getTerminator()->getOperand(0);
  bool reduces = op.getNumReductionLoops() > 0;
  if (!reduces) {
    if (dependsOn(yielded, out))
      return op.emitError("dist-training-step: cannot differentiate a "
                          "parallel linalg.generic whose body reads its "
                          "output");
    return BodyForm{Combiner::None, yielded};
  }
  Operation *def = yielded.getDefiningOp();
  Combiner c = Combiner::None;
  if (def && isa<arith::AddFOp>(def))
    c = Combiner::Add;
  else if (def && isa<arith::MaximumFOp, arith::MaxNumFOp>(def))
    c = Combiner::Max;
  else if (def && isa<arith::MinimumFOp, arith::MinNumFOp>(def))
    c = Combiner::Min;
  if (c != Combiner::None && def->getBlock() == &body) {
    for (unsigned k = 0; k < 2; ++k)
      if (def->getOperand(k) == out && !dependsOn(def->getOperand(1 - k), out))
        return BodyForm{c, def->getOperand(1 - k)};
  }
  return op.emitError("dist-training-step: cannot differentiate a reduction "
                      "linalg.generic whose body is not add/max/min of its "
                      "output and a function of its inputs");
}

struct GenericVjp
    : VjpOpInterface::ExternalModel<GenericVjp, linalg::GenericOp> {
  LogicalResult buildVjp(Operation *raw, OpBuilder &b,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    auto op = cast<linalg::GenericOp>(raw);
    operandGrads.assign(op->getNumOperands(), Value());
    if (op.getNumDpsInits() != 1)
      return op.emitError("dist-training-step: cannot differentiate a "
                          "linalg.generic with several results");
    Value dy = resultGrads[0];
    if (!dy)
      return success();
    FailureOr<BodyForm> form = matchBody(op);
    if (failed(form))
      return failure();
    unsigned numIns = op.getNumDpsInputs();
    for (unsigned k = 0; k < numIns; ++k) {
      if (!wantGrads[k])
        continue;
      FailureOr<Value> g = inputGrad(op, b, *form, dy, k);
      if (failed(g))
        return failure();
      operandGrads[k] = *g;
    }
    // The init holds the reduction's starting value: with an add combiner
    // it passes into every output element once.
    if (wantGrads[numIns]) {
      if (form->combiner == Combiner::Max || form->combiner == Combiner::Min)
        return op.emitError("dist-training-step: cannot differentiate the "
                            "init of a max/min reduction");
      if (form->combiner == Combiner::Add)
        operandGrads[numIns] = dy;
    }
    return success();
  }

  /// The gradient of input `k`, or null when f does not depend on it.
  static FailureOr<Value> inputGrad(linalg::GenericOp op, OpBuilder &b,
                                    const BodyForm &form, Value dy,
                                    unsigned k) {
    Block &body = op.getRegion().front();
    if (!dependsOn(form.f, body.getArgument(k)))
      return Value();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    AffineMap inMap = maps[k], outMap = maps.back();
    if (!inMap.isProjectedPermutation())
      return op.emitError("dist-training-step: cannot differentiate input ")
             << k << " of a linalg.generic: its indexing map " << AffineMapAttr::get(inMap)
             << " is not a projected permutation";
    auto inType = cast<RankedTensorType>(op.getDpsInputs()[k].getType());
    SmallVector<utils::IteratorType> iters(op.getNumLoops(),
                                           utils::IteratorType::reduction);
    for (AffineExpr e : inMap.getResults())
      iters[cast<AffineDimExpr>(e).getPosition()] =
          utils::IteratorType::parallel;
    // Inputs: the forward inputs, dy and (max/min) y, each at its map.
    unsigned numIns = op.getNumDpsInputs();
    SmallVector<Value> ins(op.getDpsInputs());
    SmallVector<AffineMap> newMaps(maps.begin(), maps.begin() + numIns);
    ins.push_back(dy);
    newMaps.push_back(outMap);
    bool selects = form.combiner == Combiner::Max ||
                   form.combiner == Combiner::Min;
    if (selects) {
      ins.push_back(op.getResult(0));
      newMaps.push_back(outMap);
    }
    newMaps.push_back(inMap);
    LogicalResult status = success();
    Value grad = generic(
        b, op.getLoc(), inType, ins, newMaps, iters,
        [&](OpBuilder &bb, Location loc, ValueRange args) -> Value {
          IRMapping mapping;
          for (unsigned i = 0; i < numIns; ++i)
            mapping.map(body.getArgument(i), args[i]);
          Value seed = args[numIns];
          if (selects) {
            // The reduction's result came from the points where f equals it.
            Value f = cloneScalarExpr(bb, form.f, mapping);
            Value hit = arith::CmpFOp::create(bb, loc, arith::CmpFPredicate::OEQ,
                                              f, args[numIns + 1]);
            seed = arith::SelectOp::create(bb, loc, hit, seed,
                                           scalar(bb, loc, seed.getType(), 0));
          }
          SmallVector<Value> grads;
          if (failed(differentiateScalar(bb, form.f, {body.getArgument(k)},
                                         seed, mapping, grads))) {
            status = failure();
            return args.back();
          }
          return arith::AddFOp::create(bb, loc, args.back(), grads[0]);
        },
        zeros(b, op.getLoc(), inType));
    auto gradOp = cast<linalg::GenericOp>(grad.getDefiningOp());
    if (failed(status)) {
      gradOp.erase();
      return failure();
    }
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(gradOp);
    return pruneGeneric(b, gradOp).getResult(0);
  }
};

/// Named elementwise and contraction ops (linalg.add, linalg.exp,
/// linalg.dot, ...) are generics with a fixed body: the rule differentiates
/// the generic form of a copy, which is erased unless a max/min gradient
/// reads its result.
template <typename OpTy>
struct NamedVjp : VjpOpInterface::ExternalModel<NamedVjp<OpTy>, OpTy> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    IRRewriter rewriter(b);
    auto copy = cast<linalg::LinalgOp>(rewriter.clone(*op));
    FailureOr<linalg::GenericOp> form =
        linalg::generalizeNamedOp(rewriter, copy);
    if (failed(form)) {
      copy->erase();
      return op->emitError("dist-training-step: cannot differentiate '")
             << op->getName() << "' (no generic form)";
    }
    LogicalResult result = GenericVjp().buildVjp(*form, b, resultGrads,
                                                 wantGrads, operandGrads);
    if (form->getResult(0).use_empty())
      form->erase();
    return result;
  }
};

template <typename... OpTys>
void attachNamed(MLIRContext *ctx) {
  (OpTys::template attachInterface<NamedVjp<OpTys>>(*ctx), ...);
}

} // namespace

void registerGenericVjp(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    linalg::GenericOp::attachInterface<GenericVjp>(*ctx);
    attachNamed<linalg::AddOp, linalg::SubOp, linalg::MulOp, linalg::DivOp,
                linalg::ExpOp, linalg::LogOp, linalg::TanhOp, linalg::SqrtOp,
                linalg::RsqrtOp, linalg::NegFOp, linalg::AbsOp, linalg::ErfOp,
                linalg::MaxOp, linalg::MinOp, linalg::SquareOp,
                linalg::ReciprocalOp, linalg::PowFOp, linalg::DotOp,
                linalg::MatvecOp, linalg::VecmatOp>(ctx);
  });
}

} // namespace autoshard::vjp
