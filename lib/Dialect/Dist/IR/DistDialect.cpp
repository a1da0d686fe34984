//===- DistDialect.cpp - dist dialect ------------------------------------===//

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "autoshard/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace autoshard;
using namespace autoshard::dist;

#include "autoshard/Dialect/Dist/IR/DistDialect.cpp.inc"
#include "autoshard/Dialect/Dist/IR/DistEnums.cpp.inc"

namespace {
/// Prints meshes once at the top of the file as `#mesh = #dist.mesh<...>`.
struct DistOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<MeshAttr>(attr)) {
      os << "mesh";
      return AliasResult::FinalAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void DistDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "autoshard/Dialect/Dist/IR/DistOps.cpp.inc"
      >();
  addInterfaces<DistOpAsmInterface>();
}

/// Checks each layout of a strategy against the values it describes.
static LogicalResult verifyLayouts(Operation *op, ArrayRef<LayoutAttr> layouts,
                                   ValueRange values, StringRef what) {
  for (auto [i, pair] : llvm::enumerate(llvm::zip(layouts, values))) {
    auto [layout, value] = pair;
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type) {
      // Scalars (a fill value, an index) are present on every device: only
      // the replicated rank-0 layout describes them.
      if (layout.getRank() == 0 && layout.getPartialAxes().empty())
        continue;
      return op->emitOpError()
             << "has a dist.strategy layout for " << what << " #" << i
             << ", which is not a ranked tensor; only a replicated rank-0 "
                "layout `[]` fits it";
    }
    std::string err = layout.verifyForShape(type.getShape());
    if (!err.empty())
      return op->emitOpError()
             << "dist.strategy layout for " << what << " #" << i << ": " << err;
  }
  return success();
}

LogicalResult DistDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kStrategyAttrName) {
    auto strategy = dyn_cast<StrategyAttr>(attr.getValue());
    if (!strategy)
      return op->emitOpError() << "expects '" << name
                               << "' to be a #dist.strategy attribute";
    ArrayRef<LayoutAttr> ins = strategy.getOperands();
    ArrayRef<LayoutAttr> outs = strategy.getResults();
    // Destination-style ops may omit their inits: they follow the results.
    int64_t numOperands = op->getNumOperands();
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    bool arityOk = static_cast<int64_t>(ins.size()) == numOperands ||
                   (dps && static_cast<int64_t>(ins.size()) ==
                               dps.getNumDpsInputs());
    if (!arityOk) {
      InFlightDiagnostic diag = op->emitOpError()
                                << "has a dist.strategy with " << ins.size()
                                << " operand layouts but the op has "
                                << numOperands << " operands";
      if (dps)
        diag << " (" << dps.getNumDpsInputs() << " inputs)";
      return diag;
    }
    if (!outs.empty() && outs.size() != op->getNumResults())
      return op->emitOpError()
             << "has a dist.strategy with " << outs.size()
             << " result layouts but the op has " << op->getNumResults()
             << " results";
    if (failed(verifyLayouts(op, ins, op->getOperands().take_front(ins.size()),
                             "operand")) ||
        failed(verifyLayouts(op, outs, op->getResults(), "result")))
      return failure();
    return success();
  }
  if (name == kPriorityAttrName) {
    if (!isa<IntegerAttr>(attr.getValue()))
      return op->emitOpError() << "expects '" << name << "' to be an integer";
    return success();
  }
  if (name == kMeshAttrName) {
    if (!isa<MeshAttr>(attr.getValue()))
      return op->emitOpError() << "expects '" << name
                               << "' to be a #dist.mesh attribute";
    return success();
  }
  // Pipeline stage of the ONNX node an op was imported from (lib/Import).
  if (name == "dist.stage") {
    auto stage = dyn_cast<IntegerAttr>(attr.getValue());
    if (!stage || stage.getInt() < 0)
      return op->emitOpError()
             << "expects '" << name << "' to be a non-negative integer";
    return success();
  }
  // A forward op the training step's backward recomputes (lib/Train,
  // Recompute.h; strategy files' `recompute: true`).
  if (name == "dist.recompute") {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "expects '" << name << "' to be a unit "
                               << "attribute";
    return success();
  }
  // Optimizer parallel for the module's training step (strategy files'
  // `optimizer_shard`): {threshold = BYTES : i64}.
  if (name == "dist.optimizer_shard") {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!dict || !dict.getAs<IntegerAttr>("threshold"))
      return op->emitOpError() << "expects '" << name
                               << "' to be {threshold = BYTES : i64}";
    return success();
  }
  // The reshard planner's options propagation priced with, which
  // partitioning follows (Analysis/ModulePlannerOptions.h).
  if (name == "dist.planner") {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!dict || !dict.getAs<BoolAttr>("enable_alltoall"))
      return op->emitOpError() << "expects '" << name
                               << "' to be {enable_alltoall = BOOL}";
    return success();
  }
  // Which part of a training step built an op (lib/Train).
  if (name == "dist.phase") {
    auto phase = dyn_cast<StringAttr>(attr.getValue());
    if (!phase || !llvm::is_contained({"loss", "backward", "optimizer"},
                                      phase.getValue()))
      return op->emitOpError() << "expects '" << name
                               << "' to be \"loss\", \"backward\" or "
                                  "\"optimizer\"";
    return success();
  }
  // --dist-mixed-precision (lib/Train/MixedPrecision.cpp): the module's
  // precision, and the contractions lowered with TF32 inputs.
  if (name == "dist.precision") {
    auto p = dyn_cast<StringAttr>(attr.getValue());
    if (!p || !llvm::is_contained({"fp32", "tf32", "bf16", "fp16"},
                                  p.getValue()))
      return op->emitOpError() << "expects '" << name
                               << "' to be \"fp32\", \"tf32\", \"bf16\" or "
                                  "\"fp16\"";
    return success();
  }
  if (name == "dist.tf32") {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "expects '" << name << "' to be a unit "
                               << "attribute";
    return success();
  }
  return op->emitOpError() << "has unknown dist attribute '" << name << "'";
}
