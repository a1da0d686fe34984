//===- RulesTestPass.cpp - Expose sharding rules to lit tests -------------===//

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "autoshard/Propagate/RuleModels.h"
#include "autoshard/Propagate/TestPasses.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

namespace autoshard {
#define GEN_PASS_DEF_TESTSHARDINGRULES
#include "autoshard/Propagate/TestPasses.h.inc"
} // namespace autoshard

using namespace mlir;
using namespace autoshard;

namespace {
bool worksOnTensors(Operation *op) {
  auto isTensor = [](Type t) { return isa<TensorType>(t); };
  return llvm::any_of(op->getOperandTypes(), isTensor) ||
         llvm::any_of(op->getResultTypes(), isTensor);
}

struct TestShardingRulesPass
    : public autoshard::impl::TestShardingRulesBase<TestShardingRulesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<DeviceMesh> mesh;
    if (auto meshAttr = module->getAttrOfType<dist::MeshAttr>(
            dist::DistDialect::kMeshAttrName))
      mesh = meshAttr.toDeviceMesh();
    bool failed = false;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<ModuleOp>(op) ||
          op->getDialect() == op->getContext()->getLoadedDialect("func"))
        return WalkResult::advance();
      if (!worksOnTensors(op))
        return WalkResult::advance();
      if (!check(op, mesh))
        failed = true;
      // Payload ops of linalg/pad bodies work on scalars of the op above.
      return WalkResult::skip();
    });
    if (failed)
      signalPassFailure();
  }

  bool check(Operation *op, const std::optional<DeviceMesh> &mesh) {
    std::string why;
    ShardingRule rule = getRuleOrReplicated(op, why);
    if (!why.empty())
      op->emitRemark() << why;
    op->emitRemark() << "rule: " << rule.str();

    if (mesh) {
      EnumerateOptions options;
      options.maxCandidates = maxCandidates;
      std::vector<Candidate> candidates =
          enumerateCandidates(rule, *mesh, options);
      InFlightDiagnostic diag = op->emitRemark()
                                << "candidates: " << candidates.size();
      if (printCandidates)
        for (const Candidate &c : candidates) {
          Diagnostic &note = diag.attachNote();
          note << rule.strFactorAxes(*mesh, c.factorAxes) << " => ";
          for (auto [i, l] : llvm::enumerate(c.operandLayouts))
            note << (i ? ", " : "") << l.str(*mesh);
          note << " -> ";
          for (auto [i, l] : llvm::enumerate(c.resultLayouts))
            note << (i ? ", " : "") << l.str(*mesh);
          note << "; flops " << static_cast<int64_t>(c.flops);
        }
    }

    auto strategy = op->getAttrOfType<dist::StrategyAttr>(
        dist::DistDialect::kStrategyAttrName);
    if (!strategy)
      return true;
    DeviceMesh strategyMesh = mesh ? *mesh : strategy.getMesh().toDeviceMesh();
    Candidate match;
    if (failed(matchUserStrategy(op, strategy, rule, strategyMesh, match)))
      return false;
    InFlightDiagnostic diag =
        op->emitRemark() << "strategy: "
                         << rule.strFactorAxes(strategyMesh, match.factorAxes)
                         << "; results: ";
    for (auto [i, l] : llvm::enumerate(match.resultLayouts))
      diag << (i ? ", " : "") << l.str(strategyMesh);
    diag << "; flops " << static_cast<int64_t>(match.flops);
    return true;
  }
};
} // namespace
