//===- ReportPhase.cpp - Phase 6: what the report says of a function ------===//
//
// The strategies (JSON report only), the op count, and the memory: every
// value once, at its producer's layout. Reshards are counted as they are
// emitted (Reshards.cpp), compute and the objective by the solve phase.
//
//===----------------------------------------------------------------------===//

#include "FunctionPropagation.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

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

namespace {
/// An upstream shard collective: its kind, grid axes, and the local tensor
/// whose bytes its alpha-beta B term counts, times `factor` x (n-1)/n (the
/// factors of countCollectives, SpmdBuilder.cpp).
struct InputCollective {
  CollectiveKind kind;
  ArrayRef<int16_t> gridAxes;
  Type moved;
  double factor = 1.0;
};
} // namespace

static std::optional<InputCollective> asInputCollective(Operation *op) {
  if (auto o = dyn_cast<shard::AllReduceOp>(op))
    return InputCollective{CollectiveKind::AllReduce, o.getGridAxes(),
                           o.getInput().getType(), 2.0};
  if (auto o = dyn_cast<shard::AllGatherOp>(op))
    return InputCollective{CollectiveKind::AllGather, o.getGridAxes(),
                           o.getResult().getType()};
  if (auto o = dyn_cast<shard::ReduceScatterOp>(op))
    return InputCollective{CollectiveKind::ReduceScatter, o.getGridAxes(),
                           o.getInput().getType()};
  if (auto o = dyn_cast<shard::AllToAllOp>(op))
    return InputCollective{CollectiveKind::AllToAll, o.getGridAxes(),
                           o.getInput().getType()};
  if (auto o = dyn_cast<shard::AllSliceOp>(op))
    return InputCollective{CollectiveKind::AllSlice, o.getGridAxes(), Type(),
                           0.0};
  return std::nullopt;
}

/// Collectives that were in the input (an already partitioned program, such
/// as test/Partition/fuse-gradients.mlir's) run whatever the plan: the
/// report counts them, with the bytes --dist-partition's report counts on
/// the same ops and the cost model's time. Without this the propagation
/// report said 0 B where the program moves 1,172 B.
void FunctionPropagation::reportInputCollectives() {
  for (unsigned ni = firstOpNode; ni < firstResult; ++ni) {
    std::optional<InputCollective> c = asInputCollective(nodes[ni].op);
    if (!c)
      continue;
    // Empty grid_axes: every axis (upstream's convention).
    std::vector<int64_t> axes(c->gridAxes.begin(), c->gridAxes.end());
    if (axes.empty())
      for (int64_t a = 0; a < dmesh.getNumAxes(); ++a)
        axes.push_back(a);
    int64_t n = 1;
    for (int64_t a : axes)
      n *= a >= 0 && a < dmesh.getNumAxes() ? dmesh.getAxisSize(a) : 1;
    auto t = dyn_cast_or_null<RankedTensorType>(c->moved);
    double bytes = 0.0;
    if (t && t.hasStaticShape())
      bytes = c->factor * static_cast<double>(n - 1) / static_cast<double>(n) *
              static_cast<double>(t.getNumElements() * getElemBytes(t));
    ++report.collectives[std::string(stringifyCollectiveKind(c->kind))];
    report.commBytesPerDevice += bytes;
    if (bytes > 0.0)
      report.commTimeUs += model.getTransferTimeUs(axes, bytes);
  }
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
