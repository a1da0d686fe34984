//===- ShardingRule.h - Factor-based sharding rule of an op -----*- C++ -*-===//
//
// How an operation's tensors may be split, in Shardy's factor language: the
// op's iteration space is a list of factors (loop dims) with sizes and kinds;
// every operand/result dim is a list of factors, major to minor (a compound
// dim such as collapse [B,S,H] -> [B*S,H] has two). Assigning mesh axes to
// factors gives every tensor's layout at once:
//  - parallel factor split over axes A: every tensor with that factor is
//    split over A on the dim holding it;
//  - reduction factor split over A: the results are partial over A (with the
//    rule's reduction kind);
//  - need-replication factor: may not be split (e.g. the softmax dim, a
//    gather's indexed dim);
// A split is only representable on a compound dim when it falls on its
// major-most factor (the minor factors' shards would not be contiguous), or
// when every factor more major than the split one is split down to shards of
// size 1 (then the flattened shards are contiguous again).
// MLIR-free so the solver and its tests need no IR.
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_PROPAGATE_SHARDINGRULE_H
#define AUTOSHARD_PROPAGATE_SHARDINGRULE_H

#include "autoshard/Support/TensorLayout.h"

#include <optional>
#include <string>
#include <vector>

namespace autoshard {

enum class FactorKind { Parallel, Reduction, NeedReplication };

struct Factor {
  int64_t size = 1;
  FactorKind kind = FactorKind::Parallel;
  /// Shown in printed rules and diagnostics; "f<i>" when empty. Linalg rules
  /// name factors after their loop ("d0", "d1", ...) so they read like the
  /// op's indexing maps.
  std::string name;
};

/// Factors of each dim of one tensor: dims[d] = factor ids, major to minor.
using TensorFactors = std::vector<std::vector<int64_t>>;
/// Mesh axes assigned to each factor (major to minor).
using FactorAxes = std::vector<std::vector<int64_t>>;

struct ShardingRule {
  std::vector<Factor> factors;
  /// operandDims[i][d] = factors of operand i's dim d, major to minor. A dim
  /// with no factor (size-1 broadcast dim) is an empty list. Non-tensor
  /// operands (scalars, indices, !tosa.shape) have rank 0.
  std::vector<TensorFactors> operandDims;
  std::vector<TensorFactors> resultDims;
  /// Kind of the pending reduction a split reduction factor leaves.
  ReductionKind reduction = ReductionKind::Sum;
  /// Operands (e.g. destination-style inits) that do not constrain the
  /// strategy: they take the result's layout and carry no data we read.
  /// Inits whose value the op does read (a matmul accumulating into a fill)
  /// are ordinary operands, still tied to their result (tiedResult).
  std::vector<bool> operandIsInit;
  /// tiedResult[i] = the result whose layout operand i takes, including its
  /// pending partial reduction (destination-style outs: a matmul's
  /// accumulator must be partial exactly like its result, or the sum would
  /// count it once per device); -1 when untied. Empty means no operand is
  /// tied.
  std::vector<int64_t> tiedResult;
  /// Work per point of the iteration space (a multiply-add is 2). Zero for
  /// pure data movement (reshape, slice, transpose, gather), whose estimate
  /// is the local elements of its results instead.
  double flopsPerPoint = 1.0;

  int64_t getNumOperands() const {
    return static_cast<int64_t>(operandDims.size());
  }
  int64_t getNumResults() const {
    return static_cast<int64_t>(resultDims.size());
  }
  bool isInit(int64_t operand) const {
    return operand < static_cast<int64_t>(operandIsInit.size()) &&
           operandIsInit[operand];
  }
  int64_t getTiedResult(int64_t operand) const {
    return operand < static_cast<int64_t>(tiedResult.size())
               ? tiedResult[operand]
               : -1;
  }

  /// Adds a factor and returns its id.
  int64_t addFactor(int64_t size, FactorKind kind = FactorKind::Parallel,
                    std::string name = "");
  /// "d2" / "f3".
  std::string getFactorName(int64_t f) const;
  /// "reduction factor d2 (size 64)" — used in diagnostics.
  std::string describeFactor(int64_t f) const;
  /// Size of a tensor dim: the product of its factors (1 when empty).
  int64_t getDimSize(const TensorFactors &dims, int64_t d) const;

  /// Checks the rule is well formed: factor ids in range, positive sizes,
  /// no factor twice in one tensor, init/tie vectors of the right size.
  /// Returns an error or "".
  std::string verify() const;

  /// Layouts of every operand and result for an assignment of mesh axes to
  /// factors (`factorAxes[f]` major to minor). Returns false and sets
  /// `error` when the assignment is not representable (axis reused, split on
  /// a need-replication factor, split on a non-major factor of a compound
  /// dim, size not divisible).
  bool getLayouts(const DeviceMesh &mesh,
                  const std::vector<std::vector<int64_t>> &factorAxes,
                  std::vector<TensorLayout> &operandLayouts,
                  std::vector<TensorLayout> &resultLayouts,
                  std::string &error) const;

