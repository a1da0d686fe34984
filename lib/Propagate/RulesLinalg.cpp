//===- RulesLinalg.cpp - Sharding rules of linalg ops ---------------------===//
//
// Every structured op's rule comes from its indexing maps and iterator
// types: one factor per loop, each operand dim holding the loop its map
// result names. A split reduction loop leaves partial results whose kind is
// read off the body's combiner; a gradient's transpose passes a partial sum
// on to its pad; linalg.softmax is written by hand. 2-D convolutions and
// pools may split their output rows and columns (halos).
//
//===----------------------------------------------------------------------===//

#include "autoshard/Propagate/RuleModels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

/// Whether `v` is computed (inside the payload) from `arg`.
static bool dependsOn(Value v, Value arg, int depth = 0) {
  if (v == arg)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 64)
    return false;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return dependsOn(operand, arg, depth + 1);
  });
}

/// Reduction kind of the combiner that folds a new term into `outArg`, if
/// the payload yields `combiner(outArg, term)` with `term` independent of
/// `outArg`. Unsigned max/min have no ReductionKind (an all-reduce would
/// compare signed), so they are not recognised.
static std::optional<ReductionKind> getCombinerKind(Value yielded,
                                                    BlockArgument outArg) {
  Operation *def = yielded.getDefiningOp();
  if (!def || def->getNumOperands() != 2)
    return std::nullopt;
  Value lhs = def->getOperand(0), rhs = def->getOperand(1);
  Value term;
  if (lhs == outArg)
    term = rhs;
  else if (rhs == outArg)
    term = lhs;
  else
    return std::nullopt;
  if (dependsOn(term, outArg))
    return std::nullopt;
  if (isa<arith::AddFOp, arith::AddIOp>(def))
    return ReductionKind::Sum;
  if (isa<arith::MulFOp, arith::MulIOp>(def))
    return ReductionKind::Product;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp>(def))
    return ReductionKind::Max;
  if (isa<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp>(def))
    return ReductionKind::Min;
  return std::nullopt;
}

/// op.getStaticLoopRanges(), from the indexing maps at hand: that inverts
/// the concatenation of every map and composes it with every operand's
/// shape, which is most of the cost of building a rule. Inverting takes for
/// loop d the first operand dim (operands in order) whose map result is d
/// alone, so that dim's size is the range. Should a loop have no such dim
/// (a verified op always has one), asks the op.
static SmallVector<int64_t>
getLoopRanges(linalg::LinalgOp op, ArrayRef<AffineMap> maps, size_t numLoops) {
  SmallVector<int64_t> ranges(numLoops, ShapedType::kDynamic);
  SmallVector<bool> known(ranges.size(), false);
  size_t numKnown = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<ShapedType>(operand.get().getType());
    if (!type)
      continue;
    AffineMap map = maps[operand.getOperandNumber()];
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim || dim.getPosition() >= ranges.size() ||
          known[dim.getPosition()])
        continue;
      known[dim.getPosition()] = true;
      ranges[dim.getPosition()] = type.getDimSize(d);
      ++numKnown;
    }
  }
  if (numKnown != ranges.size())
    return op.getStaticLoopRanges();
  return ranges;
}

/// The 2-D NCHW convolutions and pools whose spatial splits
/// --dist-partition localises (lib/Partition/Halo.cpp).
static bool isSpatialWindowOp(Operation *op) {
  return isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp,
             linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(op);
}

/// A window op's output rows (the loop `oh` of the input's `oh * s + kh * d`)
/// may be split although the input's rows hold no factor: the input stays
/// whole on that dim (the padded input is replicated there) and each device
/// computes its own output rows from the window they need. The partitioner
/// cuts that window out, and when the whole input was only all-gathered for
/// this op it receives the window's halo rows from its neighbours instead.
static void allowSpatialSplits(Operation *op, ArrayRef<AffineMap> maps,
                               ShardingRule &rule) {
  if (!isSpatialWindowOp(op))
    return;
  AffineMap outMap = maps.back();
  for (AffineExpr expr : maps.front().getResults()) {
    if (isa<AffineDimExpr, AffineConstantExpr>(expr))
      continue;
    expr.walk([&](AffineExpr e) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (dim && outMap.isFunctionOfDim(dim.getPosition()))
        rule.factors[dim.getPosition()].kind = FactorKind::Parallel;
    });
  }
}

