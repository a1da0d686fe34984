//===- FunctionPropagation.h - Propagation of one function ------*- C++ -*-===//
//
// --dist-propagate on one function, as phases that run in this order (run(),
// in Propagate.cpp), each in its own file:
//
//  1. graph build (GraphBuild.cpp): one node per function argument, per
//     top-level op and per function result, where every operand comes from,
//     the nodes' canonical keys, the uses that become edges, and a fan-out
//     node for every value read by several ops;
//  2. candidate enumeration (Candidates.cpp): each node's candidate
//     strategies, from its op's sharding rule or its user constraint;
//  3. pricing (CostGraph.cpp): the solver graph (node costs, edges whose
//     tables hold the reshard planner's times, user annotations as
//     restrictions), every distinct reshard priced once (Pricing.h);
//  4. solve (SolvePhase.cpp): the solver picks one candidate per node
//     (within the device's memory, MemoryBound.cpp); layout-free producers
//     follow their consumer; each value with several
//     uses gets its plan of reshards (ValuePlans.cpp);
//  5. write-back (WriteBack.cpp, Reshards.cpp): strategies, layouts and the
//     reshards the choice needs;
//  6. report (ReportPhase.cpp): strategies, compute and memory.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LIB_PROPAGATE_FUNCTIONPROPAGATION_H
#define AUTOSHARD_LIB_PROPAGATE_FUNCTIONPROPAGATION_H

#include "Pricing.h"
#include "PropagateGraph.h"
#include "Report.h"

#include "autoshard/Analysis/CostModel.h"
#include "autoshard/Analysis/ReshardPlanner.h"
#include "autoshard/Dialect/Dist/IR/DistOps.h"
#include "autoshard/Propagate/Solver.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"

#include <map>
#include <unordered_map>

namespace autoshard::propagate {

/// The pass's options that the phases read.
struct PropagateOptions {
  SolverKind solver = SolverKind::DP;
  /// SolverOptions::maxSearchNodes for `exact` (0: its default).
  uint64_t exactBudget = 0;
  /// A remark at every reshard (see Reshards.cpp).
  bool explain = false;
};

class FunctionPropagation {
public:
  FunctionPropagation(mlir::func::FuncOp func, dist::MeshAttr meshAttr,
                      const CostModel &model, ReshardPlanner &planner,
                      PropagationReport &report,
                      const PropagateOptions &options);

  /// Runs the phases; the function then meets the propagation contract.
  mlir::LogicalResult run();

private:
  //===--- 1. Graph build (GraphBuild.cpp) --------------------------------===//
  mlir::LogicalResult buildGraph();
  void addArgumentNodes();
  mlir::LogicalResult addOpNodes();
  void addResultNodes();
  void computeKeys();
  void collectUses();
  void addFanoutNodes();
  /// Which node defines `v`, and which of its result slots it is, when it
  /// is a value of the graph.
  OperandSource sourceOf(Value v) const;
  /// The sources of a graph op's operands (Node::firstOperand).
  llvm::ArrayRef<OperandSource> sourcesOf(const Node &n) const;
  /// Whether the operand with source `src` is the only use of a
  /// layout-free producer's result.
  bool readsLayoutFree(const OperandSource &src, Value v) const;

  //===--- 2. Candidates (Candidates.cpp) ---------------------------------===//
  CandidateList candidatesOf(const ShardingRule &rule);
  CandidateList argumentCandidates(mlir::Type type);
  /// An op's candidates: its user constraint's (setting `userFixed`), else
  /// its class's rule's.
  mlir::FailureOr<CandidateList> opCandidates(Operation &op, OpClass &cls,
                                              bool layoutFree, bool &userFixed);
  /// A function result's: its producer's layouts, partial sums resolved.
  CandidateList resultCandidates(unsigned pn, unsigned slot, mlir::Type type);
  /// A fan-out node's, over the layout lists of its producer and readers.
  CandidateList fanoutCandidates(const SmallVector<unsigned, 8> &lists);
  /// Interned layout ids of one slot of a node's candidates, as a list id.
  unsigned idsOf(unsigned node, unsigned slot, bool result);

  //===--- 3. Pricing (CostGraph.cpp) -------------------------------------===//
  void buildSolverGraph();
  void addNodeCosts();
  void addUseEdges();
  void addHaloPenaltyEdges();
  void addTiedEdges();
  void addAnnotationRestrictions();
  void addUseEdge(unsigned pn, unsigned slot, unsigned cn, unsigned operand,
                  mlir::Type type, bool resolveOnly);

  //===--- 4. Solve (SolvePhase.cpp) --------------------------------------===//
  mlir::LogicalResult solveGraph();
  void absorbLayoutFree();
  /// Records `choice` on the nodes (layout-free producers absorbed).
  void applySolution(const std::vector<unsigned> &choice);

  //===--- 4a. Memory capacity (MemoryBound.cpp) --------------------------===//
  /// Replaces `result` by the fastest plan found within memory_gib, or
  /// fails with a one-line error.
  mlir::LogicalResult boundMemory(const SolverOptions &sopts,
                                  SolverResult &result);
  /// Gives the bounded plan `x` (of solver cost `cost`) back the choices of
  /// the `fastest` plan, region by region, while planMemory() stays within
  /// `bound`; `bytes` is x's planMemory() (MemoryRepair.cpp).
  void repairMemory(
      const std::vector<unsigned> &fastest,
      const std::vector<std::shared_ptr<const std::vector<double>>>
          &bytesOfNode,
      double bound, double bytes, std::vector<unsigned> &x, double &cost);
  /// Bytes per device, per candidate of node `i`, of the layout-free values
  /// that take its operand layouts (absorbLayoutFree): a matmul's zero fill
  /// and its tensor.empty (MemoryRepair.cpp).
  std::vector<double> absorbedBytes(unsigned i);
  /// The chosen plan's bytes per device (what the report counts).
  double planMemory();
  /// Every value's bytes per device at its chosen layout.
  double allValuesMemory();
  /// Calls `fn(value, bytes)` for every value allValuesMemory counts.
  void forEachValueMemory(llvm::function_ref<void(Value, double)> fn);
  const TensorLayout *chosenLayout(Value v) const;
  /// Bytes per device of each candidate's results at node `i`.
  std::vector<double> candidateBytes(unsigned i);
  /// Bytes per device of a value of `type` at layout `l`.
  double tensorBytes(const TensorLayout &l, mlir::Type type);

