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
// major-most factor (the minor factors' shards would not be contiguous).
// MLIR-free so the solver and its tests need no IR.
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_PROPAGATE_SHARDINGRULE_H
#define AUTOSHARD_PROPAGATE_SHARDINGRULE_H

#include "autoshard/Support/TensorLayout.h"

#include <string>
#include <vector>

namespace autoshard {

enum class FactorKind { Parallel, Reduction, NeedReplication };

struct Factor {
  int64_t size = 1;
  FactorKind kind = FactorKind::Parallel;
};

struct ShardingRule {
  std::vector<Factor> factors;
  /// operandDims[i][d] = factors of operand i's dim d, major to minor. A dim
  /// with no factor (size-1 broadcast dim) is an empty list.
  std::vector<std::vector<std::vector<int64_t>>> operandDims;
  std::vector<std::vector<std::vector<int64_t>>> resultDims;
  /// Kind of the pending reduction a split reduction factor leaves.
  ReductionKind reduction = ReductionKind::Sum;
  /// Operands (e.g. destination-style inits) that do not constrain the
  /// strategy: they take the result's layout and carry no data we read.
  std::vector<bool> operandIsInit;

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
};

} // namespace autoshard

#endif // AUTOSHARD_PROPAGATE_SHARDINGRULE_H