/// Whether the training step's backward built `op` (dist.phase, lib/Train).
static bool isBackward(Operation *op) {
  auto phase = op->getAttrOfType<StringAttr>("dist.phase");
  return phase && phase.getValue() == "backward";
}

/// A backward transpose whose every reader is a backward pad: a weight
/// gradient on its way to the zero pad of an unevenly optimizer-sharded
/// parameter (an ONNX Gemm computes its weight's gradient as [in, out] and
/// transposes it). A transpose is linear, so the gradient's pending partial
/// sum may pass through it on to the pad and the reduce-scatter after it.
/// Not for other transposes: there the extra candidates only widen the
/// search, which then settles elsewhere (seen on the GPT fixture: a plan
/// 0.1 us dearer). The rule reads the op's users, so the op shares no class
/// (OpClasses.cpp) with a transpose alike but for them: the input gradient's
/// transpose of the same weight comes first and would lend it its rule.
bool autoshard::isGradientTranspose(Operation *op) {
  if (!isa<linalg::TransposeOp>(op) || !isBackward(op) ||
      op->getResult(0).use_empty())
    return false;
  return llvm::all_of(op->getResult(0).getUsers(), [](Operation *user) {
    return isa<tensor::PadOp>(user) && isBackward(user);
  });
}

static FailureOr<ShardingRule> getLinalgRule(linalg::LinalgOp op,
                                             std::string &why) {
  if (!op.hasPureTensorSemantics()) {
    why = "it does not work on tensors only";
    return failure();
  }
  if (!hasStaticTensorShapes(op, why))
    return failure();
  // A named op builds its maps and iterator types when asked (and the
  // interface's getNumLoops and the like ask again): asked once here.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = getLoopRanges(op, maps, iterators.size());
  if (llvm::any_of(ranges, ShapedType::isDynamic)) {
    why = "its loop ranges are not static";
    return failure();
  }
  ShardingRule rule;
  rule.factors.reserve(ranges.size());
  for (auto [i, size] : llvm::enumerate(ranges)) {
    FactorKind kind = iterators[i] == utils::IteratorType::reduction
                          ? FactorKind::Reduction
                          : FactorKind::Parallel;
    rule.addFactor(size, kind, "d" + std::to_string(i));
  }

  // Asking a named op for its inits reads its operand segments: once.
  int64_t numInputs = op.getNumDpsInputs();

  // One reduction kind for the whole op: every output must fold its terms
  // with the same known combiner, else split reduction loops are not
  // allowed.
  bool hasReduction =
      llvm::is_contained(iterators, utils::IteratorType::reduction);
  std::optional<ReductionKind> kind;
  bool kindKnown = hasReduction;
  if (hasReduction) {
    Block *body = op.getBlock();
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    for (OpOperand &init : op.getDpsInitsMutable()) {
      BlockArgument outArg = op.getMatchingBlockArgument(&init);
      unsigned resultNo = init.getOperandNumber() - numInputs;
      std::optional<ReductionKind> k =
          getCombinerKind(yield.getOperand(resultNo), outArg);
      if (!k || (kind && *kind != *k)) {
        kindKnown = false;
        break;
      }
      kind = k;
    }
  }
  if (hasReduction && kindKnown)
    rule.reduction = *kind;
  if (hasReduction && !kindKnown)
    for (Factor &f : rule.factors)
      if (f.kind == FactorKind::Reduction)
        f.kind = FactorKind::NeedReplication;

  // Operand dims from the indexing maps. A dim indexed by an expression of
  // several loops (a convolution window d1 + d4) holds no factor, and those
  // loops may not be split: a split would need halos.
  rule.operandDims.reserve(op->getNumOperands());
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = maps[operand.getOperandNumber()];
    TensorFactors dims(map.getNumResults());
    // A map has a few results: a list is cheaper than a set.
    SmallVector<unsigned, 8> seen;
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
        unsigned pos = dim.getPosition();
        // A loop indexing two dims of one tensor (a diagonal) cannot be
        // split: the same axes would split both dims.
        if (llvm::is_contained(seen, pos)) {
          rule.factors[pos].kind = FactorKind::NeedReplication;
        } else {
          seen.push_back(pos);
          dims[d].push_back(pos);
        }
        continue;
      }
      if (isa<AffineConstantExpr>(expr))
        continue;
      expr.walk([&](AffineExpr e) {
        if (auto dim = dyn_cast<AffineDimExpr>(e))
          rule.factors[dim.getPosition()].kind = FactorKind::NeedReplication;
      });
    }
    rule.operandDims.push_back(std::move(dims));
  }
  allowSpatialSplits(op, maps, rule);
  rule.operandIsInit.assign(op->getNumOperands(), false);
  rule.tiedResult.assign(op->getNumOperands(), -1);
  rule.resultDims.reserve(op.getNumDpsInits());
  for (OpOperand &init : op.getDpsInitsMutable()) {
    unsigned i = init.getOperandNumber();
    rule.tiedResult[i] = i - numInputs;
    rule.operandIsInit[i] = !op.payloadUsesValueFromOperand(&init);
    rule.resultDims.push_back(rule.operandDims[i]);
  }
  // Work per iteration point: the payload's ops (a multiply-add is 2).
  rule.flopsPerPoint = static_cast<double>(
      llvm::range_size(op.getBlock()->without_terminator()));
  if (isGradientTranspose(op))
    addPartialSumPassThrough(rule, op, 0);
  return rule;
}

