//===- FuseGradients.cpp - Gradient communication fusion ------------------===//
//
// --dist-fuse-gradients runs on the partitioned training step. Its gradient
// collectives (shard.all_reduce / shard.reduce_scatter of a value the
// backward built) are bucketed in backward order by (kind, grid, grid_axes,
// reduction, element type) up to `threshold-mb` of local data; each bucket
// of two or more becomes one collective on the concatenation of its
// flattened operands, placed right after the last of them is produced, and
// its slices, reshaped back, replace the original results. MindSpore's
// AllReduce fusion / PyTorch DDP's gradient buckets. See docs/design.md
// "Partitioning".
//
//===----------------------------------------------------------------------===//

#include "autoshard/Partition/Passes.h"

#include "autoshard/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <map>

namespace autoshard {
#define GEN_PASS_DEF_DISTFUSEGRADIENTS
#include "autoshard/Partition/Passes.h.inc"
} // namespace autoshard

using namespace mlir;
using namespace autoshard;

namespace {

constexpr StringLiteral kPhaseAttr = "dist.phase";

/// Did the backward build `v`? Ops of the training step carry `dist.phase`;
/// partitioning rebuilds reshapes and slices and emits collectives without
/// it, so those are looked through to their operands.
bool isBackwardValue(Value v, unsigned depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 32)
    return false;
  if (auto phase = def->getAttrOfType<StringAttr>(kPhaseAttr))
    return phase.getValue() == "backward";
  if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ReshapeOp,
           tensor::CastOp, tensor::ExtractSliceOp, tensor::InsertSliceOp,
           tensor::ConcatOp, shard::AllReduceOp, shard::AllGatherOp,
           shard::AllSliceOp, shard::ReduceScatterOp, shard::AllToAllOp,
           dist::PermuteOp, dist::MakePartialOp, dist::AllGatherUnevenOp,
           dist::AllSliceUnevenOp>(def))
    return false;
  return llvm::any_of(def->getOperands(), [&](Value in) {
    return isa<RankedTensorType>(in.getType()) &&
           isBackwardValue(in, depth + 1);
  });
}

int64_t elementBytes(Type t) {
  if (t.isIntOrFloat())
    return (t.getIntOrFloatBitWidth() + 7) / 8;
  return 8; // index
}

/// One gradient collective.
struct Candidate {
  Operation *op = nullptr;
  bool reduceScatter = false;
  Value input, result;
  RankedTensorType inType, outType;
  FlatSymbolRefAttr grid;
  SmallVector<int16_t> axes;
  shard::ReductionKind reduction = shard::ReductionKind::Sum;
  int64_t groupSize = 1; // reduce_scatter: the members of a group
  int64_t bytes = 0;     // local bytes of the operand
  bool fusable = false;
  std::string key;     // candidates of one key may share a bucket
  int64_t opPos = 0;   // position of the collective in its block
  int64_t defPos = -1; // position of the operand's producer (-1: before)
  int64_t firstUse = std::numeric_limits<int64_t>::max();
};

/// Candidates fused into one collective.
struct Bucket {
  SmallVector<Candidate *> members;
  int64_t bytes = 0;
  int64_t insertPos = -1; // after the op at this position (-1: block start)
  int64_t firstUse = std::numeric_limits<int64_t>::max();
};

int64_t groupSizeOf(Operation *op, FlatSymbolRefAttr gridName,
                    ArrayRef<int16_t> axes, SymbolTableCollection &tables) {
  auto grid =
      tables.lookupNearestSymbolFrom<shard::GridOp>(op, gridName.getAttr());
  if (!grid)
    return -1;
  ArrayRef<int64_t> shape = grid.getShape();
  int64_t n = 1;
  if (axes.empty()) // upstream: empty grid_axes = every axis
    for (int64_t s : shape)
      n *= s;
  for (int16_t a : axes) {
    if (a < 0 || a >= static_cast<int64_t>(shape.size()) || shape[a] < 0)
      return -1;
    n *= shape[a];
  }
  return n;
}