  /// Printable form, e.g.
  /// "factors: d0=8 par, d1=16 par, d2=4 red(sum); operands: [d0][d2],
  ///  [d2][d1], init [d0][d1]; results: [d0][d1]".
  std::string str() const;
  /// "d0->[dp], d2->[mp]" (only split factors; "none" when nothing is).
  std::string strFactorAxes(const DeviceMesh &mesh,
                            const FactorAxes &factorAxes) const;
};

/// A rule whose every static tensor dim is its own need-replication factor:
/// the op runs replicated. `operandShapes`/`resultShapes` hold -1 for
/// dynamic dims (those get no factor); a non-tensor operand has rank 0.
ShardingRule
makeReplicatedRule(const std::vector<std::vector<int64_t>> &operandShapes,
                   const std::vector<std::vector<int64_t>> &resultShapes);

/// Rule of a row-major reshape from `source` to `result` (static shapes of
/// equal element count): the common refinement of both shapes into factors,
/// so that a split of a dim's major part passes through (e.g. [B*S, H] split
/// on rows ↔ [B, S, H] split on B). Where the two shapes share no further
/// refinement (e.g. [6, 4] -> [4, 6] after the common factor 2) the rest of
/// each dim is a need-replication factor. Operand 0 is the source; further
/// operands (a shape tensor) are replicated with the given ranks.
ShardingRule
buildReshapeRule(const std::vector<int64_t> &source,
                 const std::vector<int64_t> &result,
                 const std::vector<int64_t> &extraOperandRanks = {});

/// Rule of an elementwise op with numpy/TOSA-style broadcasting: operands of
/// the result's rank share its factors except on size-1 dims of a larger
/// result dim; operands of another rank (scalars, a tosa.mul shift) are
/// replicated.
ShardingRule
buildElementwiseRule(const std::vector<std::vector<int64_t>> &operandShapes,
                     const std::vector<int64_t> &resultShape);

/// One way to run an op: the mesh axes of each factor, and the layouts that
/// assignment gives every operand and result.
struct Candidate {
  FactorAxes factorAxes;
  std::vector<TensorLayout> operandLayouts;
  std::vector<TensorLayout> resultLayouts;
  /// Per-device work estimate (estimateFlops).
  double flops = 0.0;

  /// Product of the sizes of the mesh axes the candidate splits factors over.
  int64_t getParallelism(const DeviceMesh &mesh) const;
};

struct EnumerateOptions {
  /// At most this many candidates are returned (the fully replicated one is
  /// always among them). 0: no bound.
  int64_t maxCandidates = 256;
  /// At most this many mesh axes on one factor. 0: no bound.
  int64_t maxAxesPerFactor = 0;
  /// Whether reduction factors may be split (leaving partial results).
  bool allowReductionSplits = true;
  /// Whether candidates carry their factor axes (Candidate::factorAxes;
  /// empty otherwise). The propagation pass reads only the layouts and the
  /// work estimate, and these lists are a third of a candidate's
  /// allocations.
  bool withFactorAxes = true;
};

/// Every representable assignment of mesh axes to factors (each axis to at
/// most one factor; several axes on a factor in every major→minor order),
/// deduplicated by the layouts they produce. Deterministic order: most
/// parallel first (product of the used axes' sizes, descending), ties in
/// generation order (axis 0 first, factor ids ascending); the replicated
/// candidate is always present.
std::vector<Candidate>
enumerateCandidates(const ShardingRule &rule, const DeviceMesh &mesh,
                    const EnumerateOptions &options = {});

/// Per-device work of the op under an assignment: flopsPerPoint times the
/// product of every factor's local size (matmul: 2·M·N·K / splits;
/// elementwise: the local elements); for data movement (flopsPerPoint == 0)
/// the local elements of the results.
double estimateFlops(const ShardingRule &rule, const DeviceMesh &mesh,
                     const FactorAxes &factorAxes);

/// The factor assignment implied by user layouts. `operands[i]` /
/// `results[i]` may be null (not given by the user; a missing tail counts as
/// not given). Every factor takes the axes of the first tensor that holds it;
/// a compound dim's axes are dealt out major factor first. Fails with a
/// message naming the operand and the reason (e.g. "operand #1 splits
/// reduction factor d2 (size 64) over ['mp'] but operand #0 does not"), when
/// a given layout is partial, uneven, of the wrong rank, splits a
/// need-replication factor, does not fall on whole factors, disagrees with
/// another tensor, or differs from the layout the assignment implies.
bool inferFactorAxes(const ShardingRule &rule, const DeviceMesh &mesh,
                     const std::vector<const TensorLayout *> &operands,
                     const std::vector<const TensorLayout *> &results,
                     Candidate &out, std::string &error);

} // namespace autoshard

#endif // AUTOSHARD_PROPAGATE_SHARDINGRULE_H
