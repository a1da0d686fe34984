//===- ModulePlannerOptions.h - One planner decision per module -*- C++ -*-===//
//
// Propagation prices every reshard with the reshard planner, and
// partitioning emits the steps the planner returns: both must plan with the
// same PlannerOptions, or the report promises one program and the partition
// emits another. --dist-propagate records its options on the module
// (`dist.planner = {enable_alltoall = true}`); --dist-partition, and a later
// --dist-propagate, follow them. An option given explicitly to a pass that
// disagrees with the module's record is an error.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_ANALYSIS_MODULEPLANNEROPTIONS_H
#define AUTOSHARD_ANALYSIS_MODULEPLANNEROPTIONS_H

#include "autoshard/Analysis/ReshardPlanner.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

namespace autoshard {

/// The module attribute holding the planner options propagation used.
inline constexpr llvm::StringLiteral kPlannerAttrName = "dist.planner";
inline constexpr llvm::StringLiteral kEnableAllToAllName = "enable_alltoall";

/// `options` as the module attribute's dictionary.
inline mlir::DictionaryAttr getPlannerAttr(mlir::MLIRContext *ctx,
                                           const PlannerOptions &options) {
  mlir::Builder b(ctx);
  return b.getDictionaryAttr(
      {b.getNamedAttr(kEnableAllToAllName,
                      b.getBoolAttr(options.enableAllToAll))});
}

/// The planner options of `module`: its `dist.planner` record where it has
/// one, else `enableAllToAll`. `given` says the pass option was given
/// explicitly: then a record that disagrees is an error (located at the
/// module, naming `pass`).
inline mlir::FailureOr<PlannerOptions>
resolvePlannerOptions(mlir::ModuleOp module, bool enableAllToAll, bool given,
                      llvm::StringRef pass) {
  PlannerOptions options;
  options.enableAllToAll = enableAllToAll;
  auto record = module->getAttrOfType<mlir::DictionaryAttr>(kPlannerAttrName);
  if (!record)
    return options;
  auto recorded = record.getAs<mlir::BoolAttr>(kEnableAllToAllName);
  if (!recorded) {
    module.emitError() << pass << ": module attribute '" << kPlannerAttrName
                       << "' needs a boolean '" << kEnableAllToAllName << "'";
    return mlir::failure();
  }
  if (given && recorded.getValue() != enableAllToAll) {
    module.emitError() << pass << ": option enable-alltoall="
                       << (enableAllToAll ? "true" : "false")
                       << " conflicts with the module's planner options "
                       << record
                       << " (propagation priced its reshards with them; "
                          "give both passes the same option, or neither)";
    return mlir::failure();
  }
  options.enableAllToAll = recorded.getValue();
  return options;
}

} // namespace autoshard

#endif // AUTOSHARD_ANALYSIS_MODULEPLANNEROPTIONS_H
