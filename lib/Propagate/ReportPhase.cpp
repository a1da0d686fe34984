//===- ReportPhase.cpp - Phase 6: what the report says of a function ------===//
//
// The strategies (JSON report only), the op count, and the memory: every
// value once, at its producer's layout. Reshards are counted as they are
// emitted (Reshards.cpp), compute and the objective by the solve phase.
//
//===----------------------------------------------------------------------===//

#include "FunctionPropagation.h"

using namespace mlir;
using namespace autoshard;
using namespace autoshard::propagate;

/// The report's text of each layout, once per interned layout.
StringRef FunctionPropagation::layoutText(const TensorLayout &l) {
  unsigned id = pricing.intern(l);
  if (layoutTexts.size() <= id)
    layoutTexts.resize(id + 1);
  if (layoutTexts[id].empty())
    layoutTexts[id] = l.str(dmesh);
  return layoutTexts[id];
}

void FunctionPropagation::reportStrategies() {
  if (!report.wantStrategies)
    return;
  std::vector<StringRef> ins, outs;
  for (unsigned ni = firstOpNode; ni < firstResult; ++ni) {
    const Node &n = nodes[ni];
    ins.clear();
    outs.clear();
    for (unsigned i = 0, e = n.getNumOperandLayouts(); i < e; ++i)
      ins.push_back(layoutText(n.operandLayout(i)));
    for (unsigned i = 0, e = n.getNumResultLayouts(); i < e; ++i)
      outs.push_back(layoutText(n.resultLayout(i)));
    report.addStrategy(n.op, ins, outs);
  }
}

/// Reshards that were in the input: counted as the ones the pass emits
/// (the partition emits both alike), so that propagating the pass's own
/// output reports what the first run did.
LogicalResult FunctionPropagation::reportInputReshards() {
  for (unsigned ni = firstOpNode; ni < firstResult; ++ni) {
    auto reshard = dyn_cast<dist::ReshardOp>(nodes[ni].op);
    if (!reshard)
      continue;
    Value v = reshard.getInput();
    std::string error;
    auto plan = planner.plan(getShape(v.getType()), getElemBytes(v.getType()),
                             reshard.getSource().toTensorLayout(),
                             reshard.getTarget().toTensorLayout(), error);
    if (!plan)
      return reshard.emitError("dist-propagate: no reshard from ")
             << reshard.getSource() << " to " << reshard.getTarget() << ": "
             << error;
    report.addReshard(*plan, dmesh);
  }
  return success();
}

/// How the report names a value: an argument by its dist.name (else
/// @func:%argN), a result by its op and location.
static std::string describeValue(Value v, func::FuncOp func) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto name =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dist.name"))
      os << name.getValue();
    else
      os << "@" << func.getSymName() << ":%arg" << arg.getArgNumber();
    return text;
  }
  Operation *op = v.getDefiningOp();
  os << op->getName();
  if (op->getNumResults() > 1)
    os << "#" << cast<OpResult>(v).getResultNumber();
  if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
    os << " at " << loc.getFilename() << ":" << loc.getLine() << ":"
       << loc.getColumn();
  else
    os << " in @" << func.getSymName();
  return text;
}

/// Memory: every value once, at its producer's layout (a training step's
/// figure replaces it, see Propagate.cpp), and the values that take the
/// most of it (what a memory bound has to shrink).
void FunctionPropagation::reportMemory() {
  report.memoryBytesPerDevice += allValuesMemory();
  report.numOps += firstResult - firstOpNode;
  forEachValueMemory([&](Value v, double bytes) {
    auto &top = report.largestValues;
    if (top.size() == PropagationReport::kLargestValues &&
        bytes <= top.back().second)
      return;
    auto at =
        llvm::find_if(top, [&](const auto &e) { return e.second < bytes; });
    top.insert(at, {describeValue(v, func), bytes});
    if (top.size() > PropagationReport::kLargestValues)
      top.pop_back();
  });
}
