//===- InitAll.cpp - Register autoshard with an MLIR tool -----------------===//

#include "autoshard/InitAll.h"

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "autoshard/Partition/Passes.h"
#include "autoshard/Propagate/Passes.h"
#include "autoshard/Propagate/RuleModels.h"
#include "autoshard/Propagate/TestPasses.h"
#include "autoshard/Train/Passes.h"
#include "autoshard/Train/VjpOpInterface.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/IR/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Tosa/IR/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"

void autoshard::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                  mlir::math::MathDialect, mlir::scf::SCFDialect,
                  mlir::shard::ShardDialect, mlir::tensor::TensorDialect,
                  mlir::tosa::TosaDialect, dist::DistDialect>();
  // Upstream sharding models keep files written for mlir-opt's
  // --sharding-propagation readable, and satisfy the interfaces these
  // dialects promise.
  mlir::arith::registerShardingInterfaceExternalModels(registry);
  mlir::linalg::registerShardingInterfaceExternalModels(registry);
  mlir::tensor::registerShardingInterfaceExternalModels(registry);
  mlir::tosa::registerShardingInterfaceExternalModels(registry);
  // autoshard's factor rules (propagation and its cost model read these).
  autoshard::registerShardingRuleModels(registry);
  // Reverse-mode rules (--dist-training-step reads these).
  autoshard::registerVjpModels(registry);
}

void autoshard::registerAllPasses() {
  registerAutoshardPropagatePasses();
  registerAutoshardPropagateTestPasses();
  registerPartitionPassesAndPipelines();
  registerAutoshardTrainPasses();
}
