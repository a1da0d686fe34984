//===- Elementwise.cpp - VJP of arith/math ops on tensors -----------------===//
//
// An elementwise-mappable op on tensors (arith.addf %a, %b : tensor<...>)
// is the scalar op at every point, so operand k's gradient is a parallel
// linalg.generic computing dy * d(op)/d(operand k) with the scalar op's own
// derivative (ScalarDiff's scalarPartials). Integer results carry no
// gradient.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "autoshard/Train/ScalarDiff.h"
#include "autoshard/Train/VjpOpInterface.h"
#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace autoshard::vjp {
namespace {

template <typename OpTy>
struct ElementwiseVjp
    : VjpOpInterface::ExternalModel<ElementwiseVjp<OpTy>, OpTy> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    operandGrads.assign(op->getNumOperands(), Value());
    Value dy = resultGrads[0];
    if (!dy || !isFloatTensor(op->getResult(0).getType()))
      return success();
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    unsigned rank = type.getRank();
    for (unsigned k = 0; k < op->getNumOperands(); ++k) {
      if (!wantGrads[k])
        continue;
      auto inType = dyn_cast<RankedTensorType>(op->getOperand(k).getType());
      if (!inType || inType.getShape() != type.getShape())
        return op->emitError("dist-training-step: cannot differentiate '")
               << op->getName() << "' on operands of different shapes";
      SmallVector<Value> ins(op->getOperands());
      ins.push_back(dy);
      SmallVector<AffineMap> maps(ins.size() + 1,
                                  b.getMultiDimIdentityMap(rank));
      LogicalResult status = success();
      operandGrads[k] = generic(
          b, op->getLoc(), inType, ins, maps, parallel(rank),
          [&](OpBuilder &bb, Location loc, ValueRange args) -> Value {
            // The scalar form of the op, at this point.
            OperationState state(loc, op->getName());
            state.addOperands(args.take_front(op->getNumOperands()));
            state.addTypes(type.getElementType());
            state.addAttributes(op->getAttrs());
            Operation *scalarOp = bb.create(state);
            SmallVector<Value> partials;
            if (failed(scalarPartials(bb, scalarOp, args[ins.size() - 1],
                                      partials)) ||
                !partials[k]) {
              status = failure();
              return args.back();
            }
            return partials[k];
          });
      if (failed(status))
        return op->emitError("dist-training-step: no derivative of '")
               << op->getName() << "' with respect to operand " << k;
      OpBuilder::InsertionGuard guard(b);
      auto gradOp = cast<linalg::GenericOp>(operandGrads[k].getDefiningOp());
      b.setInsertionPoint(gradOp);
      operandGrads[k] = pruneGeneric(b, gradOp).getResult(0);
    }
    return success();
  }
};

template <typename... OpTys>
void attach(MLIRContext *ctx) {
  (OpTys::template attachInterface<ElementwiseVjp<OpTys>>(*ctx), ...);
}

} // namespace

void registerElementwiseVjp(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attach<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
           arith::NegFOp, arith::MaximumFOp, arith::MaxNumFOp,
           arith::MinimumFOp, arith::MinNumFOp, arith::SelectOp,
           arith::ExtFOp, arith::TruncFOp>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attach<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
           math::Log2Op, math::Log1pOp, math::SqrtOp, math::RsqrtOp,
           math::TanhOp, math::ErfOp, math::AbsFOp, math::PowFOp,
           math::SinOp, math::CosOp, math::AtanOp, math::FmaOp>(ctx);
  });
}

} // namespace autoshard::vjp
