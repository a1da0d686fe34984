//===- RulesTosa.cpp - Sharding rules of tosa ops -------------------------===//

#include "autoshard/Propagate/RuleModels.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

namespace {
/// tosa.matmul: a [N, H, C] x b [N, C, W] -> [N, H, W], summing over C.
struct MatMulRuleModel
    : public ShardingRuleOpInterface::ExternalModel<MatMulRuleModel,
                                                    tosa::MatMulOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    auto mm = cast<tosa::MatMulOp>(op);
    if (!hasStaticTensorShapes(op, why))
      return failure();
    ArrayRef<int64_t> a =
        cast<RankedTensorType>(mm.getA().getType()).getShape();
    ArrayRef<int64_t> b =
        cast<RankedTensorType>(mm.getB().getType()).getShape();
    ShardingRule rule;
    int64_t n = rule.addFactor(a[0], FactorKind::Parallel, "n");
    int64_t h = rule.addFactor(a[1], FactorKind::Parallel, "h");
    int64_t w = rule.addFactor(b[2], FactorKind::Parallel, "w");
    int64_t c = rule.addFactor(a[2], FactorKind::Reduction, "c");
    rule.operandDims = {{{n}, {h}, {c}}, {{n}, {c}, {w}}};
    for (unsigned i = 2; i < op->getNumOperands(); ++i)
      rule.operandDims.push_back(
          TensorFactors(getShapeForRule(op->getOperand(i).getType()).size()));
    rule.resultDims = {{{n}, {h}, {w}}};
    rule.flopsPerPoint = 2.0;
    return rule;
  }
};

/// tosa.reduce_*: the reduced axis keeps size 1 in the result; split, it
/// leaves a partial of the op's kind. reduce_all/any have no ReductionKind,
/// so their axis stays whole.
template <typename OpTy>
struct ReduceRuleModel
    : public ShardingRuleOpInterface::ExternalModel<ReduceRuleModel<OpTy>,
                                                    OpTy> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    auto reduce = cast<OpTy>(op);
    if (!hasStaticTensorShapes(op, why))
      return failure();
    std::vector<int64_t> in = getShapeForRule(op->getOperand(0).getType());
    int64_t axis = reduce.getAxis();
    ShardingRule rule;
    FactorKind axisKind = FactorKind::Reduction;
    if constexpr (std::is_same_v<OpTy, tosa::ReduceSumOp>)
      rule.reduction = ReductionKind::Sum;
    else if constexpr (std::is_same_v<OpTy, tosa::ReduceMaxOp>)
      rule.reduction = ReductionKind::Max;
    else if constexpr (std::is_same_v<OpTy, tosa::ReduceMinOp>)
      rule.reduction = ReductionKind::Min;
    else if constexpr (std::is_same_v<OpTy, tosa::ReduceProductOp>)
      rule.reduction = ReductionKind::Product;
    else
      axisKind = FactorKind::NeedReplication;
    TensorFactors src(in.size()), res(in.size());
    for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
      if (in[d] <= 1)
        continue;
      if (d == axis) {
        src[d].push_back(rule.addFactor(in[d], axisKind));
        continue;
      }
      int64_t f = rule.addFactor(in[d]);
      src[d].push_back(f);
      res[d].push_back(f);
    }
    rule.operandDims = {src};
    rule.resultDims = {res};
    return rule;
  }
};

struct ReshapeRuleModel
    : public ShardingRuleOpInterface::ExternalModel<ReshapeRuleModel,
                                                    tosa::ReshapeOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    if (!hasStaticTensorShapes(op, why))
      return failure();
    std::vector<int64_t> extra;
    for (unsigned i = 1; i < op->getNumOperands(); ++i)
      extra.push_back(getShapeForRule(op->getOperand(i).getType()).size());
    return buildReshapeRule(getShapeForRule(op->getOperand(0).getType()),
                            getShapeForRule(op->getResult(0).getType()), extra);
  }
};

