//===- Recompute.cpp - Recomputing activations in the backward ------------===//
//
// MindSpore's recompute on the built training step: a selected forward op
// whose result the backward (or the loss) reads is cloned right before the
// first such read, and the backward reads the clone; the forward keeps the
// original. A clone's operands produced by other selected forward ops are
// clones too (a chain of recomputed ops is recomputed as a chain, down to
// the values that are kept: arguments and unselected ops' results), and so
// are the ops that carry no data of their own (tensor.empty, arith.constant,
// linalg.fill), which are never kept for a clone. Clones carry
// dist.phase = "backward" and dist.recompute, so the report counts what they
// produce as backward temporaries, not activations; propagation shards them
// like any op.
//
// Selection (the pass's `recompute` option):
//   none          nothing beyond the marked ops (also the empty string)
//   all           every forward op that produces a float tensor, except the
//                 no-data ops above (cloned along wherever a clone needs them)
//   ops=GLOB,...  forward ops whose name (`linalg.generic`), `dist.name` or
//                 location name (an ONNX node: `/layers.0/gelu/Erf`)
//                 matches one of the globs (llvm::GlobPattern); each glob must
//                 match some forward op
// plus, always, forward ops carrying the unit attribute `dist.recompute`
// (strategy files' `recompute: true`). Only ops without memory effects are
// recomputed (a marked op with effects is an error; a glob or `all` skips
// them); an op whose results no forward op reads (output 0, read by the loss
// only) is not: its value is read right where it is made. After the pass
// `dist.recompute` marks the clones only.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Train/Recompute.h"

#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/GlobPattern.h"

using namespace mlir;

namespace {

constexpr StringLiteral kPhaseAttr = "dist.phase";
constexpr StringLiteral kRecomputeAttr = "dist.recompute";

StringRef phaseOf(Operation *op) {
  if (auto phase = op->getAttrOfType<StringAttr>(kPhaseAttr))
    return phase.getValue();
  return "";
}

/// The parsed `recompute` option.
struct Selection {
  bool all = false;
  SmallVector<std::pair<std::string, llvm::GlobPattern>> globs;
};

LogicalResult parseSpec(func::FuncOp step, StringRef spec, Selection &sel) {
  StringRef s = spec.trim();
  if (s == "none" || s.empty())
    return success();
  if (s == "all") {
    sel.all = true;
    return success();
  }
  if (!s.consume_front("ops="))
    return step.emitError("dist-training-step: recompute '")
           << spec << "' is not 'none', 'all' or 'ops=GLOB,...'";
  SmallVector<StringRef> parts;
  s.split(parts, ',');
  for (StringRef part : parts) {
    part = part.trim();
    if (part.empty())
      return step.emitError("dist-training-step: recompute '")
             << spec << "' has an empty glob";
    llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(part);
    if (!glob)
      return step.emitError("dist-training-step: recompute glob '")
             << part << "': " << llvm::toString(glob.takeError());
    sel.globs.emplace_back(part.str(), std::move(*glob));
  }
  return success();
}

/// The strings a glob is matched against: the op's name, its dist.name and
/// every name in its location.
SmallVector<std::string> matchTexts(Operation *op) {
  SmallVector<std::string> texts = {op->getName().getStringRef().str()};
  if (auto name = op->getAttrOfType<StringAttr>("dist.name"))
    texts.push_back(name.str());
  op->getLoc()->walk([&](Location loc) {
    if (auto named = dyn_cast<NameLoc>(loc))
      texts.push_back(named.getName().str());
    return WalkResult::advance();
  });
  return texts;
}

/// Ops that hold no data of their own: a clone that reads one gets a clone
/// of it, not the forward's value kept alive.
bool isNoData(Operation *op) {
  return isa<tensor::EmptyOp, arith::ConstantOp, linalg::FillOp>(op);
}

bool hasTensorResult(Operation *op, bool floatOnly) {
  return llvm::any_of(op->getResultTypes(), [&](Type t) {
    return floatOnly ? autoshard::vjp::isFloatTensor(t) : isa<RankedTensorType>(t);
  });
}

/// Clones forward ops for the backward, each once, with its selected and
/// no-data producers cloned first.
struct Recomputer {
  const DenseSet<Operation *> &forward;
  const DenseSet<Operation *> &selected;
  IRMapping clones;
  DenseSet<Operation *> cloned;

