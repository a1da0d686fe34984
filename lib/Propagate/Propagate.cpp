//===- Propagate.cpp - The --dist-propagate pass --------------------------===//
//
// The pass: resolves the mesh, turns upstream `shard` annotations into
// `dist.annotate`, and propagates every function (FunctionPropagation.h: its
// phases, each in its own file): builds the solver graph (Solver.h) of the
// function — one node per function argument, per top-level op and per
// function result; candidates from the ops' sharding rules; edge costs from
// the reshard planner; user constraints as restrictions — solves it, and
// writes the solution back as the propagation contract: complete
// `dist.strategy` on every op, `dist.layout` on arguments and results, and
// an explicit `dist.reshard` for every mismatch.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Propagate/Passes.h"

#include "autoshard/Analysis/CostModel.h"
#include "autoshard/Analysis/ModulePlannerOptions.h"
#include "autoshard/Analysis/ReshardPlanner.h"
#include "autoshard/Dialect/Dist/IR/DistOps.h"

#include "Captures.h"
#include "FunctionPropagation.h"
#include "InputChecks.h"
#include "Report.h"
#include "TiedResults.h"
#include "TrainingMemory.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace autoshard {
#define GEN_PASS_DEF_DISTPROPAGATE
#include "autoshard/Propagate/Passes.h.inc"
} // namespace autoshard

using namespace mlir;
using namespace autoshard;
using namespace autoshard::dist;
using namespace autoshard::propagate;

namespace {

struct DistPropagatePass
    : public autoshard::impl::DistPropagateBase<DistPropagatePass> {
  using DistPropagateBase::DistPropagateBase;
  void runOnOperation() override;

private:
  /// What the pass looks for before it builds graphs, found in one walk of
  /// the module (in the walk's post-order).
  struct ModuleScan {
    /// The mesh of the first user constraint (annotation, reshard,
    /// strategy).
    MeshAttr constraintMesh;
    shard::GridOp firstGrid;
    SmallVector<shard::ShardOp> shards;
    SmallVector<shard::ShardingOp> shardings;
  };
  static ModuleScan scanModule(ModuleOp module);
  FailureOr<MeshAttr> resolveMesh(ModuleOp module, const ModuleScan &scan);
  LogicalResult convertUpstreamAnnotations(MeshAttr mesh,
                                           const ModuleScan &scan);
};

} // namespace

//===----------------------------------------------------------------------===//
// Mesh and upstream annotations
//===----------------------------------------------------------------------===//

DistPropagatePass::ModuleScan DistPropagatePass::scanModule(ModuleOp module) {
  ModuleScan scan;
  auto strategyName =
      StringAttr::get(module.getContext(), DistDialect::kStrategyAttrName);
  module.walk([&](Operation *op) {
    if (!scan.constraintMesh) {
      if (auto a = dyn_cast<AnnotateOp>(op))
        scan.constraintMesh = a.getLayout().getMesh();
      else if (auto r = dyn_cast<ReshardOp>(op))
        scan.constraintMesh = r.getSource().getMesh();
      // A strategy is a discardable attribute (no op declares one): the
      // inherent attributes of the many ops in linalg bodies go unread.
      else if (auto st = dyn_cast_or_null<StrategyAttr>(
                   op->getDiscardableAttr(strategyName)))
        scan.constraintMesh = st.getMesh();
    }
    if (auto grid = dyn_cast<shard::GridOp>(op)) {
      if (!scan.firstGrid)
        scan.firstGrid = grid;
    } else if (auto shard = dyn_cast<shard::ShardOp>(op)) {
      scan.shards.push_back(shard);
    } else if (auto sharding = dyn_cast<shard::ShardingOp>(op)) {
      scan.shardings.push_back(sharding);
    }
  });
  return scan;
}

