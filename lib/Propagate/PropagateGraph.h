//===- PropagateGraph.h - The pass's graph of a function --------*- C++ -*-===//
//
// What the phases of --dist-propagate share (FunctionPropagation.h): the
// graph's nodes (function arguments, top-level ops, function results and
// fan-outs), where an op's operands come from, the classes of repeated ops,
// and helpers on layouts and hashes.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LIB_PROPAGATE_PROPAGATEGRAPH_H
#define AUTOSHARD_LIB_PROPAGATE_PROPAGATEGRAPH_H

#include "autoshard/Dialect/Dist/IR/DistOps.h"
#include "autoshard/Support/TensorLayout.h"
#include "autoshard/Propagate/ShardingRule.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace autoshard::propagate {

using mlir::Operation;
using mlir::Value;
using llvm::SmallVector;
using llvm::StringRef;

/// A key that tells layouts apart, uneven sizes included.
inline std::string layoutKey(const TensorLayout &l, const DeviceMesh &mesh) {
  std::string key = l.str(mesh);
  for (const auto &sizes : l.unevenSizes) {
    key += "|";
    for (int64_t s : sizes)
      key += std::to_string(s) + ",";
  }
  return key;
}

inline TensorLayout dropPartial(TensorLayout l) {
  l.partialAxes.clear();
  l.partialKind = autoshard::ReductionKind::Sum;
  return l;
}

/// FNV-1a: a hash that is the same in every run (node keys must be).
inline uint64_t fnv(uint64_t h, StringRef s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

inline std::vector<int64_t> getShape(mlir::Type type) {
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type))
    return std::vector<int64_t>(tensor.getShape().begin(),
                                tensor.getShape().end());
  return {};
}

/// fnv(h, std::to_string(x)) without building the string.
inline uint64_t fnvDecimal(uint64_t h, uint64_t x) {
  char buf[24];
  char *end = buf + sizeof(buf), *p = end;
  do {
    *--p = static_cast<char>('0' + x % 10);
    x /= 10;
  } while (x);
  return fnv(h, StringRef(p, end - p));
}

/// TensorLayout::operator== without its copies (it runs once per use): the
/// partial axes as a set, the kind only when partial, uneven lists that are
/// all empty as none.
inline bool sameLayout(const TensorLayout &a, const TensorLayout &b) {
  if (&a == &b)
    return true;
  if (a.dimAxes != b.dimAxes || a.partialAxes.size() != b.partialAxes.size())
    return false;
  if (!a.partialAxes.empty()) {
    if (a.partialKind != b.partialKind)
      return false;
    if (a.partialAxes != b.partialAxes) {
      SmallVector<int64_t, 4> pa(a.partialAxes.begin(), a.partialAxes.end());
      SmallVector<int64_t, 4> pb(b.partialAxes.begin(), b.partialAxes.end());
      llvm::sort(pa);
      llvm::sort(pb);
      if (pa != pb)
        return false;
    }
  }
  auto anyUneven = [](const TensorLayout &l) {
    return llvm::any_of(l.unevenSizes,
                        [](const auto &sizes) { return !sizes.empty(); });
  };
  bool unevenA = anyUneven(a), unevenB = anyUneven(b);
  if (!unevenA && !unevenB)
    return true;
  return unevenA == unevenB && a.unevenSizes == b.unevenSizes;
}

using CandidateList = std::shared_ptr<const std::vector<Candidate>>;

inline CandidateList makeList(std::vector<Candidate> cands) {
  return std::make_shared<const std::vector<Candidate>>(std::move(cands));
}

/// One node of the graph: a function argument, a top-level op, or a
/// function result (the value handed to func.return).
struct Node {
  /// Fanout: the layout a value read by several ops is resharded to once
  /// (see propagateFunction).
  enum Kind { Arg, Op, Result, Fanout } kind = Op;
  /// The value of a Fanout node.
  Value value;
  Operation *op = nullptr;
  unsigned index = 0; // argument / result number
  /// Candidates, shared by every node with the same rule (enumerated once)
  /// or, for fan-outs, the same layouts; user constraints and function
  /// results have their own.
  CandidateList list;
  const std::vector<Candidate> &cands() const { return *list; }
  /// Whether a user constraint (strategy or annotation) fixed this node.
  bool userFixed = false;
  /// Whether the op is layout-free (see isLayoutFree).
  bool layoutFree = false;
  unsigned solverId = 0;
  /// Where the sources of the op's operands start in the operand table.
  unsigned firstOperand = 0;
  /// The chosen candidate, after the solution. Its layouts are the node's,
  /// except where the absorption of layout-free producers overrode them:
  /// then the override lists (pointers into candidate lists, which outlive
  /// the nodes) hold every slot.
  const Candidate *chosen = nullptr;
  SmallVector<const TensorLayout *, 0> operandOverride, resultOverride;

  const TensorLayout &operandLayout(unsigned i) const {
    return operandOverride.empty() ? chosen->operandLayouts[i]
                                   : *operandOverride[i];
  }
  const TensorLayout &resultLayout(unsigned i) const {
    return resultOverride.empty() ? chosen->resultLayouts[i]
                                  : *resultOverride[i];
  }
  unsigned getNumOperandLayouts() const {
    return chosen->operandLayouts.size();
  }
  unsigned getNumResultLayouts() const { return chosen->resultLayouts.size(); }
  /// Makes slot `i` of the operands (or results) `l`.
  void setLayout(bool results, unsigned i, const TensorLayout *l) {
    auto &slots = results ? resultOverride : operandOverride;
    if (slots.empty()) {
      for (const TensorLayout &own :
           results ? chosen->resultLayouts : chosen->operandLayouts)
        slots.push_back(&own);
    }
    slots[i] = l;
  }
};

/// Where an operand of a graph op comes from, found once: the node and
/// result slot that produce it, when it is a graph value.
struct OperandSource {
  unsigned node = 0, slot = 0;
  bool graph = false;
  bool tensor = false;
};

/// Top-level ops that differ only in the values they read (same name,
/// attributes, properties, operand and result types, and regions up to the
/// values they read from outside) form one class: the layers of a model
/// repeat each other's ops. A class shares one sharding rule and candidate
/// list (a rule reads an op's structure, never the values of its operands;
/// the one rule that reads the op's users, isGradientTranspose's, makes its
/// op a class of its own) and the op's part of the canonical hash.
struct OpClass {
  Operation *rep = nullptr;
  bool hasPrefix = false;
  uint64_t prefix = 0;
  bool hasRule = false;
  ShardingRule rule;
  std::string noRuleReason;
  CandidateList cands;
  dist::StrategyAttr strategy;
};

/// The classes of a function's top-level ops (see OpClass), found as the
/// graph is built (OpClasses.cpp).
struct OpClasses {
  std::deque<OpClass> classes;
  llvm::DenseMap<uint64_t, SmallVector<unsigned, 1>> buckets;
  /// The class of each node (0 for nodes that are not ops).
  std::vector<unsigned> classOfNode;

  /// The class of `op`, created when it is the first of its class; records
  /// it as the next node's class.
  OpClass &classOf(Operation *op);
};

} // namespace autoshard::propagate

#endif // AUTOSHARD_LIB_PROPAGATE_PROPAGATEGRAPH_H