/// Fills the description of `c` from its op; `fusable` says whether it can
/// be put in a fused collective at all.
void describe(Candidate &c, SymbolTableCollection &tables) {
  Operation *op = c.op;
  if (auto ar = dyn_cast<shard::AllReduceOp>(op)) {
    c.input = ar.getInput();
    c.result = ar.getResult();
    c.grid = ar.getGridAttr();
    c.axes.assign(ar.getGridAxes().begin(), ar.getGridAxes().end());
    c.reduction = ar.getReduction();
  } else {
    auto rs = cast<shard::ReduceScatterOp>(op);
    c.reduceScatter = true;
    c.input = rs.getInput();
    c.result = rs.getResult();
    c.grid = rs.getGridAttr();
    c.axes.assign(rs.getGridAxes().begin(), rs.getGridAxes().end());
    c.reduction = rs.getReduction();
  }
  c.inType = dyn_cast<RankedTensorType>(c.input.getType());
  c.outType = dyn_cast<RankedTensorType>(c.result.getType());
  if (!c.inType || !c.outType || !c.inType.hasStaticShape() ||
      !c.outType.hasStaticShape())
    return;
  Type elem = c.inType.getElementType();
  if (elem != c.outType.getElementType() || !elem.isIntOrFloat())
    return;
  c.bytes = c.inType.getNumElements() * elementBytes(elem);

  if (!c.reduceScatter) {
    if (c.inType != c.outType)
      return;
  } else {
    // The fused form views each operand as [n, numel / n], row i going to
    // the i-th member: only right when the dims before the scattered one
    // are all 1.
    auto rs = cast<shard::ReduceScatterOp>(op);
    int64_t d = rs.getScatterAxis().getSExtValue();
    c.groupSize = groupSizeOf(op, c.grid, c.axes, tables);
    int64_t n = c.groupSize;
    ArrayRef<int64_t> in = c.inType.getShape(), out = c.outType.getShape();
    if (n <= 0 || d < 0 || d >= c.inType.getRank() || in.size() != out.size() ||
        in[d] % n != 0)
      return;
    for (int64_t i = 0; i < d; ++i)
      if (in[i] != 1)
        return;
    for (int64_t i = 0, e = in.size(); i < e; ++i)
      if (out[i] != (i == d ? in[d] / n : in[i]))
        return;
  }

  std::string key;
  llvm::raw_string_ostream os(key);
  os << (c.reduceScatter ? "reduce_scatter" : "all_reduce") << " @"
     << c.grid.getValue() << " [";
  llvm::interleaveComma(c.axes, os);
  os << "] " << shard::stringifyReductionKind(c.reduction) << " " << elem;
  if (c.reduceScatter)
    os << " n=" << c.groupSize;
  c.key = std::move(key);
  c.fusable = true;
}

/// `v` as a 1-D tensor.
Value flatten(OpBuilder &b, Location loc, Value v,
              SmallVectorImpl<Operation *> &created) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 1)
    return v;
  auto flat =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  Operation *op;
  if (type.getRank() == 0) {
    op = tensor::ExpandShapeOp::create(b, loc, flat, v,
                                       ArrayRef<ReassociationIndices>{});
  } else {
    ReassociationIndices all =
        llvm::to_vector_of<int64_t, 2>(llvm::seq<int64_t>(0, type.getRank()));
    op = tensor::CollapseShapeOp::create(b, loc, flat, v,
                                         ArrayRef<ReassociationIndices>{all});
  }
  created.push_back(op);
  return op->getResult(0);
}

/// The 1-D `v` reshaped to `type`.
Value unflatten(OpBuilder &b, Location loc, Value v, RankedTensorType type,
                SmallVectorImpl<Operation *> &created) {
  if (type.getRank() == 1)
    return v;
  Operation *op;
  if (type.getRank() == 0) {
    op = tensor::CollapseShapeOp::create(b, loc, type, v,
                                         ArrayRef<ReassociationIndices>{});
  } else {
    ReassociationIndices all =
        llvm::to_vector_of<int64_t, 2>(llvm::seq<int64_t>(0, type.getRank()));
    op = tensor::ExpandShapeOp::create(b, loc, type, v,
                                       ArrayRef<ReassociationIndices>{all});
  }
  created.push_back(op);
  return op->getResult(0);
}

