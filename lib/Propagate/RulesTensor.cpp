//===- RulesTensor.cpp - Sharding rules of tensor ops ---------------------===//
//
// Hand-written rules: reshapes pass a split of a dim's major part through
// compound factors; slices, pads and concats keep the dims they cut or grow
// whole; a zero pad passes a pending partial sum through; gather (an
// embedding lookup) may split its table on the gathered dim, leaving a
// partial sum (Megatron's vocabulary-parallel embedding).
//
//===----------------------------------------------------------------------===//

#include "autoshard/Propagate/RuleModels.h"

#include "autoshard/Dialect/Dist/IR/DistDialect.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

/// Operands after the tensors the rule describes (dynamic sizes, offsets,
/// shape tensors) get their own rank's unsplit dims.
static void addTrailingOperands(ShardingRule &rule, Operation *op,
                                unsigned from) {
  for (unsigned i = from; i < op->getNumOperands(); ++i)
    rule.operandDims.push_back(
        TensorFactors(getShapeForRule(op->getOperand(i).getType()).size()));
}

static FailureOr<ShardingRule> getReshapeRule(Operation *op, Value source,
                                              Value result, std::string &why) {
  if (!hasStaticTensorShapes(op, why))
    return failure();
  std::vector<int64_t> extra;
  for (unsigned i = 1; i < op->getNumOperands(); ++i)
    extra.push_back(getShapeForRule(op->getOperand(i).getType()).size());
  ShardingRule rule =
      buildReshapeRule(getShapeForRule(source.getType()),
                       getShapeForRule(result.getType()), extra);
  return rule;
}

namespace {
template <typename OpTy>
struct ReshapeRuleModel
    : public ShardingRuleOpInterface::ExternalModel<ReshapeRuleModel<OpTy>,
                                                    OpTy> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    return getReshapeRule(op, op->getOperand(0), op->getResult(0), why);
  }
};

/// tensor.empty: nothing is read; every dim is parallel.
struct EmptyRuleModel
    : public ShardingRuleOpInterface::ExternalModel<EmptyRuleModel,
                                                    tensor::EmptyOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    if (!hasStaticTensorShapes(op, why))
      return failure();
    ShardingRule rule =
        buildElementwiseRule({}, getShapeForRule(op->getResult(0).getType()));
    rule.flopsPerPoint = 0.0;
    return rule;
  }
};

/// tensor.concat: the concatenated dim stays whole (each operand and the
/// result have their own extent on it); the other dims are shared.
struct ConcatRuleModel
    : public ShardingRuleOpInterface::ExternalModel<ConcatRuleModel,
                                                    tensor::ConcatOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    auto concat = cast<tensor::ConcatOp>(op);
    if (!hasStaticTensorShapes(op, why))
      return failure();
    std::vector<int64_t> shape = getShapeForRule(concat.getType());
    int64_t dim = concat.getDim();
    ShardingRule rule;
    rule.flopsPerPoint = 0.0;
    TensorFactors res(shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      if (static_cast<int64_t>(d) != dim && shape[d] > 1)
        res[d].push_back(rule.addFactor(shape[d]));
    for (Value input : concat.getInputs()) {
      std::vector<int64_t> s = getShapeForRule(input.getType());
      TensorFactors dims = res;
      if (s[dim] > 1)
        dims[dim] = {rule.addFactor(s[dim], FactorKind::NeedReplication)};
      rule.operandDims.push_back(dims);
    }
    if (shape[dim] > 1)
      res[dim] = {rule.addFactor(shape[dim], FactorKind::NeedReplication)};
    rule.resultDims.push_back(res);
    return rule;
  }
};

/// Whether a slice covers dim `d` of a tensor of extent `extent` whole.
static bool isFullDim(OffsetSizeAndStrideOpInterface slice, int64_t d,
                      int64_t extent) {
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  ArrayRef<int64_t> strides = slice.getStaticStrides();
  ArrayRef<int64_t> offsets = slice.getStaticOffsets();
  return sizes[d] == extent && strides[d] == 1 && offsets[d] == 0;
}

