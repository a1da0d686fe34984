//===- Matmul.cpp - VJP of linalg.matmul ----------------------------------===//
//
// C = A·B + C0 (A: MxK, B: KxN) is C[i,j] = Σ_k A[i,k]·B[k,j] + C0[i,j], so
//   ∂L/∂A[i,k] = Σ_j dC[i,j]·B[k,j]   i.e. dA = dC·Bᵀ,
//   ∂L/∂B[k,j] = Σ_i A[i,k]·dC[i,j]   i.e. dB = Aᵀ·dC,
//   ∂L/∂C0 = dC.
// The products are plain linalg.matmul ops (default maps) over an explicit
// linalg.transpose, into zero fills, so the runtime still maps them to
// BLAS. Matmuls with other indexing_maps or with casts are rejected.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "autoshard/Train/VjpOpInterface.h"
#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

namespace {

/// lhs·rhs as a plain linalg.matmul into zeros of `type`.
Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs, Type type) {
  auto t = cast<RankedTensorType>(type);
  return linalg::MatmulOp::create(b, loc, TypeRange{t}, ValueRange{lhs, rhs},
                                  ValueRange{vjp::zeros(b, loc, t)})
      .getResult(0);
}

struct MatmulVjp
    : public VjpOpInterface::ExternalModel<MatmulVjp, linalg::MatmulOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    if (failed(vjp::requirePlainContraction(cast<linalg::MatmulOp>(op))) ||
        failed(vjp::requireStaticShapes(op)))
      return failure();
    operandGrads.assign(op->getNumOperands(), Value());
    Value dC = resultGrads[0], lhs = op->getOperand(0), rhs = op->getOperand(1);
    Location loc = op->getLoc();
    if (!dC)
      return success();
    if (wantGrads[0])
      operandGrads[0] = matmul(b, loc, dC, vjp::transpose(b, loc, rhs, {1, 0}),
                               lhs.getType());
    if (wantGrads[1])
      operandGrads[1] = matmul(b, loc, vjp::transpose(b, loc, lhs, {1, 0}), dC,
                               rhs.getType());
    if (wantGrads[2])
      operandGrads[2] = dC;
    return success();
  }
};

} // namespace

void autoshard::vjp::registerMatmulVjp(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    linalg::MatmulOp::attachInterface<MatmulVjp>(*ctx);
  });
}
