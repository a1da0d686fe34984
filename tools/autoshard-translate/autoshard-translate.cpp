//===- autoshard-translate.cpp - Import models into autoshard's IR --------===//
//
// mlir-translate-style driver:
//   autoshard-translate --import-onnx model.onnx [--strategy FILE]
//                       [--weights-dir DIR] -o out.mlir
//
//===----------------------------------------------------------------------===//

#include "autoshard/Import/OnnxImporter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  autoshard::registerOnnxImportTranslation();
  return mlir::failed(mlir::mlirTranslateMain(
      argc, argv, "autoshard translation driver (model import)\n"));
}