/// extract_slice / insert_slice. `big` is the sliced tensor's shape (the
/// source of an extract, the destination of an insert), `small` the slice
/// as typed (possibly rank-reduced). Full dims are one parallel factor
/// shared by both; sliced dims are need-replication on each side.
static LogicalResult
buildSliceDims(ShardingRule &rule, OffsetSizeAndStrideOpInterface slice,
               ArrayRef<int64_t> big, ArrayRef<int64_t> small,
               TensorFactors &bigDims, TensorFactors &smallDims,
               std::string &why) {
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  if (llvm::any_of(sizes, ShapedType::isDynamic)) {
    why = "its slice sizes are dynamic";
    return failure();
  }
  std::optional<llvm::SmallDenseSet<unsigned>> dropped =
      computeRankReductionMask(sizes, small);
  if (!dropped) {
    why = "its slice is not a rank reduction of its sizes";
    return failure();
  }
  bigDims.assign(big.size(), {});
  smallDims.assign(small.size(), {});
  size_t s = 0;
  for (size_t d = 0; d < big.size(); ++d) {
    bool kept = !dropped->contains(d);
    if (isFullDim(slice, d, big[d])) {
      if (big[d] > 1) {
        int64_t f = rule.addFactor(big[d]);
        bigDims[d].push_back(f);
        if (kept)
          smallDims[s].push_back(f);
      }
    } else {
      if (big[d] > 1)
        bigDims[d].push_back(
            rule.addFactor(big[d], FactorKind::NeedReplication));
      if (kept && sizes[d] > 1)
        smallDims[s].push_back(
            rule.addFactor(sizes[d], FactorKind::NeedReplication));
    }
    if (kept)
      ++s;
  }
  return success();
}

struct ExtractSliceRuleModel
    : public ShardingRuleOpInterface::ExternalModel<ExtractSliceRuleModel,
                                                    tensor::ExtractSliceOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    if (!hasStaticTensorShapes(op, why))
      return failure();
    ShardingRule rule;
    rule.flopsPerPoint = 0.0;
    TensorFactors src, res;
    if (failed(buildSliceDims(rule, slice, slice.getSourceType().getShape(),
                              slice.getType().getShape(), src, res, why)))
      return failure();
    rule.operandDims.push_back(src);
    addTrailingOperands(rule, op, 1);
    rule.resultDims.push_back(res);
    return rule;
  }
};

/// insert_slice: the destination and the result share every factor (the
/// destination's data passes through, so it is tied to the result).
struct InsertSliceRuleModel
    : public ShardingRuleOpInterface::ExternalModel<InsertSliceRuleModel,
                                                    tensor::InsertSliceOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    auto insert = cast<tensor::InsertSliceOp>(op);
    if (!hasStaticTensorShapes(op, why))
      return failure();
    ShardingRule rule;
    rule.flopsPerPoint = 0.0;
    TensorFactors dest, src;
    if (failed(buildSliceDims(rule, insert, insert.getDestType().getShape(),
                              insert.getSourceType().getShape(), dest, src,
                              why)))
      return failure();
    rule.operandDims = {src, dest};
    addTrailingOperands(rule, op, 2);
    rule.resultDims.push_back(dest);
    rule.tiedResult.assign(rule.operandDims.size(), -1);
    rule.tiedResult[1] = 0;
    return rule;
  }
};

/// Whether `pad` pads with the constant +0 (so that a pad of a sum of terms
/// is the sum of the padded terms).
static bool padsWithZero(tensor::PadOp pad) {
  Value value = pad.getConstantPaddingValue();
  FloatAttr f;
  IntegerAttr i;
  if (value && matchPattern(value, m_Constant(&f)))
    return f.getValue().isZero() && !f.getValue().isNegative();
  return value && matchPattern(value, m_Constant(&i)) && i.getValue().isZero();
}

