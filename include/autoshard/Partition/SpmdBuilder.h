//===- SpmdBuilder.h - Builds per-device IR for one mesh --------*- C++ -*-===//
//
// What --dist-partition needs to write SPMD code on one mesh: local shard
// types, rank-dependent shard offsets and sizes (from shard.process_multi_index),
// and one collective op per planner step (CollectiveStep, Collective.h).
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_PARTITION_SPMDBUILDER_H
#define AUTOSHARD_PARTITION_SPMDBUILDER_H

#include "autoshard/Analysis/Collective.h"
#include "autoshard/Support/DeviceMesh.h"
#include "autoshard/Support/TensorLayout.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

#include <map>
#include <optional>
#include <string>

namespace autoshard {

class SpmdBuilder {
public:
  SpmdBuilder(DeviceMesh mesh, std::string gridName)
      : mesh(std::move(mesh)), gridName(std::move(gridName)) {}

  const DeviceMesh &getMesh() const { return mesh; }
  llvm::StringRef getGridName() const { return gridName; }

  /// The type one device holds of a `global` tensor with `layout`: split dims
  /// divided by their shard count; a dim whose uneven shards differ in size
  /// is dynamic (each device's real extent is its own shard size).
  mlir::RankedTensorType getLocalType(mlir::RankedTensorType global,
                                      const TensorLayout &layout) const;

  /// The index of this device's shard of `dim` (row-major over the dim's
  /// axes), its global offset and its size, as index values.
  mlir::Value buildShardIndex(mlir::OpBuilder &b, mlir::Location loc,
                              const TensorLayout &layout, int64_t dim) const;
  mlir::Value buildShardOffset(mlir::OpBuilder &b, mlir::Location loc,
                               const TensorLayout &layout, int64_t dim,
                               int64_t extent) const;
  mlir::Value buildShardSize(mlir::OpBuilder &b, mlir::Location loc,
                             const TensorLayout &layout, int64_t dim,
                             int64_t extent) const;
  /// This device's index in the group of `axes` (row-major over `axes`).
  mlir::Value buildGroupIndex(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::ArrayRef<int64_t> axes) const;

  /// Emits `step` on the local value `input` of a tensor whose global type
  /// is `global`. Returns the local result, or std::nullopt with `error`
  /// set when the step cannot be expressed (the caller reports it).
  std::optional<mlir::Value> emitStep(mlir::OpBuilder &b, mlir::Location loc,
                                      mlir::Value input,
                                      mlir::RankedTensorType global,
                                      const CollectiveStep &step,
                                      std::string &error) const;

private:
  DeviceMesh mesh;
  std::string gridName;
};

/// What a partitioned module communicates, counted on its collective ops.
struct CommStats {
  /// Keyed by stringifyCollectiveKind.
  std::map<std::string, int64_t> collectives;
  /// Bytes each device sends, with the factors of the cost model's
  /// alpha-beta "B" term (CostModel.h): all_reduce 2(n-1)/n of its tensor,
  /// all_gather (n-1)/n of the gathered result, reduce_scatter and
  /// all_to_all (n-1)/n of their input, permute the whole local shard,
  /// all_slice and make_partial nothing.
  double commBytesPerDevice = 0.0;
};

/// Counts the collectives of every function in `module` (upstream shard
/// collectives and dist collectives) against the grids they name.
CommStats countCollectives(mlir::Operation *module);

} // namespace autoshard

#endif // AUTOSHARD_PARTITION_SPMDBUILDER_H
