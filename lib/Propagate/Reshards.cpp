//===- Reshards.cpp - Phase 5: the reshards a solution needs --------------===//
//
// One `dist.reshard` per (value, target layout), right after the value's
// definition so every consumer that needs that layout shares it; each is
// planned by the reshard planner and counted in the report, and with
// `explain` gets a remark naming the constraint that forced it.
//
//===----------------------------------------------------------------------===//

#include "FunctionPropagation.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace autoshard;
using namespace autoshard::dist;
using namespace autoshard::propagate;

std::string FunctionPropagation::explainText(Operation *consumer,
                                             unsigned operand,
                                             const Node &producerNode,
                                             const Node &consumerNode) const {
  if (consumerNode.kind == Node::Result)
    return "a function result is never a pending partial value";
  if (consumerNode.userFixed)
    return "the consumer's user constraint requires it";
  if (producerNode.userFixed ||
      (producerNode.kind == Node::Arg &&
       llvm::any_of(consumer->getOperand(operand).getUsers(),
                    [](Operation *u) { return isa<AnnotateOp>(u); })))
    return "the producer's layout is pinned by a user constraint";
  return "the consumer's strategy is cheaper overall than one that fits";
}

/// The reshard of `source` (layout `have`) to `want`, shared per (source,
/// layout), right after the source's definition.
FailureOr<Value> FunctionPropagation::getReshard(Value source,
                                                 const TensorLayout &have,
                                                 const TensorLayout &want,
                                                 OpOperand &use,
                                                 const Node &producerNode,
                                                 const Node &consumerNode) {
  auto key = std::make_pair(source.getAsOpaquePointer(), pricing.intern(want));
  auto it = reshards.find(key);
  if (it != reshards.end())
    return it->second;
  OpBuilder b(ctx);
  if (isa<BlockArgument>(source))
    b.setInsertionPointToStart(&body);
  else
    b.setInsertionPointAfter(source.getDefiningOp());
  std::string error;
  auto plan = planner.plan(getShape(source.getType()),
                           getElemBytes(source.getType()), have, want, error);
  if (!plan)
    return use.getOwner()->emitError("dist-propagate: no reshard from ")
           << have.str(dmesh) << " to " << want.str(dmesh) << ": " << error;
  auto reshard = ReshardOp::create(b, use.getOwner()->getLoc(), source,
                                   layoutAttr(have), layoutAttr(want));
  // A gather of a conv or pool input's split rows becomes a halo exchange
  // in --dist-partition: counted as the graph priced it (CostGraph.cpp).
  double haloBytes = 0.0;
  auto dims = haloDimsOf(use.getOwner(), use.getOperandNumber());
  if (dims) {
    auto it = opNode.find(haloWindowOp(use.getOwner()));
    if (it == opNode.end() ||
        !haloFollowsOutput(have, nodes[it->second].resultLayout(0), *dims))
      dims.reset();
  }
  if (dims)
    if (std::optional<double> time = model.getHaloTimeUs(
            have, want, getShape(source.getType()),
            getElemBytes(source.getType()), *dims, &haloBytes);
        time && *time < plan->timeUs) {
      plan->steps.clear();
      plan->timeUs = *time;
      plan->bytesPerDevice = haloBytes;
      ++report.collectives["HaloExchange"];
    }
  report.addReshard(*plan, dmesh);
  if (options.explain) {
    std::string steps;
    for (const CollectiveStep &s : plan->steps)
      steps += (steps.empty() ? "" : ", ") + s.str(dmesh);
    reshard.emitRemark() << "reshard " << have.str(dmesh) << " -> "
                         << want.str(dmesh) << " for operand #"
                         << use.getOperandNumber() << " of '"
                         << use.getOwner()->getName() << "': "
                         << explainText(use.getOwner(), use.getOperandNumber(),
                                        producerNode, consumerNode)
                         << "; " << (steps.empty() ? "local" : steps) << ", "
                         << llvm::formatv("{0:f3}", plan->timeUs).str()
                         << " us, "
                         << llvm::formatv("{0:f0}", plan->bytesPerDevice).str()
                         << " bytes per device";
  }
  return reshards.emplace(key, reshard.getResult()).first->second;
}

double FunctionPropagation::planTime(Value v, const TensorLayout &from,
                                     const TensorLayout &to) {
  std::string error;
  std::optional<double> time = planner.costUs(
      getShape(v.getType()), getElemBytes(v.getType()), from, to, error);
  return time ? *time : kInfeasibleCost;
}

LogicalResult FunctionPropagation::fixUse(OpOperand &use,
                                          const OperandSource &src,
                                          const TensorLayout &want,
                                          const Node &consumerNode) {
  if (!src.tensor || !src.graph)
    return success();
  const Node &producerNode = nodes[src.node];
  const TensorLayout &have = producerNode.resultLayout(src.slot);
  if (sameLayout(have, want))
    return success();
  Value v = use.get();
  // Readers of a shared value follow its plan (ValuePlans.cpp): some take
  // their layout from the fan-out's shared one, made once.
  Value source = v;
  const TensorLayout *from = &have;
  if (consumerNode.kind != Node::Result)
    if (auto it = valuePlans.find(v);
        it != valuePlans.end() &&
        llvm::is_contained(it->second.fromShared, pricing.intern(want))) {
      const TensorLayout &shared = *it->second.shared;
      FailureOr<Value> r =
          getReshard(v, have, shared, use, producerNode, consumerNode);
      if (failed(r))
        return failure();
      source = *r;
      from = &shared;
    }
  if (!sameLayout(*from, want)) {
    FailureOr<Value> r =
        getReshard(source, *from, want, use, producerNode, consumerNode);
    if (failed(r))
      return failure();
    source = *r;
  }
  use.set(source);
  return success();
}