  bool clonable(Value v) const {
    Operation *def = v.getDefiningOp();
    return def && forward.contains(def) &&
           (selected.contains(def) || isNoData(def));
  }

  /// What `op` reads: its operands and the values its regions use from
  /// above.
  static SmallVector<Value> inputsOf(Operation *op) {
    SmallVector<Value> inputs(op->getOperands());
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(op->getRegions(), above);
    llvm::append_range(inputs, above);
    return inputs;
  }

  /// The clone of `v`'s producer, made at `b`'s insertion point if there is
  /// none yet, with the producers it needs that have none; the new clones
  /// are made in the forward's order (a chain may be the whole forward: no
  /// recursion).
  Value get(OpBuilder &b, Value v) {
    SmallVector<Operation *> todo = {v.getDefiningOp()};
    llvm::SetVector<Operation *> needed;
    while (!todo.empty()) {
      Operation *op = todo.pop_back_val();
      if (cloned.contains(op) || !needed.insert(op))
        continue;
      for (Value in : inputsOf(op))
        if (clonable(in))
          todo.push_back(in.getDefiningOp());
    }
    SmallVector<Operation *> order = needed.takeVector();
    llvm::sort(order, [](Operation *x, Operation *y) {
      return x->isBeforeInBlock(y);
    });
    for (Operation *op : order) {
      Operation *copy = b.clone(*op, clones);
      copy->setAttr(kPhaseAttr, b.getStringAttr("backward"));
      copy->setAttr(kRecomputeAttr, b.getUnitAttr());
      cloned.insert(op);
    }
    return clones.lookup(v);
  }
};

} // namespace

LogicalResult autoshard::train::applyRecompute(func::FuncOp step,
                                               StringRef spec) {
  Selection sel;
  if (failed(parseSpec(step, spec, sel)))
    return failure();
  Block &body = step.getBody().front();

  // The forward: the top-level ops the pass did not tag, but the return.
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator())
    if (phaseOf(&op).empty())
      forwardOps.push_back(&op);
  DenseSet<Operation *> forward(forwardOps.begin(), forwardOps.end());

  DenseSet<Operation *> selected;
  SmallVector<bool> globUsed(sel.globs.size(), false);
  for (Operation *op : forwardOps) {
    bool pure = isMemoryEffectFree(op) && hasTensorResult(op, false);
    if (op->hasAttr(kRecomputeAttr)) {
      if (!isMemoryEffectFree(op))
        return op->emitError("dist-training-step: '")
               << op->getName()
               << "' is marked dist.recompute but has side effects";
      if (pure)
        selected.insert(op);
    }
    if (sel.all && pure && !isNoData(op) && hasTensorResult(op, true))
      selected.insert(op);
    if (sel.globs.empty())
      continue;
    SmallVector<std::string> texts = matchTexts(op);
    for (auto [k, glob] : llvm::enumerate(sel.globs))
      if (llvm::any_of(texts, [&](const std::string &t) {
            return glob.second.match(t);
          })) {
        globUsed[k] = true;
        if (pure)
          selected.insert(op);
      }
  }
  for (auto [k, glob] : llvm::enumerate(sel.globs))
    if (!globUsed[k])
      return step.emitError("dist-training-step: recompute glob '")
             << glob.first << "' matches no forward op";

  // Only ops whose results the forward itself reads: the others (the
  // loss's input) are read where they are made.
  DenseSet<Operation *> roots;
  for (Operation *op : selected)
    if (llvm::any_of(op->getUsers(),
                     [&](Operation *user) { return phaseOf(user).empty(); }))
      roots.insert(op);

  // The backward and the loss in order: each read of a root's result reads
  // its clone, made before the first such read.
  SmallVector<Operation *> readers;
  for (Operation &op : body) {
    StringRef phase = phaseOf(&op);
    if (phase == "backward" || phase == "loss")
      readers.push_back(&op);
  }
  Recomputer rc{forward, selected, {}, {}};
  for (Operation *reader : readers) {
    OpBuilder b(reader);
    for (OpOperand &use : reader->getOpOperands()) {
      Operation *def = use.get().getDefiningOp();
      if (def && roots.contains(def))
        use.set(rc.get(b, use.get()));
    }
  }
  for (Operation *op : forwardOps)
    op->removeAttr(kRecomputeAttr);
  return success();
}
