//===- RulesArith.cpp - Sharding rules of arith and math ops --------------===//
//
// Elementwise arith/math ops on tensors split every dim alike; constants are
// replicated unless they are splats (every shard of a splat is the same
// splat, so it may be split for free).
//
//===----------------------------------------------------------------------===//

#include "autoshard/Propagate/RuleModels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

namespace {
struct ConstantRuleModel
    : public ShardingRuleOpInterface::ExternalModel<ConstantRuleModel,
                                                    arith::ConstantOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    auto cst = cast<arith::ConstantOp>(op);
    auto type = dyn_cast<RankedTensorType>(cst.getType());
    if (!type) {
      why = "it is not a tensor constant";
      return failure();
    }
    if (!hasStaticTensorShapes(op, why))
      return failure();
    std::vector<int64_t> shape = getShapeForRule(type);
    auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
    ShardingRule rule;
    if (dense && dense.isSplat()) {
      rule = buildElementwiseRule({}, shape);
    } else {
      // Cutting a non-splat constant per device would duplicate its data in
      // every rank's program; it stays replicated.
      rule = makeReplicatedRule({}, {shape});
    }
    rule.flopsPerPoint = 0.0;
    return rule;
  }
};

template <typename OpTy> void attachIfElementwise(MLIRContext *ctx) {
  if constexpr (OpTy::template hasTrait<OpTrait::Elementwise>())
    OpTy::template attachInterface<ElementwiseRuleModel<OpTy>>(*ctx);
}

template <typename... OpTys> void attachElementwise(MLIRContext *ctx) {
  (attachIfElementwise<OpTys>(ctx), ...);
}
} // namespace

void autoshard::registerArithShardingRuleModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attachElementwise<
#define GET_OP_LIST
#include "mlir/Dialect/Arith/IR/ArithOps.cpp.inc"
        >(ctx);
    arith::ConstantOp::attachInterface<ConstantRuleModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attachElementwise<
#define GET_OP_LIST
#include "mlir/Dialect/Math/IR/MathOps.cpp.inc"
        >(ctx);
  });
}
