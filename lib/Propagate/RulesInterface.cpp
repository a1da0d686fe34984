//===- RulesInterface.cpp - Rule lookup and user strategy matching --------===//

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "autoshard/Propagate/RuleModels.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace autoshard;

#include "autoshard/Propagate/ShardingRuleInterface.cpp.inc"

void autoshard::registerShardingRuleModels(DialectRegistry &registry) {
  registerLinalgShardingRuleModels(registry);
  registerTensorShardingRuleModels(registry);
  registerTosaShardingRuleModels(registry);
  registerArithShardingRuleModels(registry);
}

int64_t autoshard::getElemBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  Type elem = tensor ? tensor.getElementType() : type;
  if (elem.isIntOrIndexOrFloat() && !elem.isIndex())
    return std::max<int64_t>(1, (elem.getIntOrFloatBitWidth() + 7) / 8);
  return 8;
}

std::vector<int64_t> autoshard::getShapeForRule(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return {};
  std::vector<int64_t> shape;
  for (int64_t d : ranked.getShape())
    shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return shape;
}

FailureOr<ShardingRule> autoshard::getElementwiseRule(Operation *op,
                                                      std::string &why) {
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType())) {
    why = "it does not produce a ranked tensor";
    return failure();
  }
  if (!hasStaticTensorShapes(op, why))
    return failure();
  std::vector<std::vector<int64_t>> ins;
  for (Type t : op->getOperandTypes())
    ins.push_back(getShapeForRule(t));
  return buildElementwiseRule(ins, getShapeForRule(op->getResult(0).getType()));
}

bool autoshard::hasStaticTensorShapes(Operation *op, std::string &why) {
  auto check = [&](Type t, StringRef what, unsigned i) {
    if (isa<UnrankedTensorType>(t)) {
      why = (what + " #" + Twine(i) + " is an unranked tensor").str();
      return false;
    }
    auto ranked = dyn_cast<RankedTensorType>(t);
    if (ranked && !ranked.hasStaticShape()) {
      why = (what + " #" + Twine(i) + " has a dynamic shape").str();
      return false;
    }
    return true;
  };
  for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
    if (!check(t, "operand", i))
      return false;
  for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
    if (!check(t, "result", i))
      return false;
  return true;
}

ShardingRule autoshard::getRuleOrReplicated(Operation *op, std::string &why) {
  why.clear();
  if (auto iface = dyn_cast<ShardingRuleOpInterface>(op)) {
    std::string reason;
    FailureOr<ShardingRule> rule = iface.getShardingRule(reason);
    if (succeeded(rule)) {
      std::string error = rule->verify();
      if (error.empty())
        return std::move(*rule);
      reason = "its rule is malformed: " + error;
    }
    why = "'" + op->getName().getStringRef().str() + "' runs replicated: " +
          (reason.empty() ? std::string("its rule does not apply") : reason);
  } else {
    why = "'" + op->getName().getStringRef().str() +
          "' has no sharding rule and runs replicated";
  }
  std::vector<std::vector<int64_t>> ins, outs;
  for (Type t : op->getOperandTypes())
    ins.push_back(getShapeForRule(t));
  for (Type t : op->getResultTypes())
    outs.push_back(getShapeForRule(t));
  return makeReplicatedRule(ins, outs);
}

void autoshard::addPartialSumPassThrough(ShardingRule &rule, Operation *op,
                                         unsigned operand) {
  // The factor's size only has to be divisible by every group of axes it
  // may be split over: the mesh's device count is.
  auto module = op->getParentOfType<ModuleOp>();
  auto mesh = module ? module->getAttrOfType<dist::MeshAttr>(
                           dist::DistDialect::kMeshAttrName)
                     : nullptr;
  if (!mesh || mesh.toDeviceMesh().getNumDevices() < 2)
    return;
  rule.addFactor(mesh.toDeviceMesh().getNumDevices(), FactorKind::Reduction,
                 "sum");
  rule.reduction = ReductionKind::Sum;
  if (rule.tiedResult.size() < rule.operandDims.size())
    rule.tiedResult.resize(rule.operandDims.size(), -1);
  rule.tiedResult[operand] = 0;
}

LogicalResult autoshard::matchUserStrategy(Operation *op,
                                           dist::StrategyAttr strategy,
                                           const ShardingRule &rule,
                                           const DeviceMesh &mesh,
                                           Candidate &out) {
  DeviceMesh strategyMesh = strategy.getMesh().toDeviceMesh();
  if (!(strategyMesh == mesh))
    return op->emitError() << "dist.strategy is on mesh " << strategyMesh.str()
                           << " but propagation uses mesh " << mesh.str();
  ArrayRef<dist::LayoutAttr> ins = strategy.getOperands();
  ArrayRef<dist::LayoutAttr> outs = strategy.getResults();
  if (static_cast<int64_t>(ins.size()) > rule.getNumOperands() ||
      static_cast<int64_t>(outs.size()) > rule.getNumResults())
    return op->emitError() << "dist.strategy has " << ins.size()
                           << " operand and " << outs.size()
                           << " result layouts but the op's rule has "
                           << rule.getNumOperands() << " operands and "
                           << rule.getNumResults() << " results";
  std::vector<TensorLayout> inLayouts, outLayouts;
  for (dist::LayoutAttr l : ins)
    inLayouts.push_back(l.toTensorLayout());
  for (dist::LayoutAttr l : outs)
    outLayouts.push_back(l.toTensorLayout());
  std::vector<const TensorLayout *> inPtrs, outPtrs;
  for (const TensorLayout &l : inLayouts)
    inPtrs.push_back(&l);
  for (const TensorLayout &l : outLayouts)
    outPtrs.push_back(&l);
  std::string error;
  if (!inferFactorAxes(rule, mesh, inPtrs, outPtrs, out, error))
    return op->emitError() << "dist.strategy does not fit the op's sharding "
                              "rule: "
                           << error;
  return success();
}