/// tensor.pad: padded dims stay whole; unpadded dims pass through. A zero
/// pad is linear: pad(sum of terms) = sum of pad(term), so a pending partial
/// sum passes through it (an optimizer-sharded gradient padded to a
/// dividing shape is then reduce-scattered on the padded shape instead of
/// all-reduced before the pad).
struct PadRuleModel
    : public ShardingRuleOpInterface::ExternalModel<PadRuleModel,
                                                    tensor::PadOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    auto pad = cast<tensor::PadOp>(op);
    if (!hasStaticTensorShapes(op, why))
      return failure();
    ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
    ArrayRef<int64_t> in = pad.getSourceType().getShape();
    ArrayRef<int64_t> out = pad.getResultType().getShape();
    ShardingRule rule;
    rule.flopsPerPoint = 0.0;
    TensorFactors src(in.size()), res(out.size());
    for (size_t d = 0; d < in.size(); ++d) {
      bool padded = low[d] != 0 || high[d] != 0;
      if (!padded) {
        if (in[d] > 1) {
          int64_t f = rule.addFactor(in[d]);
          src[d].push_back(f);
          res[d].push_back(f);
        }
        continue;
      }
      if (in[d] > 1)
        src[d].push_back(rule.addFactor(in[d], FactorKind::NeedReplication));
      if (out[d] > 1)
        res[d].push_back(rule.addFactor(out[d], FactorKind::NeedReplication));
    }
    rule.operandDims.push_back(src);
    addTrailingOperands(rule, op, 1);
    rule.resultDims.push_back(res);
    if (padsWithZero(pad))
      addPartialSumPassThrough(rule, op, 0);
    return rule;
  }
};

/// tensor.gather as an embedding lookup: the index dims (but the coordinate
/// dim) are parallel; the table's other dims are parallel; a gathered table
/// dim is a sum-reduction factor: a device holding a slice of the rows
/// returns the rows it has and zeros elsewhere, and the sum over the split
/// axes is the lookup.
struct GatherRuleModel
    : public ShardingRuleOpInterface::ExternalModel<GatherRuleModel,
                                                    tensor::GatherOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    auto gather = cast<tensor::GatherOp>(op);
    if (!hasStaticTensorShapes(op, why))
      return failure();
    ArrayRef<int64_t> src = gather.getSourceType().getShape();
    ArrayRef<int64_t> idx = gather.getIndicesType().getShape();
    ArrayRef<int64_t> res = gather.getResultType().getShape();
    ArrayRef<int64_t> gatherDims = gather.getGatherDims();
    int64_t batchRank = static_cast<int64_t>(idx.size()) - 1;
    bool rankReduced = static_cast<int64_t>(res.size()) ==
                       batchRank + static_cast<int64_t>(src.size()) -
                           static_cast<int64_t>(gatherDims.size());
    ShardingRule rule;
    rule.flopsPerPoint = 0.0;
    rule.reduction = ReductionKind::Sum;
    TensorFactors srcDims(src.size()), idxDims(idx.size()), resDims(res.size());
    for (int64_t d = 0; d < batchRank; ++d)
      if (idx[d] > 1) {
        int64_t f = rule.addFactor(idx[d]);
        idxDims[d].push_back(f);
        resDims[d].push_back(f);
      }
    if (idx.back() > 1)
      idxDims.back().push_back(
          rule.addFactor(idx.back(), FactorKind::NeedReplication));
    int64_t r = batchRank;
    for (int64_t d = 0; d < static_cast<int64_t>(src.size()); ++d) {
      bool gathered = llvm::is_contained(gatherDims, d);
      if (gathered) {
        if (src[d] > 1)
          srcDims[d].push_back(rule.addFactor(src[d], FactorKind::Reduction));
        if (!rankReduced)
          ++r; // a size-1 result dim: nothing to split
        continue;
      }
      if (src[d] > 1) {
        int64_t f = rule.addFactor(src[d]);
        srcDims[d].push_back(f);
        resDims[r].push_back(f);
      }
      ++r;
    }
    rule.operandDims = {srcDims, idxDims};
    rule.resultDims = {resDims};
    return rule;
  }
};
} // namespace

void autoshard::registerTensorShardingRuleModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::ExpandShapeOp::attachInterface<
        ReshapeRuleModel<tensor::ExpandShapeOp>>(*ctx);
    tensor::CollapseShapeOp::attachInterface<
        ReshapeRuleModel<tensor::CollapseShapeOp>>(*ctx);
    tensor::ReshapeOp::attachInterface<ReshapeRuleModel<tensor::ReshapeOp>>(
        *ctx);
    tensor::EmptyOp::attachInterface<EmptyRuleModel>(*ctx);
    tensor::ConcatOp::attachInterface<ConcatRuleModel>(*ctx);
    tensor::ExtractSliceOp::attachInterface<ExtractSliceRuleModel>(*ctx);
    tensor::InsertSliceOp::attachInterface<InsertSliceRuleModel>(*ctx);
    tensor::PadOp::attachInterface<PadRuleModel>(*ctx);
    tensor::GatherOp::attachInterface<GatherRuleModel>(*ctx);
  });
}
