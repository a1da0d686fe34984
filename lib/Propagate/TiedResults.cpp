//===- TiedResults.cpp - Results that replace an argument -----------------===//

#include "TiedResults.h"

#include "autoshard/Dialect/Dist/IR/DistOps.h"
#include "autoshard/Propagate/RuleModels.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace autoshard {

LogicalResult tieResults(func::FuncOp func, ReshardPlanner &planner,
                         PropagationReport &report) {
  if (func.isExternal())
    return success();
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  OpBuilder b(ret);
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto tied = func.getResultAttrOfType<IntegerAttr>(i, "dist.tied_arg");
    if (!tied)
      continue;
    int64_t arg = tied.getInt();
    if (arg < 0 || arg >= func.getNumArguments() ||
        func.getArgumentTypes()[arg] != func.getResultTypes()[i])
      return func.emitError("dist-propagate: result ")
             << i << " is tied (dist.tied_arg) to argument " << arg
             << ", which does not exist or has another type";
    auto want = func.getArgAttrOfType<dist::LayoutAttr>(arg, "dist.layout");
    auto have = func.getResultAttrOfType<dist::LayoutAttr>(i, "dist.layout");
    if (!want || !have || want == have)
      continue;
    auto type = cast<RankedTensorType>(func.getResultTypes()[i]);
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    int64_t elemBytes = getElemBytes(type);
    std::string error;
    auto plan = planner.plan(shape, elemBytes, have.toTensorLayout(),
                             want.toTensorLayout(), error);
    if (!plan)
      return ret.emitError("dist-propagate: no reshard of tied result ")
             << i << " to its argument's layout: " << error;
    Value v = ret.getOperand(i);
    auto reshard = dist::ReshardOp::create(b, ret.getLoc(), v, have, want);
    ret.setOperand(i, reshard.getResult());
    func.setResultAttr(i, "dist.layout", want);
    report.addReshard(*plan, want.getMesh().toDeviceMesh());
  }
  return success();
}

} // namespace autoshard