namespace {
template <typename OpTy>
struct LinalgRuleModel
    : public ShardingRuleOpInterface::ExternalModel<LinalgRuleModel<OpTy>,
                                                    OpTy> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    return getLinalgRule(cast<linalg::LinalgOp>(op), why);
  }
};

/// Softmax normalises along one dim: that dim must stay whole; every other
/// dim is parallel. The output is an init the op does not read.
struct SoftmaxRuleModel
    : public ShardingRuleOpInterface::ExternalModel<SoftmaxRuleModel,
                                                    linalg::SoftmaxOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op,
                                          std::string &why) const {
    auto softmax = cast<linalg::SoftmaxOp>(op);
    if (!hasStaticTensorShapes(op, why))
      return failure();
    auto type = dyn_cast<RankedTensorType>(softmax.getInput().getType());
    if (!type || op->getNumResults() != 1) {
      why = "it does not work on tensors";
      return failure();
    }
    ShardingRule rule;
    TensorFactors dims(type.getRank());
    for (int64_t d = 0; d < type.getRank(); ++d) {
      FactorKind kind = d == static_cast<int64_t>(softmax.getDimension())
                            ? FactorKind::NeedReplication
                            : FactorKind::Parallel;
      dims[d].push_back(
          rule.addFactor(type.getDimSize(d), kind, "d" + std::to_string(d)));
    }
    rule.operandDims = {dims, dims};
    rule.resultDims = {dims};
    rule.operandIsInit = {false, true};
    rule.tiedResult = {-1, 0};
    // max, subtract + exp, sum, divide.
    rule.flopsPerPoint = 4.0;
    return rule;
  }
};

template <typename... OpTys> void attachAll(MLIRContext *ctx) {
  (OpTys::template attachInterface<LinalgRuleModel<OpTys>>(*ctx), ...);
}
} // namespace

void autoshard::registerLinalgShardingRuleModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    // The combiner check looks at arith ops in the payloads.
    ctx->getOrLoadDialect<arith::ArithDialect>();
    attachAll<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
        >(ctx);
    linalg::SoftmaxOp::attachInterface<SoftmaxRuleModel>(*ctx);
  });
}
