//===- Rules.h - Registration of the VJP rules, one per op kind -*- C++ -*-===//
//
// Each rule lives in its own file of this directory and registers its
// external model here; Registry.cpp calls them all. A new op's rule: a new
// file, a line below, a line in Registry.cpp and in CMakeLists.txt.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LIB_TRAIN_VJP_RULES_H
#define AUTOSHARD_LIB_TRAIN_VJP_RULES_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace autoshard::vjp {

void registerGenericVjp(mlir::DialectRegistry &registry);     // linalg.generic
void registerElementwiseVjp(mlir::DialectRegistry &registry); // arith/math
void registerMatmulVjp(mlir::DialectRegistry &registry);      // linalg.matmul
void registerBatchMatmulVjp(mlir::DialectRegistry &registry);
void registerSoftmaxVjp(mlir::DialectRegistry &registry);
void registerTransposeVjp(mlir::DialectRegistry &registry);
void registerReshapeVjp(mlir::DialectRegistry &registry); // expand/collapse/reshape
void registerBroadcastVjp(mlir::DialectRegistry &registry);
void registerConcatVjp(mlir::DialectRegistry &registry);
void registerSliceVjp(mlir::DialectRegistry &registry); // tensor.extract_slice
void registerPadVjp(mlir::DialectRegistry &registry);
void registerGatherVjp(mlir::DialectRegistry &registry); // embeddings
void registerIdentityVjp(mlir::DialectRegistry &registry); // dist.annotate/reshard

} // namespace autoshard::vjp

#endif // AUTOSHARD_LIB_TRAIN_VJP_RULES_H
