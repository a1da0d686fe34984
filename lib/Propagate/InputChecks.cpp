//===- InputChecks.cpp - What dist-propagate refuses up front -------------===//

#include "InputChecks.h"

#include "autoshard/Support/DeviceMesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace autoshard;

/// Whether `t` is a statically shaped tensor without elements.
static bool isZeroSize(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape() && rt.getNumElements() == 0;
}

LogicalResult autoshard::checkPropagateInput(ModuleOp module) {
  // --dist-partition records each argument's and result's global type: a
  // second propagation would take the local shapes for global ones.
  static constexpr StringLiteral kGlobalType = "dist.global_type";
  for (auto func : module.getOps<func::FuncOp>()) {
    auto partitioned = [&](StringRef what, unsigned i) {
      return func.emitError()
             << "dist-propagate: @" << func.getSymName()
             << " is already partitioned (" << what << " #" << i << " has "
             << kGlobalType
             << "); propagate and partition the global program, once";
    };
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (func.getArgAttr(i, kGlobalType))
        return partitioned("argument", i);
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (func.getResultAttr(i, kGlobalType))
        return partitioned("result", i);
    if (func.isExternal())
      continue;
    if (!func.getBody().hasOneBlock())
      return func.emitError()
             << "dist-propagate: @" << func.getSymName() << " has "
             << func.getBlocks().size()
             << " blocks; only single-block (straight-line) functions are "
                "supported";
    if (func.getNumResults() == 0 &&
        llvm::hasSingleElement(func.getBody().front()))
      return func.emitError()
             << "dist-propagate: @" << func.getSymName()
             << " is empty (no operations and no results): there is nothing "
                "to compile";
    for (BlockArgument arg : func.getArguments())
      if (isZeroSize(arg.getType()))
        return emitError(arg.getLoc())
               << "dist-propagate: argument #" << arg.getArgNumber() << " of @"
               << func.getSymName() << " is a zero-size tensor ("
               << arg.getType()
               << "); autoshard does not support zero-size tensors";
  }
  WalkResult walk =
      module.walk<WalkOrder::PreOrder>([&](Operation *op) -> WalkResult {
        if (isa<func::FuncOp, ModuleOp>(op))
          return WalkResult::advance();
        // A grid becomes the mesh when nothing else gives one: it must be one.
        if (auto grid = dyn_cast<shard::GridOp>(op)) {
          std::vector<MeshAxis> axes;
          for (auto [i, size] : llvm::enumerate(grid.getShape())) {
            if (ShapedType::isDynamic(size)) {
              grid.emitError() << "dist-propagate: grid @" << grid.getSymName()
                               << " has a dynamic size ('?') on axis " << i
                               << "; autoshard needs a grid of static sizes";
              return WalkResult::interrupt();
            }
            axes.push_back({"g" + std::to_string(i), size, 0.0, 0.0});
          }
          if (std::string err = DeviceMesh(std::move(axes)).validate();
              !err.empty()) {
            grid.emitError()
                << "dist-propagate: grid @" << grid.getSymName() << ": " << err;
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        }
        StringRef ns = op->getName().getDialectNamespace();
        bool call = isa<CallOpInterface>(op);
        if (call || isa<RegionBranchOpInterface>(op) || ns == "scf" ||
            ns == "cf") {
          op->emitError() << "dist-propagate: '" << op->getName()
                          << "' is not supported: autoshard propagates layouts "
                             "through straight-line functions; "
                          << (call ? "inline the call first (--inline)"
                                   : "unroll the loop or resolve the branch "
                                     "first");
          return WalkResult::interrupt();
        }
        for (Type t : op->getResultTypes())
          if (isZeroSize(t)) {
            op->emitError()
                << "dist-propagate: '" << op->getName()
                << "' has a zero-size result (" << t
                << "); autoshard does not support zero-size tensors";
            return WalkResult::interrupt();
          }
        return WalkResult::advance();
      });
  return failure(walk.wasInterrupted());
}