struct DistFuseGradientsPass
    : public autoshard::impl::DistFuseGradientsBase<DistFuseGradientsPass> {
  using DistFuseGradientsBase::DistFuseGradientsBase;

  void runOnOperation() override;

private:
  /// Buckets the candidates of one block (greedy, in backward order).
  SmallVector<Bucket> makeBuckets(SmallVectorImpl<Candidate> &cands,
                                  int64_t thresholdBytes);
  /// Replaces a bucket of 2+ by its fused collective.
  void fuse(Block &block, ArrayRef<Operation *> ops, Bucket &bucket);
  LogicalResult writeReport(ModuleOp module, int64_t before, int64_t after,
                            int64_t gradientBytes,
                            ArrayRef<Bucket> fused) const;
};

SmallVector<Bucket>
DistFuseGradientsPass::makeBuckets(SmallVectorImpl<Candidate> &cands,
                                   int64_t thresholdBytes) {
  SmallVector<Candidate *> order;
  for (Candidate &c : cands)
    if (c.fusable)
      order.push_back(&c);
  // Backward order: the order the gradients are produced.
  llvm::stable_sort(order, [](const Candidate *a, const Candidate *b) {
    return std::make_pair(a->defPos, a->opPos) <
           std::make_pair(b->defPos, b->opPos);
  });

  SmallVector<Bucket> done;
  std::map<std::string, Bucket> open;
  for (Candidate *c : order) {
    auto it = open.find(c->key);
    if (it != open.end()) {
      Bucket &b = it->second;
      int64_t insertPos = std::max(b.insertPos, c->defPos);
      int64_t firstUse = std::min(b.firstUse, c->firstUse);
      // Fits, and no result of the bucket is needed before the fused
      // collective exists (this also keeps a gradient that depends on an
      // earlier one's reduced value out of its bucket).
      if (b.bytes + c->bytes <= thresholdBytes && firstUse > insertPos) {
        b.members.push_back(c);
        b.bytes += c->bytes;
        b.insertPos = insertPos;
        b.firstUse = firstUse;
        continue;
      }
      done.push_back(std::move(b));
      open.erase(it);
    }
    Bucket b;
    b.members.push_back(c);
    b.bytes = c->bytes;
    b.insertPos = c->defPos;
    b.firstUse = c->firstUse;
    open.emplace(c->key, std::move(b));
  }
  for (auto &[key, b] : open)
    done.push_back(std::move(b));
  return done;
}

