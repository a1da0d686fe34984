//===- Identity.cpp - VJP of annotations and reshards ---------------------===//
//
// dist.annotate, dist.reshard and upstream shard.shard return their input
// unchanged (only its layout is pinned or changed), so dX = dY. Passing dY through as is lets propagation give the
// gradient the layout it prefers.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "autoshard/Dialect/Dist/IR/DistOps.h"
#include "autoshard/Train/VjpOpInterface.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

namespace {

template <typename OpTy>
struct IdentityVjp
    : public VjpOpInterface::ExternalModel<IdentityVjp<OpTy>, OpTy> {
  LogicalResult buildVjp(Operation *op, OpBuilder &,
                         ArrayRef<Value> resultGrads, ArrayRef<bool> wantGrads,
                         SmallVectorImpl<Value> &operandGrads) const {
    operandGrads.assign(op->getNumOperands(), Value());
    if (wantGrads[0])
      operandGrads[0] = resultGrads[0];
    return success();
  }
};

} // namespace

void autoshard::vjp::registerIdentityVjp(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, dist::DistDialect *) {
    dist::AnnotateOp::attachInterface<IdentityVjp<dist::AnnotateOp>>(*ctx);
    dist::ReshardOp::attachInterface<IdentityVjp<dist::ReshardOp>>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, shard::ShardDialect *) {
    shard::ShardOp::attachInterface<IdentityVjp<shard::ShardOp>>(*ctx);
  });
}
