//===- RuleModels.h - Sharding rules of upstream ops ------------*- C++ -*-===//
//
// External models of ShardingRuleOpInterface for linalg, tensor, tosa, arith
// and math ops, and the IR-side entry points propagation uses: the rule of
// any op (replicated when it has none) and the check of a user strategy
// against a rule.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_PROPAGATE_RULEMODELS_H
#define AUTOSHARD_PROPAGATE_RULEMODELS_H

#include "autoshard/Propagate/ShardingRule.h"
#include "autoshard/Propagate/ShardingRuleInterface.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace autoshard {
namespace dist {
class StrategyAttr;
} // namespace dist

/// Attaches ShardingRuleOpInterface to every supported upstream op.
void registerShardingRuleModels(mlir::DialectRegistry &registry);
/// Per dialect (called by registerShardingRuleModels).
void registerLinalgShardingRuleModels(mlir::DialectRegistry &registry);
void registerTensorShardingRuleModels(mlir::DialectRegistry &registry);
void registerTosaShardingRuleModels(mlir::DialectRegistry &registry);
void registerArithShardingRuleModels(mlir::DialectRegistry &registry);

/// The op's rule; when it has none (no interface, or the interface fails) a
/// rule that keeps every tensor replicated, with the reason in `why` (which
/// is left empty when the op has a real rule). Propagation emits `why` as a
/// remark.
ShardingRule getRuleOrReplicated(mlir::Operation *op, std::string &why);

/// Lets a pending partial sum pass through `op`, an op linear in operand
/// `operand`: a sum-reduction factor that no dim holds, with that operand
/// tied to result 0, so that split over axes A both are partial over A.
/// Nothing when the module names no mesh.
void addPartialSumPassThrough(ShardingRule &rule, mlir::Operation *op,
                              unsigned operand);

/// Whether `op` is a backward transpose whose readers are all backward pads
/// (a weight's gradient on its way to an optimizer-shard pad): its rule
/// passes a partial sum through (RulesLinalg.cpp). That rule reads the op's
/// users, which two ops of one class (OpClasses.cpp) need not share.
bool isGradientTranspose(mlir::Operation *op);

/// Finds the candidate of `rule` whose layouts are the user's (`strategy`'s
/// operand layouts, and its result layouts when given; destination-style
/// inits may be omitted). On failure emits a located error at `op` naming
/// the operand and why it does not fit (e.g. "operand #1 splits reduction
/// factor d2 (size 64) over ['mp'] but operand #0 does not") and returns
/// failure. `mesh` is the mesh propagation works on; the strategy must be on
/// the same one.
mlir::LogicalResult matchUserStrategy(mlir::Operation *op,
                                      dist::StrategyAttr strategy,
                                      const ShardingRule &rule,
                                      const DeviceMesh &mesh, Candidate &out);

/// Static shape of a ranked tensor type (-1 for dynamic dims); empty for any
/// other type (treated as rank 0 by the rules).
std::vector<int64_t> getShapeForRule(mlir::Type type);
/// Bytes per element of a tensor (or scalar) type; index and other types
/// without a width count as 8, as the runtime stores them.
int64_t getElemBytes(mlir::Type type);
/// Whether every tensor operand and result of `op` has a static shape;
/// otherwise sets `why`.
bool hasStaticTensorShapes(mlir::Operation *op, std::string &why);
/// The elementwise (numpy-broadcasting) rule of an op with one ranked tensor
/// result over its operand and result shapes; fails with `why` otherwise
/// (scalar results, dynamic shapes).
mlir::FailureOr<ShardingRule> getElementwiseRule(mlir::Operation *op,
                                                 std::string &why);

/// The external model every elementwise op of every dialect shares. Operands
/// of the result's rank broadcast their size-1 dims; others (tosa.mul's
/// shift, zero points) stay whole.
template <typename OpTy>
struct ElementwiseRuleModel
    : public ShardingRuleOpInterface::ExternalModel<ElementwiseRuleModel<OpTy>,
                                                    OpTy> {
  mlir::FailureOr<ShardingRule> getShardingRule(mlir::Operation *op,
                                                std::string &why) const {
    return getElementwiseRule(op, why);
  }
};

} // namespace autoshard

#endif // AUTOSHARD_PROPAGATE_RULEMODELS_H
