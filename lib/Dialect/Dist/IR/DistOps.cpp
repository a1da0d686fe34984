//===- DistOps.cpp - dist operations -------------------------------------===//

#include "autoshard/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace autoshard::dist;

static LogicalResult verifyLayoutFor(Operation *op, LayoutAttr layout,
                                     Type type, StringRef which) {
  std::string err =
      layout.verifyForShape(cast<RankedTensorType>(type).getShape());
  if (!err.empty())
    return op->emitOpError() << which << " layout: " << err;
  return success();
}

LogicalResult AnnotateOp::verify() {
  return verifyLayoutFor(*this, getLayout(), getInput().getType(), "the");
}

LogicalResult ReshardOp::verify() {
  if (getSource().getMesh() != getTarget().getMesh())
    return emitOpError("source and target layouts must be on the same mesh");
  if (failed(verifyLayoutFor(*this, getSource(), getInput().getType(),
                             "source")) ||
      failed(verifyLayoutFor(*this, getTarget(), getInput().getType(),
                             "target")))
    return failure();
  return success();
}

#define GET_OP_CLASSES
#include "autoshard/Dialect/Dist/IR/DistOps.cpp.inc"
