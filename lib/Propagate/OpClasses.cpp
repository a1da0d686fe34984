//===- OpClasses.cpp - Top-level ops that repeat each other ---------------===//
//
// See OpClass in PropagateGraph.h: ops that differ only in the values they
// read share a rule, a candidate list and part of their canonical hash.
//
//===----------------------------------------------------------------------===//

#include "PropagateGraph.h"

#include "autoshard/Propagate/RuleModels.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Region.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace autoshard::propagate {

namespace {

/// A cheap hash of part of what StructureMatcher compares: the bucket of
/// an op's class.
uint64_t hashStructure(Operation *op, uint64_t h, bool top) {
  auto mix = [&](uint64_t x) {
    h = (h ^ x) * 1099511628211ull;
    h ^= h >> 29;
  };
  mix(reinterpret_cast<uintptr_t>(op->getName().getAsOpaquePointer()));
  mix(reinterpret_cast<uintptr_t>(
      op->getRawDictionaryAttrs().getAsOpaquePointer()));
  mix((uint64_t(op->getNumOperands()) << 32) ^
      (uint64_t(op->getNumResults()) << 8) ^ op->getNumRegions());
  if (top) {
    mix(static_cast<uint64_t>(op->hashProperties()));
    for (Type t : op->getOperandTypes())
      mix(reinterpret_cast<uintptr_t>(t.getAsOpaquePointer()));
    for (Type t : op->getResultTypes())
      mix(reinterpret_cast<uintptr_t>(t.getAsOpaquePointer()));
  }
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &inner : block)
        h = hashStructure(&inner, h, /*top=*/false);
  return h;
}

/// Whether two ops are one class (see OpClass): compares them and their
/// regions op by op. Values defined inside must correspond; values from
/// outside may differ (as the operands may).
struct StructureMatcher {
  Operation *a, *b;
  /// Ops and blocks inside `a`, with their counterparts in `b`.
  SmallVector<std::pair<Operation *, Operation *>, 16> ops;
  SmallVector<std::pair<Block *, Block *>, 4> blocks;
  /// Set when the ops have something this matcher does not compare
  /// (successors, a use before its definition): they are then no class's
  /// members but their own.
  bool incomparable = false;

  StructureMatcher(Operation *a, Operation *b) : a(a), b(b) {}

  bool sameValue(Value x, Value y) {
    bool insideX = a->isAncestor(x.getParentRegion()->getParentOp());
    bool insideY = b->isAncestor(y.getParentRegion()->getParentOp());
    if (insideX != insideY)
      return false;
    if (!insideX)
      return true;
    if (auto argX = dyn_cast<BlockArgument>(x)) {
      auto argY = dyn_cast<BlockArgument>(y);
      if (!argY || argX.getArgNumber() != argY.getArgNumber())
        return false;
      for (auto [blockX, blockY] : blocks)
        if (blockX == argX.getOwner())
          return blockY == argY.getOwner();
    } else {
      auto resultX = cast<OpResult>(x);
      auto resultY = dyn_cast<OpResult>(y);
      if (!resultY || resultX.getResultNumber() != resultY.getResultNumber())
        return false;
      for (auto [opX, opY] : llvm::reverse(ops))
        if (opX == resultX.getOwner())
          return opY == resultY.getOwner();
    }
    incomparable = true;
    return false;
  }

  bool sameOp(Operation *x, Operation *y, bool top) {
    if (x->getNumSuccessors() || y->getNumSuccessors()) {
      incomparable = true;
      return false;
    }
    if (x->getName() != y->getName() ||
        x->getRawDictionaryAttrs() != y->getRawDictionaryAttrs() ||
        x->getNumOperands() != y->getNumOperands() ||
        x->getNumResults() != y->getNumResults() ||
        x->getNumRegions() != y->getNumRegions() ||
        !x->getName().compareOpProperties(x->getPropertiesStorage(),
                                          y->getPropertiesStorage()) ||
        !llvm::equal(x->getResultTypes(), y->getResultTypes()) ||
        !llvm::equal(x->getOperandTypes(), y->getOperandTypes()))
      return false;
    if (!top)
      for (auto [vx, vy] : llvm::zip_equal(x->getOperands(), y->getOperands()))
        if (!sameValue(vx, vy))
          return false;
    ops.push_back({x, y});
    for (auto [regionX, regionY] :
         llvm::zip_equal(x->getRegions(), y->getRegions())) {
      auto bx = regionX.begin(), by = regionY.begin();
      for (; bx != regionX.end() && by != regionY.end(); ++bx, ++by) {
        if (!llvm::equal(bx->getArgumentTypes(), by->getArgumentTypes()))
          return false;
        blocks.push_back({&*bx, &*by});
      }
      if (bx != regionX.end() || by != regionY.end())
        return false;
      for (auto [blockX, blockY] : llvm::zip_equal(regionX, regionY)) {
        auto ox = blockX.begin(), oy = blockY.begin();
        for (; ox != blockX.end() && oy != blockY.end(); ++ox, ++oy)
          if (!sameOp(&*ox, &*oy, /*top=*/false))
            return false;
        if (ox != blockX.end() || oy != blockY.end())
          return false;
      }
    }
    return true;
  }
};

} // namespace

OpClass &OpClasses::classOf(Operation *op) {
  // A rule that reads the op's users: the op is its own class.
  if (isGradientTranspose(op)) {
    classOfNode.push_back(classes.size());
    classes.emplace_back();
    classes.back().rep = op;
    return classes.back();
  }
  auto &bucket =
      buckets[hashStructure(op, 1469598103934665603ull, /*top=*/true)];
  bool comparable = true;
  for (unsigned c : bucket) {
    StructureMatcher matcher(classes[c].rep, op);
    if (matcher.sameOp(classes[c].rep, op, /*top=*/true)) {
      classOfNode.push_back(c);
      return classes[c];
    }
    if (matcher.incomparable) {
      comparable = false;
      break;
    }
  }
  if (comparable)
    bucket.push_back(classes.size());
  classOfNode.push_back(classes.size());
  classes.emplace_back();
  classes.back().rep = op;
  return classes.back();
}

} // namespace autoshard::propagate
