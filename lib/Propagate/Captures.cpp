//===- Captures.cpp - Tensors an op reads from inside its region ----------===//
#include "Captures.h"

#include "autoshard/Support/TensorLayout.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace autoshard;
using namespace autoshard::dist;

/// Whether `v` already is what exposeCapturedTensors makes (a second run of
/// the pass must not stack annotations).
static bool isCaptureAnnotation(Value v) {
  auto annotate = v.getDefiningOp<AnnotateOp>();
  return annotate && annotate->hasAttr(propagate::kCaptureAttrName) &&
         annotate.getLayout().toTensorLayout().isReplicated();
}

void propagate::exposeCapturedTensors(func::FuncOp func, MeshAttr mesh) {
  Region &top = func.getBody();
  for (Operation &op : llvm::make_early_inc_range(top.front())) {
    if (op.getNumRegions() == 0)
      continue;
    // Tensors defined in the function's body and used inside `op`, in the
    // order of their first use (a stable order keeps the output stable).
    llvm::MapVector<Value, SmallVector<OpOperand *, 2>> captured;
    op.walk([&](Operation *inner) {
      if (inner == &op)
        return;
      for (OpOperand &use : inner->getOpOperands()) {
        Value v = use.get();
        if (v.getParentRegion() == &top &&
            isa<RankedTensorType>(v.getType()) && !isCaptureAnnotation(v))
          captured[v].push_back(&use);
      }
    });
    OpBuilder b(&op);
    for (auto &[v, uses] : captured) {
      auto type = cast<RankedTensorType>(v.getType());
      auto layout = LayoutAttr::get(
          mesh, TensorLayout::replicated(type.getRank()));
      auto annotate = AnnotateOp::create(b, op.getLoc(), v, layout,
                                         b.getI64IntegerAttr(0));
      annotate->setAttr(kCaptureAttrName, b.getUnitAttr());
      for (OpOperand *use : uses)
        use->set(annotate.getResult());
    }
  }
}
