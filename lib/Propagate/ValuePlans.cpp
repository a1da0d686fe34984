//===- ValuePlans.cpp - Phase 4b: how a shared value reaches its readers --===//
//
// A value read by several ops (or also returned) is resharded once per
// layout its uses want (one `dist.reshard` per value and layout, see
// Reshards.cpp), while the solver's graph, made of pairs, charges each use
// its own step: producer -> fan-out layout once, then fan-out layout ->
// reader per reader. Once the solution is known, the value's plan is the
// cheaper of:
//  - the fan-out layout made once (unless the producer has it), then each
//    distinct layout the readers want taken from it or from the producer,
//    whichever is cheaper;
//  - every distinct layout resharded from the producer.
// Function results always take theirs from the producer. The write-back
// emits exactly the plan, and the objective the report gives is the
// solver's with each such value's steps replaced by its plan's: equal to
// the priced reshards the program holds (see test/Propagate/invariant.test).
//
//===----------------------------------------------------------------------===//

#include "FunctionPropagation.h"

using namespace mlir;
using namespace autoshard;
using namespace autoshard::propagate;

namespace {
/// What one value's uses want.
struct Wants {
  /// Layouts the ops read, as the solver priced them (chosen candidates)
  /// and as written back (after layout-free absorption).
  SmallVector<const TensorLayout *, 4> priced, readers;
  /// Layouts the function results want.
  SmallVector<const TensorLayout *, 2> results;
};
} // namespace

double FunctionPropagation::stepTime(Value v, const TensorLayout &from,
                                     const TensorLayout &to) {
  return sameLayout(from, to) ? 0.0 : planTime(v, from, to);
}

double FunctionPropagation::planValues() {
  // Values read by several ops or also returned (results first).
  llvm::MapVector<Value, Wants> wants;
  for (OpOperand &use : returnOp->getOpOperands()) {
    OperandSource src = sourceOf(use.get());
    if (src.graph && src.tensor)
      wants[use.get()].results.push_back(
          &nodes[firstResult + use.getOperandNumber()].operandLayout(0));
  }
  for (auto &[value, ids] : usesOfValue) {
    if (ids.size() < 2 && !wants.count(value))
      continue;
    Wants &w = wants[value];
    for (unsigned id : ids) {
      const EdgeUse &u = edgeUses[id];
      unsigned operand = u.use->getOperandNumber();
      const Node &cn = nodes[u.cn];
      w.priced.push_back(&cn.chosen->operandLayouts[operand]);
      w.readers.push_back(&cn.operandLayout(operand));
    }
  }
  double correction = 0.0;
  for (auto &[v, w] : wants) {
    if (w.readers.size() + w.results.size() < 2)
      continue;
    OperandSource src = sourceOf(v);
    const TensorLayout &have = nodes[src.node].resultLayout(src.slot);
    auto fit = fanoutOf.find(v);
    const TensorLayout *shared =
        fit == fanoutOf.end() ? nullptr : &nodes[fit->second].resultLayout(0);
    // What the solver charged.
    double priced = shared ? stepTime(v, have, *shared) : 0.0;
    for (const TensorLayout *l : w.priced)
      priced += stepTime(v, shared ? *shared : have, *l);
    for (const TensorLayout *l : w.results)
      priced += stepTime(v, have, *l);
    // The distinct layouts wanted (but the producer's): the results' come
    // from the producer; the readers' that no result wants may come from
    // the shared layout.
    SmallVector<unsigned, 4> direct, readers;
    auto addWanted = [&](const TensorLayout *l, SmallVector<unsigned, 4> &to) {
      if (sameLayout(*l, have))
        return;
      unsigned id = pricing.intern(*l);
      if (!llvm::is_contained(direct, id) && !llvm::is_contained(readers, id))
        to.push_back(id);
    };
    for (const TensorLayout *l : w.results)
      addWanted(l, direct);
    for (const TensorLayout *l : w.readers)
      addWanted(l, readers);
    double directCost = 0.0;
    for (unsigned id : direct)
      directCost += planTime(v, have, pricing.layouts[id]);
    double allDirect = directCost;
    for (unsigned id : readers)
      allDirect += planTime(v, have, pricing.layouts[id]);
    double best = allDirect;
    if (shared && !sameLayout(*shared, have)) {
      unsigned sharedId = pricing.intern(*shared);
      ValuePlan plan;
      plan.shared = shared;
      double viaShared = directCost + (llvm::is_contained(direct, sharedId)
                                           ? 0.0
                                           : planTime(v, have, *shared));
      for (unsigned id : readers) {
        double fromHave = planTime(v, have, pricing.layouts[id]);
        double fromShared =
            id == sharedId ? 0.0 : planTime(v, *shared, pricing.layouts[id]);
        if (fromShared < fromHave)
          plan.fromShared.push_back(id);
        viaShared += std::min(fromHave, fromShared);
      }
      if (viaShared < allDirect) {
        best = viaShared;
        valuePlans[v] = std::move(plan);
      }
    }
    correction += best - priced;
  }
  return correction;
}
