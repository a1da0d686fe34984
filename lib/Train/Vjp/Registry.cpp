//===- Registry.cpp - Attach every VJP rule -------------------------------===//

#include "Rules.h"

#include "autoshard/Train/VjpOpInterface.h"

#include "mlir/IR/DialectRegistry.h"

#include "autoshard/Train/VjpOpInterface.cpp.inc"

void autoshard::registerVjpModels(mlir::DialectRegistry &registry) {
  using namespace autoshard::vjp;
  registerGenericVjp(registry);
  registerElementwiseVjp(registry);
  registerMatmulVjp(registry);
  registerBatchMatmulVjp(registry);
  registerSoftmaxVjp(registry);
  registerTransposeVjp(registry);
  registerReshapeVjp(registry);
  registerBroadcastVjp(registry);
  registerConcatVjp(registry);
  registerSliceVjp(registry);
  registerPadVjp(registry);
  registerGatherVjp(registry);
  registerIdentityVjp(registry);
}