FailureOr<MeshAttr> DistPropagatePass::resolveMesh(ModuleOp module,
                                                   const ModuleScan &scan) {
  MLIRContext *ctx = module.getContext();
  if (!mesh.empty()) {
    std::string text = mesh;
    if (StringRef(text).trim().starts_with("#"))
      text = StringRef(text).trim().str();
    else
      text = "#dist.mesh<[" + text + "]>";
    Attribute attr = parseAttribute(text, ctx);
    auto meshAttr = dyn_cast_or_null<MeshAttr>(attr);
    if (!meshAttr) {
      module.emitError() << "dist-propagate: cannot parse mesh option '" << mesh
                         << "' (expected e.g. 'dp=2,mp=4')";
      return failure();
    }
    return meshAttr;
  }
  if (auto attr = module->getAttrOfType<MeshAttr>(DistDialect::kMeshAttrName))
    return attr;
  // The mesh of the first user constraint, in program order.
  if (scan.constraintMesh)
    return scan.constraintMesh;
  if (shard::GridOp grid = scan.firstGrid) {
    std::vector<MeshAxis> axes;
    for (auto [i, size] : llvm::enumerate(grid.getShape()))
      axes.push_back({"g" + std::to_string(i), size, 0.0, 0.0});
    return MeshAttr::get(ctx, DeviceMesh(std::move(axes)));
  }
  module.emitError() << "dist-propagate: no mesh; give the pass option "
                        "mesh=..., a 'dist.mesh' module attribute, or an "
                        "annotation";
  return failure();
}

/// Rewrites `shard.shard %v to %s` into `dist.annotate` so files written for
/// upstream `--sharding-propagation` work unchanged. Grid axis i is mesh axis
/// i; the grid must have the mesh's shape.
LogicalResult
DistPropagatePass::convertUpstreamAnnotations(MeshAttr meshAttr,
                                              const ModuleScan &scan) {
  const DeviceMesh dmesh = meshAttr.toDeviceMesh();
  for (shard::ShardOp op : scan.shards) {
    auto sharding = op.getSharding().getDefiningOp<shard::ShardingOp>();
    if (!sharding)
      return op.emitError("dist-propagate: the sharding of a shard.shard must "
                          "come from a shard.sharding op");
    auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        sharding, sharding.getGridAttr());
    if (!grid)
      return sharding.emitError("dist-propagate: unknown grid @")
             << sharding.getGrid();
    if (!llvm::equal(grid.getShape(), meshAttr.getAxisSizes()))
      return op.emitError("dist-propagate: grid @")
             << grid.getSymName() << " does not have the shape of the mesh "
             << meshAttr;
    if (!sharding.getStaticHaloSizes().empty() ||
        !sharding.getStaticShardedDimsOffsets().empty() ||
        !sharding.getDynamicHaloSizes().empty() ||
        !sharding.getDynamicShardedDimsOffsets().empty())
      return sharding.emitError("dist-propagate: halo sizes and sharded dim "
                                "offsets are not supported");
    auto type = op.getSrc().getType();
    TensorLayout layout = TensorLayout::replicated(type.getRank());
    auto splitAxes = sharding.getSplitAxes().getAxes();
    if (static_cast<int64_t>(splitAxes.size()) > type.getRank())
      return sharding.emitError("dist-propagate: sharding splits ")
             << splitAxes.size() << " dims of a rank-" << type.getRank()
             << " tensor";
    for (auto [d, axes] : llvm::enumerate(splitAxes))
      for (int16_t a : axes.asArrayRef())
        layout.dimAxes[d].push_back(a);
    std::vector<int64_t> shape = getShape(type);
    std::string err = layout.validate(dmesh, &shape);
    if (!err.empty())
      return op.emitError("dist-propagate: ") << err;
    OpBuilder b(op);
    auto annotate = AnnotateOp::create(b, op.getLoc(), op.getSrc(),
                                       LayoutAttr::get(meshAttr, layout),
                                       b.getI64IntegerAttr(0));
    op.getResult().replaceAllUsesWith(annotate.getResult());
    op.erase();
  }
  for (shard::ShardingOp op : scan.shardings)
    if (op->use_empty())
      op.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// One function
//===----------------------------------------------------------------------===//

