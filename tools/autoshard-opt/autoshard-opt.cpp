//===- autoshard-opt.cpp - MLIR-style driver for autoshard passes ---------===//

#include "autoshard/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  autoshard::registerAllDialects(registry);
  autoshard::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "autoshard optimizer driver: dist dialect and passes\n",
      registry));
}
