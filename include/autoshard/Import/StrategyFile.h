//===- StrategyFile.h - User sharding strategies for imported models -*- C++
//-*-=//
//
// A strategy file (YAML; JSON is accepted as the YAML subset it is) says how
// an imported model should be spread over a device mesh:
//
//   mesh: {dp: 2, mp: 4}                  # ordered, most major axis first
//   strategies:
//     - match: "/fc1/Gemm"                # glob on a node name
//       splits: [[2, 1], [1, 4]]          # MindSpore split tuples per input
//     - match: "/layers.*/attn/MatMul"
//       in: [[[dp], [], []], [[], [mp]]]  # named-axis layouts per input
//       out: [[[dp], [], [mp]]]
//       priority: 1
//     - match: "tok.weight"               # glob on an initializer/input name
//       layout: [[mp], []]                # one layout (or splits: [4, 1])
//     - match: "/layers.*/mlp/*"          # the backward recomputes these
//       recompute: true                   # nodes (a training step)
//   stages:                               # pipeline stage per group of nodes
//     - {match: "/layers.0/*", stage: 0}
//   optimizer_shard: {enabled: true, threshold: 65536}   # training: ZeRO
//
// The importer resolves the globs against the model (see OnnxImporter.h).
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_IMPORT_STRATEGYFILE_H
#define AUTOSHARD_IMPORT_STRATEGYFILE_H

#include "autoshard/Support/DeviceMesh.h"
#include "autoshard/Support/TensorLayout.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace autoshard {

/// One tensor's layout as written: split counts per dim, or the mesh axes
/// each dim is split over (major to minor).
struct LayoutSpec {
  bool isSplits = true;
  std::vector<int64_t> splits;
  std::vector<std::vector<std::string>> axes;
  mlir::Location loc;

  int64_t getRank() const {
    return static_cast<int64_t>(isSplits ? splits.size() : axes.size());
  }
  /// Resolves against `mesh` and checks against `shape`. Split counts go
  /// through layoutFromSplitCounts; an error message is returned in `error`.
  TensorLayout resolve(const DeviceMesh &mesh, llvm::ArrayRef<int64_t> shape,
                       std::string &error) const;
  /// The spelling used in diagnostics, e.g. "(2, 1)" or "[[dp], []]".
  std::string str() const;
};

struct StrategyEntry {
  std::string match;
  mlir::Location loc;
  /// Layouts per node input (`splits:` or `in:`); on a tensor name the single
  /// entry is the tensor's layout.
  std::vector<LayoutSpec> inputs;
  /// Layouts per node output (`out:`).
  std::vector<LayoutSpec> outputs;
  /// `layout:` (or `splits:` written as one flat tuple): a tensor layout.
  std::optional<LayoutSpec> tensor;
  std::optional<int64_t> priority;
  /// `recompute: true`: the matched nodes' ops get dist.recompute.
  bool recompute = false;
};

struct StageEntry {
  std::string match;
  int64_t stage = 0;
  mlir::Location loc;
};

struct StrategySpec {
  DeviceMesh mesh;
  std::vector<StrategyEntry> strategies;
  std::vector<StageEntry> stages;
  /// `optimizer_shard: {enabled: true, threshold: BYTES}`: the threshold
  /// when enabled (64 KB unless given), else none.
  std::optional<int64_t> optimizerShardThreshold;
};

/// Parses a strategy file; every problem is emitted as an error located at
/// `path:line:col` through `ctx`'s diagnostic engine.
mlir::FailureOr<StrategySpec> parseStrategyFile(llvm::StringRef path,
                                                mlir::MLIRContext *ctx);
/// As above, from text already in memory (`name` is used in locations).
mlir::FailureOr<StrategySpec> parseStrategy(llvm::StringRef text,
                                            llvm::StringRef name,
                                            mlir::MLIRContext *ctx);

} // namespace autoshard

#endif // AUTOSHARD_IMPORT_STRATEGYFILE_H
