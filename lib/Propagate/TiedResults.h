//===- TiedResults.h - Results that replace an argument ---------*- C++ -*-===//
#ifndef AUTOSHARD_LIB_PROPAGATE_TIEDRESULTS_H
#define AUTOSHARD_LIB_PROPAGATE_TIEDRESULTS_H

#include "Report.h"

#include "autoshard/Analysis/ReshardPlanner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace autoshard {

/// A result with `dist.tied_arg = N` becomes argument N of the next call (a
/// training step's updated parameters and optimizer state): the runtime
/// feeds its local shard back as it is, so its layout must be the
/// argument's. Where propagation chose another layout for it, a
/// `dist.reshard` to the argument's layout goes before the return (priced
/// and counted in the report like any reshard).
mlir::LogicalResult tieResults(mlir::func::FuncOp func,
                               ReshardPlanner &planner,
                               PropagationReport &report);

} // namespace autoshard

#endif // AUTOSHARD_LIB_PROPAGATE_TIEDRESULTS_H