void DistFuseGradientsPass::fuse(Block &block, ArrayRef<Operation *> ops,
                                 Bucket &bucket) {
  MLIRContext *ctx = &getContext();
  Candidate &first = *bucket.members.front();
  OpBuilder b(ctx);
  if (bucket.insertPos >= 0)
    b.setInsertionPointAfter(ops[bucket.insertPos]);
  else
    b.setInsertionPointToStart(&block);
  SmallVector<Location> locs;
  for (Candidate *m : bucket.members)
    locs.push_back(m->op->getLoc());
  Location loc = FusedLoc::get(ctx, locs);
  SmallVector<Operation *> created;

  Type elem = first.inType.getElementType();
  int64_t n = first.groupSize;
  SmallVector<Value> pieces;
  int64_t total = 0;
  for (Candidate *m : bucket.members) {
    Value flat = flatten(b, loc, m->input, created);
    int64_t numel = m->inType.getNumElements();
    total += numel;
    if (m->reduceScatter) {
      // Row i of [n, numel / n] is the i-th member's part.
      auto rows = RankedTensorType::get({n, numel / n}, elem);
      auto expand = tensor::ExpandShapeOp::create(
          b, loc, rows, flat, ArrayRef<ReassociationIndices>{{0, 1}});
      created.push_back(expand);
      flat = expand.getResult();
    }
    pieces.push_back(flat);
  }
  auto concat =
      tensor::ConcatOp::create(b, loc, first.reduceScatter ? 1 : 0, pieces);
  created.push_back(concat);
  StringRef grid = first.grid.getValue();
  Value fused;
  if (!first.reduceScatter) {
    fused =
        shard::AllReduceOp::create(b, loc, concat.getType(), grid, first.axes,
                                   concat.getResult(), first.reduction)
            .getResult();
  } else {
    auto outType = RankedTensorType::get({1, total / n}, elem);
    fused = shard::ReduceScatterOp::create(b, loc, outType, grid, first.axes,
                                           concat.getResult(), first.reduction,
                                           APInt(64, 0))
                .getResult();
  }

  int64_t offset = 0;
  for (Candidate *m : bucket.members) {
    int64_t len = m->outType.getNumElements();
    Value piece;
    if (!m->reduceScatter) {
      auto slice = tensor::ExtractSliceOp::create(
          b, m->op->getLoc(), fused,
          ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(len)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
      created.push_back(slice);
      piece = slice.getResult();
    } else {
      auto slice = tensor::ExtractSliceOp::create(
          b, m->op->getLoc(), RankedTensorType::get({1, len}, elem), fused,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(len)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
      created.push_back(slice);
      auto row = tensor::CollapseShapeOp::create(
          b, m->op->getLoc(), RankedTensorType::get({len}, elem),
          slice.getResult(), ArrayRef<ReassociationIndices>{{0, 1}});
      created.push_back(row);
      piece = row.getResult();
    }
    Value restored = unflatten(b, m->op->getLoc(), piece, m->outType, created);
    m->result.replaceAllUsesWith(restored);
    offset += len;
  }
  for (Candidate *m : bucket.members) {
    m->op->erase();
    m->op = nullptr;
  }
  // What the fusion adds is part of the backward (the collective itself,
  // like partitioning's, carries no phase).
  StringAttr backward = b.getStringAttr("backward");
  for (Operation *op : created)
    op->setAttr(kPhaseAttr, backward);
}

void DistFuseGradientsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (thresholdMb < 0) {
    module.emitError() << "dist-fuse-gradients: threshold-mb must be >= 0, "
                          "got "
                       << thresholdMb;
    return signalPassFailure();
  }
  double limit = thresholdMb * 1048576.0;
  int64_t thresholdBytes = limit >= 9.0e18 ? std::numeric_limits<int64_t>::max()
                                           : static_cast<int64_t>(limit);

  // The gradient collectives, per block, in program order.
  SymbolTableCollection tables;
  SmallVector<Block *> blocks;
  DenseMap<Block *, SmallVector<Candidate>> perBlock;
  module.walk([&](Operation *op) {
    if (!isa<shard::AllReduceOp, shard::ReduceScatterOp>(op) ||
        op->getNumOperands() < 1 || !isBackwardValue(op->getOperand(0)))
      return;
    Candidate c;
    c.op = op;
    describe(c, tables);
    Block *block = op->getBlock();
    auto [it, inserted] = perBlock.try_emplace(block);
    if (inserted)
      blocks.push_back(block);
    it->second.push_back(std::move(c));
  });

  int64_t before = 0, after = 0, gradientBytes = 0;
  SmallVector<Bucket> fusedBuckets;
  // The buckets keep pointers into perBlock's vectors: keep them alive.
  for (Block *block : blocks) {
    SmallVector<Candidate> &cands = perBlock[block];
    before += cands.size();
    for (Candidate &c : cands)
      gradientBytes += c.bytes;
    if (thresholdBytes <= 0) {
      after += cands.size();
      continue;
    }
    SmallVector<Operation *> ops;
    DenseMap<Operation *, int64_t> pos;
    for (Operation &op : *block) {
      pos[&op] = ops.size();
      ops.push_back(&op);
    }
    for (Candidate &c : cands) {
      if (!c.fusable)
        continue;
      c.opPos = pos.lookup(c.op);
      if (Operation *def = c.input.getDefiningOp())
        if (Operation *anc = block->findAncestorOpInBlock(*def))
          c.defPos = pos.lookup(anc);
      for (OpOperand &use : c.result.getUses()) {
        Operation *user = block->findAncestorOpInBlock(*use.getOwner());
        if (!user) { // used outside this block: leave it alone
          c.fusable = false;
          break;
        }
        c.firstUse = std::min(c.firstUse, pos.lookup(user));
      }
    }
    // A collective whose operand is another gradient collective's result
    // stays as it is (the producer may move when fused).
    DenseSet<Operation *> gradientOps;
    for (Candidate &c : cands)
      gradientOps.insert(c.op);
    for (Candidate &c : cands)
      if (Operation *def = c.input.getDefiningOp())
        if (gradientOps.contains(def))
          c.fusable = false;

    SmallVector<Bucket> buckets = makeBuckets(cands, thresholdBytes);
    int64_t removed = 0;
    for (Bucket &bucket : buckets) {
      if (bucket.members.size() < 2)
        continue;
      removed += bucket.members.size() - 1;
      fusedBuckets.push_back(bucket);
      fuse(*block, ops, bucket);
    }
    after += cands.size() - removed;
  }

  if (!reportFile.empty() &&
      failed(writeReport(module, before, after, gradientBytes, fusedBuckets)))
    return signalPassFailure();
}

LogicalResult DistFuseGradientsPass::writeReport(ModuleOp module,
                                                 int64_t before, int64_t after,
                                                 int64_t gradientBytes,
                                                 ArrayRef<Bucket> fused) const {
  auto bucketKind = [](const Bucket &b) {
    return b.members.front()->reduceScatter ? "reduce_scatter" : "all_reduce";
  };
  if (reportFile == "-") {
    std::string line;
    llvm::raw_string_ostream os(line);
    os << "dist-fuse-gradients: " << before << " gradient collectives -> "
       << after << " (" << fused.size() << " fused bucket"
       << (fused.size() == 1 ? "" : "s");
    if (!fused.empty()) {
      os << ": ";
      llvm::interleaveComma(fused, os, [&](const Bucket &b) {
        os << b.members.size() << " x " << bucketKind(b) << " " << b.bytes
           << " B";
      });
    }
    os << "; threshold " << llvm::format("%g", static_cast<double>(thresholdMb))
       << " MB)";
    llvm::outs() << line << "\n";
    return success();
  }

  llvm::json::Array buckets;
  for (const Bucket &b : fused) {
    const Candidate &c = *b.members.front();
    llvm::json::Array axes;
    for (int16_t a : c.axes)
      axes.push_back(static_cast<int64_t>(a));
    std::string elem;
    llvm::raw_string_ostream es(elem);
    es << c.inType.getElementType();
    buckets.push_back(llvm::json::Object{
        {"kind", bucketKind(b)},
        {"grid", c.grid.getValue().str()},
        {"grid_axes", std::move(axes)},
        {"reduction", shard::stringifyReductionKind(c.reduction).str()},
        {"element_type", elem},
        {"collectives", static_cast<int64_t>(b.members.size())},
        {"bytes", b.bytes},
    });
  }
  llvm::json::Object report{
      {"pass", "dist-fuse-gradients"},
      {"threshold_mb", static_cast<double>(thresholdMb)},
      {"gradient_collectives_before", before},
      {"gradient_collectives_after", after},
      {"fused_buckets", static_cast<int64_t>(fused.size())},
      {"gradient_bytes_per_device", gradientBytes},
      {"buckets", std::move(buckets)},
  };
  std::error_code ec;
  llvm::raw_fd_ostream file(reportFile, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return module.emitError()
           << "cannot write report '" << reportFile << "': " << ec.message();
  file << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
  return success();
}

} // namespace
