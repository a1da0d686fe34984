//===- SolvePhase.cpp - Phase 4: one candidate per node -------------------===//
//
// Prices the graph's tables, runs the solver (Solver.h), and records the
// choice on the nodes; layout-free producers then take the layout their
// only consumer wants.
//
//===----------------------------------------------------------------------===//

#include "FunctionPropagation.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Threading.h"

#include <chrono>

using namespace mlir;
using namespace autoshard;
using namespace autoshard::propagate;

LogicalResult FunctionPropagation::solveGraph() {
  unsigned threads = pricing.priceAll(ctx);
  report.pricingThreads = std::max(report.pricingThreads, threads);
  SolverOptions sopts;
  sopts.kind = options.solver;
  if (options.exactBudget)
    sopts.maxSearchNodes = options.exactBudget;
  // As for pricing: threads only where there is work enough to pay for them.
  if (threads > 1)
    sopts.parallelFor = [ctx = ctx](size_t n,
                                    const std::function<void(size_t)> &fn) {
      parallelFor(ctx, 0, n, fn);
    };
  auto start = std::chrono::steady_clock::now();
  SolverResult result = solve(graph, sopts);
  report.solverTimeMs += std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  report.solverNodes += graph.getNumNodes();
  if (!result.error.empty())
    return func.emitError("dist-propagate: solver failed: ") << result.error;
  // `exact` proves its plan optimal unless its search ran out of budget.
  if (options.solver == SolverKind::Exact && !result.optimal) {
    report.solverBudgetExhausted = true;
    // At the function's location, without the op printed after it.
    emitWarning(func.getLoc(), "dist-propagate: the exact solver's search "
                               "stopped at its budget (")
        << sopts.maxSearchNodes
        << " node visits, exact-budget); the plan is the best it found, "
           "not proven optimal";
  }
  applySolution(result.assignment);
  if (failed(boundMemory(sopts, result)))
    return failure();
  report.optimal = report.optimal && result.optimal;
  for (Node &n : nodes)
    if (n.kind == Node::Op)
      report.computeTimeUs += model.getComputeTimeUs(n.chosen->flops);
  report.solverCostUs += result.cost + planValues();
  return success();
}

/// Layout-free producers take the layout their only consumer wants; walk
/// backwards so a zero fill passes it on to its tensor.empty.
void FunctionPropagation::absorbLayoutFree() {
  for (unsigned c = firstResult; c-- > firstOpNode;) {
    const Node &cn = nodes[c];
    for (auto [use, src] :
         llvm::zip_equal(cn.op->getOpOperands(), sourcesOf(cn))) {
      if (!readsLayoutFree(src, use.get()))
        continue;
      Node &pn = nodes[src.node];
      const TensorLayout *want = &cn.operandLayout(use.getOperandNumber());
      pn.setLayout(/*results=*/true, src.slot, want);
      // A fill's init (its last operand) follows its result.
      if (isa<linalg::FillOp>(pn.op))
        pn.setLayout(/*results=*/false, pn.getNumOperandLayouts() - 1, want);
    }
  }
}