/// tosa.transpose: result dim i is input dim perms[i].
struct TransposeRuleModel
    : public ShardingRuleOpInterface::ExternalModel<TransposeRuleModel,
                                                    tosa::TransposeOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    auto transpose = cast<tosa::TransposeOp>(op);
    if (!hasStaticTensorShapes(op, why))
      return failure();
    std::vector<int64_t> in = getShapeForRule(op->getOperand(0).getType());
    ArrayRef<int32_t> perms = transpose.getPerms();
    if (perms.size() != in.size()) {
      why = "its permutation does not match its rank";
      return failure();
    }
    ShardingRule rule;
    rule.flopsPerPoint = 0.0;
    TensorFactors src(in.size()), res(in.size());
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] > 1)
        src[d].push_back(rule.addFactor(in[d]));
    for (size_t i = 0; i < perms.size(); ++i) {
      if (perms[i] < 0 || perms[i] >= static_cast<int32_t>(in.size())) {
        why = "its permutation is out of range";
        return failure();
      }
      res[i] = src[perms[i]];
    }
    rule.operandDims = {src};
    rule.resultDims = {res};
    return rule;
  }
};

/// tosa.gather: values [N, K, C], indices [N, W] -> [N, W, C]. The gathered
/// K dim is a sum-reduction factor (vocabulary-parallel lookup, as for
/// tensor.gather).
struct GatherRuleModel
    : public ShardingRuleOpInterface::ExternalModel<GatherRuleModel,
                                                    tosa::GatherOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    auto gather = cast<tosa::GatherOp>(op);
    if (!hasStaticTensorShapes(op, why))
      return failure();
    std::vector<int64_t> v = getShapeForRule(gather.getValues().getType());
    std::vector<int64_t> idx = getShapeForRule(gather.getIndices().getType());
    ShardingRule rule;
    rule.flopsPerPoint = 0.0;
    int64_t n = rule.addFactor(v[0], FactorKind::Parallel, "n");
    int64_t k = rule.addFactor(v[1], FactorKind::Reduction, "k");
    int64_t c = rule.addFactor(v[2], FactorKind::Parallel, "c");
    int64_t w = rule.addFactor(idx[1], FactorKind::Parallel, "w");
    rule.reduction = ReductionKind::Sum;
    rule.operandDims = {{{n}, {k}, {c}}, {{n}, {w}}};
    rule.resultDims = {{{n}, {w}, {c}}};
    return rule;
  }
};

template <typename OpTy> void attachIfElementwise(MLIRContext *ctx) {
  if constexpr (OpTy::template hasTrait<
                    OpTrait::tosa::TosaElementwiseOperator>() ||
                std::is_same_v<OpTy, tosa::MulOp> ||
                std::is_same_v<OpTy, tosa::CastOp>)
    OpTy::template attachInterface<ElementwiseRuleModel<OpTy>>(*ctx);
}

template <typename... OpTys> void attachElementwise(MLIRContext *ctx) {
  (attachIfElementwise<OpTys>(ctx), ...);
}
} // namespace

void autoshard::registerTosaShardingRuleModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tosa::TosaDialect *) {
    attachElementwise<
#define GET_OP_LIST
#include "mlir/Dialect/Tosa/IR/TosaOps.cpp.inc"
        >(ctx);
    tosa::MatMulOp::attachInterface<MatMulRuleModel>(*ctx);
    tosa::ReduceAllOp::attachInterface<ReduceRuleModel<tosa::ReduceAllOp>>(
        *ctx);
    tosa::ReduceAnyOp::attachInterface<ReduceRuleModel<tosa::ReduceAnyOp>>(
        *ctx);
    tosa::ReduceMaxOp::attachInterface<ReduceRuleModel<tosa::ReduceMaxOp>>(
        *ctx);
    tosa::ReduceMinOp::attachInterface<ReduceRuleModel<tosa::ReduceMinOp>>(
        *ctx);
    tosa::ReduceProductOp::attachInterface<
        ReduceRuleModel<tosa::ReduceProductOp>>(*ctx);
    tosa::ReduceSumOp::attachInterface<ReduceRuleModel<tosa::ReduceSumOp>>(
        *ctx);
    tosa::ReshapeOp::attachInterface<ReshapeRuleModel>(*ctx);
    tosa::TransposeOp::attachInterface<TransposeRuleModel>(*ctx);
    tosa::GatherOp::attachInterface<GatherRuleModel>(*ctx);
  });
}