  //===--- 4b. Value plans (ValuePlans.cpp) -------------------------------===//
  /// Plans every value with several uses (see ValuePlans.cpp); returns what
  /// that changes in the solver's objective.
  double planValues();
  /// planTime, free between equal layouts.
  double stepTime(Value v, const TensorLayout &from, const TensorLayout &to);

  //===--- 5. Write-back (WriteBack.cpp, Reshards.cpp) --------------------===//
  mlir::LogicalResult writeBack();
  void writeArgumentLayouts();
  void writeResultLayouts();
  void writeStrategies();
  dist::LayoutAttr layoutAttr(const TensorLayout &l);
  dist::StrategyAttr strategyOf(const Node &n);
  void setStrategy(Operation *op, dist::StrategyAttr strategy);
  /// Makes `use` read `want`, through reshards where it needs them.
  mlir::LogicalResult fixUse(mlir::OpOperand &use, const OperandSource &src,
                             const TensorLayout &want,
                             const Node &consumerNode);
  mlir::FailureOr<Value> getReshard(Value source, const TensorLayout &have,
                                    const TensorLayout &want,
                                    mlir::OpOperand &use,
                                    const Node &producerNode,
                                    const Node &consumerNode);
  std::string explainText(Operation *consumer, unsigned operand,
                          const Node &producerNode,
                          const Node &consumerNode) const;
  double planTime(Value v, const TensorLayout &from, const TensorLayout &to);

  //===--- 6. Report (ReportPhase.cpp) ------------------------------------===//
  void reportStrategies();
  mlir::LogicalResult reportInputReshards();
  void reportInputCollectives();
  void reportMemory();
  llvm::StringRef layoutText(const TensorLayout &l);

  // The function and what the pass gave.
  mlir::func::FuncOp func;
  mlir::MLIRContext *ctx;
  dist::MeshAttr meshAttr;
  const DeviceMesh dmesh;
  const CostModel &model;
  ReshardPlanner &planner;
  PropagationReport &report;
  PropagateOptions options;
  mlir::Block &body;
  mlir::func::ReturnOp returnOp;

  // The graph (phase 1).
  std::vector<Node> nodes;
  llvm::DenseMap<Operation *, unsigned> opNode;
  llvm::DenseMap<Value, unsigned> fanoutOf;
  std::vector<OperandSource> operandSources;
  OpClasses classes;
  /// Arguments first, then ops [firstOpNode, firstResult), then results,
  /// then fan-outs.
  unsigned firstOpNode = 0, firstResult = 0;
  /// Canonical hashes by node (the solver's keys).
  std::vector<uint64_t> hashes;
  /// Uses that become edges, grouped by value.
  struct EdgeUse {
    mlir::OpOperand *use;
    unsigned pn, slot, cn;
  };
  std::vector<EdgeUse> edgeUses;
  llvm::MapVector<Value, SmallVector<unsigned, 2>> usesOfValue;

  // Candidates (phase 2).
  std::unordered_map<std::string, CandidateList> candCache;
  llvm::DenseMap<mlir::Type, CandidateList> argCands;
  llvm::DenseMap<mlir::Attribute, CandidateList> annotateCands;
  llvm::DenseMap<std::pair<const void *, unsigned>, unsigned> slotLists;
  std::map<SmallVector<unsigned, 8>, CandidateList> fanoutLists;

  // Pricing and solution (phases 3, 4).
  Pricing pricing;
  SolverGraph graph;

  /// Values whose readers take some layouts from the fan-out's shared one
  /// (phase 4b).
  struct ValuePlan {
    /// The shared layout, made once from the producer's.
    const TensorLayout *shared = nullptr;
    /// The interned layouts readers take from it.
    SmallVector<unsigned, 4> fromShared;
  };
  llvm::DenseMap<Value, ValuePlan> valuePlans;

  llvm::DenseMap<std::pair<const void *, const void *>, double> bytesOf;
  /// A training step: its gradients and activations (MemoryBound.cpp).
  bool training = false;
  llvm::DenseSet<Value> keptValues;

  // Write-back and report (phases 5, 6).
  llvm::DenseMap<const TensorLayout *, dist::LayoutAttr> layoutAttrs;
  llvm::DenseMap<std::pair<unsigned, unsigned>, dist::LayoutAttr>
      layoutAttrsById;
  SmallVector<dist::LayoutAttr> returnLayouts;
  std::map<std::pair<void *, unsigned>, Value> reshards;
  llvm::DenseMap<const Candidate *, dist::StrategyAttr> strategies;
  llvm::DenseMap<std::pair<const void *, const void *>, mlir::DictionaryAttr>
      withStrategy;
  llvm::DenseMap<const void *, bool> strategyIsInherent;
  std::vector<std::string> layoutTexts;
};

} // namespace autoshard::propagate

#endif // AUTOSHARD_LIB_PROPAGATE_FUNCTIONPROPAGATION_H
