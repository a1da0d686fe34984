//===- WriteBack.cpp - Phase 5: the propagation contract ------------------===//
//
// Writes the solution back (docs/design.md, "Contracts"): `dist.layout` on
// arguments and results, the reshards every mismatch needs (Reshards.cpp),
// and a complete `dist.strategy` on every op and on the return. Layouts and
// strategies repeat (the chosen layouts are elements of the shared
// candidate lists), so each attribute is built once.
//
//===----------------------------------------------------------------------===//

#include "FunctionPropagation.h"

using namespace mlir;
using namespace autoshard;
using namespace autoshard::dist;
using namespace autoshard::propagate;

LogicalResult FunctionPropagation::writeBack() {
  writeArgumentLayouts();
  writeResultLayouts();
  // The graph ops in order (the reshards inserted here are not among them).
  for (unsigned ni = firstOpNode; ni < firstResult; ++ni) {
    const Node &n = nodes[ni];
    unsigned numLayouts = n.getNumOperandLayouts();
    for (auto [use, src] : llvm::zip_equal(n.op->getOpOperands(), sourcesOf(n)))
      if (use.getOperandNumber() < numLayouts)
        if (failed(
                fixUse(use, src, n.operandLayout(use.getOperandNumber()), n)))
          return failure();
  }
  for (OpOperand &use : returnOp->getOpOperands()) {
    const Node &rn = nodes[firstResult + use.getOperandNumber()];
    if (failed(fixUse(use, sourceOf(use.get()), rn.operandLayout(0), rn)))
      return failure();
  }
  writeStrategies();
  return success();
}

/// Layout attributes per content, looked up by object first (candidate
/// lists hold equal layouts in different objects), then by interned id and
/// kind (the attribute keeps the kind even when nothing is partial, which
/// interning ignores).
LayoutAttr FunctionPropagation::layoutAttr(const TensorLayout &l) {
  LayoutAttr &attr = layoutAttrs[&l];
  if (!attr) {
    LayoutAttr &byId = layoutAttrsById[{pricing.intern(l),
                                        static_cast<unsigned>(l.partialKind)}];
    if (!byId)
      byId = LayoutAttr::get(meshAttr, l);
    attr = byId;
  }
  return attr;
}

void FunctionPropagation::writeArgumentLayouts() {
  auto layoutName = StringAttr::get(ctx, "dist.layout");
  SmallVector<DictionaryAttr> argAttrs;
  argAttrs.reserve(body.getNumArguments());
  bool changed = false;
  for (BlockArgument arg : body.getArguments()) {
    DictionaryAttr attrs = func.getArgAttrDict(arg.getArgNumber());
    if (isa<RankedTensorType>(arg.getType())) {
      NamedAttrList list(attrs);
      Attribute layout = layoutAttr(nodes[arg.getArgNumber()].resultLayout(0));
      if (list.set(layoutName, layout) != layout) {
        attrs = list.getDictionary(ctx);
        changed = true;
      }
    }
    argAttrs.push_back(attrs);
  }
  // One update (setArgAttr per argument rebuilds the whole array each
  // time), the same as setting them one by one.
  if (changed)
    func.setAllArgAttrs(argAttrs);
}

void FunctionPropagation::writeResultLayouts() {
  for (OpOperand &use : returnOp->getOpOperands()) {
    const Node &rn = nodes[firstResult + use.getOperandNumber()];
    returnLayouts.push_back(layoutAttr(rn.operandLayout(0)));
    if (isa<RankedTensorType>(use.get().getType()))
      func.setResultAttr(use.getOperandNumber(), "dist.layout",
                         returnLayouts.back());
  }
}

/// Strategies by chosen candidate (for nodes whose layouts are the
/// candidate's).
StrategyAttr FunctionPropagation::strategyOf(const Node &n) {
  auto build = [&] {
    SmallVector<LayoutAttr> ins, outs;
    for (unsigned i = 0, e = n.getNumOperandLayouts(); i < e; ++i)
      ins.push_back(layoutAttr(n.operandLayout(i)));
    for (unsigned i = 0, e = n.getNumResultLayouts(); i < e; ++i)
      outs.push_back(layoutAttr(n.resultLayout(i)));
    return StrategyAttr::get(ctx, meshAttr, ins, outs);
  };
  if (!n.operandOverride.empty() || !n.resultOverride.empty())
    return build();
  StrategyAttr &attr = strategies[n.chosen];
  if (!attr)
    attr = build();
  return attr;
}

/// op->setAttr(strategyName, strategy), with the new dictionary cached (an
/// op's discardable attributes repeat across layers too).
void FunctionPropagation::setStrategy(Operation *op, StrategyAttr strategy) {
  auto strategyName = StringAttr::get(ctx, DistDialect::kStrategyAttrName);
  auto [inh, first] =
      strategyIsInherent.try_emplace(op->getName().getAsOpaquePointer());
  if (first)
    inh->second = op->getPropertiesStorageSize() &&
                  op->getInherentAttr(strategyName).has_value();
  if (inh->second) {
    op->setAttr(strategyName, strategy);
    return;
  }
  DictionaryAttr old = op->getRawDictionaryAttrs();
  auto [it, inserted] = withStrategy.try_emplace(
      {old.getAsOpaquePointer(), strategy.getAsOpaquePointer()});
  if (inserted) {
    NamedAttrList attrs(old);
    it->second = attrs.set(strategyName, strategy) != strategy
                     ? attrs.getDictionary(ctx)
                     : old;
  }
  op->setDiscardableAttrs(it->second);
}

void FunctionPropagation::writeStrategies() {
  for (unsigned ni = firstOpNode; ni < firstResult; ++ni) {
    const Node &n = nodes[ni];
    if (isa<AnnotateOp, ReshardOp>(n.op))
      continue; // self-describing
    setStrategy(n.op, strategyOf(n));
  }
  returnOp->setAttr(DistDialect::kStrategyAttrName,
                    StrategyAttr::get(ctx, meshAttr, returnLayouts, {}));
}