FunctionPropagation::FunctionPropagation(func::FuncOp func, MeshAttr meshAttr,
                                         const CostModel &model,
                                         ReshardPlanner &planner,
                                         PropagationReport &report,
                                         const PropagateOptions &options)
    : func(func), ctx(func.getContext()), meshAttr(meshAttr),
      dmesh(meshAttr.toDeviceMesh()), model(model), planner(planner),
      report(report), options(options), body(func.getBody().front()),
      returnOp(cast<func::ReturnOp>(body.getTerminator())),
      pricing(dmesh, model, planner.getOptions()) {}

LogicalResult FunctionPropagation::run() {
  if (failed(buildGraph()))
    return failure();
  buildSolverGraph();
  if (failed(solveGraph()) || failed(writeBack()))
    return failure();
  reportStrategies();
  if (failed(reportInputReshards()))
    return failure();
  reportInputCollectives();
  reportMemory();
  return success();
}

/// Propagates `func` (a single-block function; external ones are left).
static LogicalResult propagateFunction(func::FuncOp func, MeshAttr meshAttr,
                                       const CostModel &model,
                                       ReshardPlanner &planner,
                                       PropagationReport &report,
                                       const PropagateOptions &options) {
  if (func.isExternal())
    return success();
  if (!func.getBody().hasOneBlock())
    return func.emitError("dist-propagate: only single-block functions are "
                          "supported");
  exposeCapturedTensors(func, meshAttr);
  return FunctionPropagation(func, meshAttr, model, planner, report, options)
      .run();
}

void DistPropagatePass::runOnOperation() {
  ModuleOp module = getOperation();
  if (!symbolizeSolverKind(solver)) {
    module.emitError() << "dist-propagate: unknown solver '" << solver
                       << "' (expected 'dp', 'local' or 'exact')";
    return signalPassFailure();
  }
  if (failed(checkPropagateInput(module)))
    return signalPassFailure();
  // One planner decision per module (ModulePlannerOptions.h).
  FailureOr<PlannerOptions> popts = resolvePlannerOptions(
      module, enableAllToAll, enableAllToAll.hasValue(), "dist-propagate");
  if (failed(popts))
    return signalPassFailure();
  ModuleScan scan = scanModule(module);
  FailureOr<MeshAttr> meshAttr = resolveMesh(module, scan);
  if (failed(meshAttr) || failed(convertUpstreamAnnotations(*meshAttr, scan)))
    return signalPassFailure();
  ClusterSpec clusterSpec;
  if (!cluster.empty()) {
    std::string error;
    if (!ClusterSpec::fromFile(cluster, clusterSpec, error)) {
      module.emitError() << "dist-propagate: " << error;
      return signalPassFailure();
    }
  }
  CostModel model(meshAttr->toDeviceMesh(), clusterSpec);
  ReshardPlanner planner(model, *popts);
  PropagationReport report;
  report.solver = solver;
  report.memoryBoundBytesPerDevice =
      clusterSpec.memoryGiB * double(1ull << 30);
  // Only the JSON report lists per-op strategies; building them (layout
  // strings, printed locations) is a large share of the pass otherwise.
  report.wantStrategies = !this->report.empty() && this->report != "-";
  PropagateOptions options;
  options.solver = *symbolizeSolverKind(solver);
  options.exactBudget = exactBudget;
  options.explain = explain;
  for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
    double before = report.memoryBytesPerDevice;
    if (failed(propagateFunction(func, *meshAttr, model, planner, report,
                                 options)) ||
        failed(tieResults(func, planner, report)))
      return signalPassFailure();
    if (std::optional<double> step = countTrainingMemory(func, model, report))
      report.memoryBytesPerDevice = before + *step;
  }
  report.memoryFits =
      report.memoryBytesPerDevice <= report.memoryBoundBytesPerDevice;
  module->setAttr(DistDialect::kMeshAttrName, *meshAttr);
  module->setAttr(kPlannerAttrName, getPlannerAttr(module.getContext(), *popts));
  if (!this->report.empty()) {
    std::string error;
    if (!report.write(this->report, error)) {
      module.emitError() << "dist-propagate: " << error;
      return signalPassFailure();
    }
  }
}
