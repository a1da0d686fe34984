//===- Report.h - What propagation decided, as JSON -------------*- C++ -*-===//
//
// Accumulates the propagation pass's decisions (strategies, reshards and
// their collectives, predicted communication, compute and memory) and writes
// them as JSON (llvm::json) or, for "-", as a readable summary on stdout.
// The partition pass reports the same keys counted on the emitted ops.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LIB_PROPAGATE_REPORT_H
#define AUTOSHARD_LIB_PROPAGATE_REPORT_H

#include "autoshard/Analysis/ReshardPlanner.h"

#include "mlir/IR/Operation.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <string>
#include <vector>

namespace autoshard {

struct PropagationReport {
  std::string solver;
  bool optimal = true;
  /// The exact solver stopped at its budget (reported only when it did).
  bool solverBudgetExhausted = false;
  int64_t numOps = 0;
  int64_t numReshards = 0;
  std::map<std::string, int64_t> collectives;
  double commBytesPerDevice = 0.0;
  double commTimeUs = 0.0;
  double computeTimeUs = 0.0;
  double memoryBytesPerDevice = 0.0;
  /// Training steps (TrainingMemory.h): what memoryBytesPerDevice is made
  /// of. Zero for forward programs.
  double parameterBytesPerDevice = 0.0;
  double optimizerStateBytesPerDevice = 0.0;
  double gradientBytesPerDevice = 0.0;
  double activationBytesPerDevice = 0.0;
  /// memory_gib (cluster file) in bytes, and whether the plan is within it.
  double memoryBoundBytesPerDevice = 0.0;
  bool memoryFits = true;
  /// Set when the fastest plan did not fit and a slower one that does was
  /// taken (MemoryBound.cpp): the fastest plan's cost and bytes.
  bool memoryBounded = false;
  /// The values taking the most bytes per device in the plan (largest
  /// first), shown when a memory bound shaped the plan or was not met.
  static constexpr size_t kLargestValues = 5;
  std::vector<std::pair<std::string, double>> largestValues;
  double unboundedCostUs = 0.0;
  double unboundedMemoryBytesPerDevice = 0.0;
  /// The plan the multiplier search gave before the repair gave back what
  /// the bound did not need (MemoryRepair.cpp): its cost and bytes.
  double unrepairedCostUs = 0.0;
  double unrepairedMemoryBytesPerDevice = 0.0;
  /// Solver objective (compute + priced reshards), with each value of
  /// several uses charged its plan's reshards (ValuePlans.cpp): the cost of
  /// what the pass emits.
  double solverCostUs = 0.0;
  /// Wall time in the solver and the size of its graphs (summary only: the
  /// JSON stays deterministic).
  double solverTimeMs = 0.0;
  int64_t solverNodes = 0;
  /// Candidate strategies over the solver's nodes, and the distinct
  /// (type, source layout, target layout) reshards priced for them.
  int64_t numCandidates = 0;
  int64_t numPricedReshards = 0;
  /// Most threads pricing used (summary only: it depends on the machine).
  unsigned pricingThreads = 1;
  /// Whether addStrategy is called (only the JSON output lists strategies).
  bool wantStrategies = true;
  llvm::json::Array strategies;

  void addReshard(const ReshardPlan &plan, const DeviceMesh &mesh);
  /// Records an op's strategy: its operand and result layouts as text.
  void addStrategy(mlir::Operation *op,
                   llvm::ArrayRef<llvm::StringRef> operands,
                   llvm::ArrayRef<llvm::StringRef> results);
  llvm::json::Object toJSON() const;
  /// The same, listing `strategyList` as the strategies.
  llvm::json::Object toJSON(llvm::json::Array strategyList) const;
  /// Writes JSON to `path` (handing the strategies over to it), or a
  /// summary to stdout for "-".
  bool write(const std::string &path, std::string &error);
};

} // namespace autoshard

#endif // AUTOSHARD_LIB_PROPAGATE_REPORT_H
