//===- Pricing.cpp - Every distinct reshard priced once ------------------===//
//
// See Pricing.h.
//
//===----------------------------------------------------------------------===//

#include "Pricing.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

#include <numeric>

using namespace mlir;

namespace autoshard::propagate {

llvm::DenseMap<unsigned, unsigned> &Pricing::row(const TypeInfo &type,
                                                 unsigned from) {
  auto [it, inserted] = rowIds.try_emplace(
      {(uint64_t(type.shapeId) << 32) | uint64_t(type.elemBytes), from},
      rows.size());
  if (inserted)
    rows.emplace_back();
  return rows[it->second];
}

unsigned Pricing::priceAll(MLIRContext *ctx) {
  // Groups of pairs of one shape and element size, each in first-seen order
  // (a planner's searches are per shape: a group shares them).
  llvm::MapVector<uint64_t, std::vector<unsigned>> groups;
  for (unsigned p = 0, e = pairs.size(); p < e; ++p) {
    const TypeInfo &type = *pairs[p].type;
    groups[(uint64_t(type.shapeId) << 32) | uint64_t(type.elemBytes)].push_back(
        p);
  }
  // Tasks for the context's threads: a group, or a run of its sources when
  // it is large (one group can hold half of all the searches). A task has
  // its own planner: costUs answers do not depend on what a planner priced
  // before, so the costs are those of one planner for all, in any order and
  // on any number of threads. A source's pairs stay in one task (they share
  // its search).
  std::vector<ArrayRef<unsigned>> tasks;
  // A thread pays for starting and for its own heap's first pages (a few
  // hundred microseconds here); below a few thousand searches' worth of
  // pairs the work is done before that pays off.
  constexpr size_t kPairsPerThread = 8192;
  unsigned numThreads = 1;
  if (ctx->isMultithreadingEnabled())
    numThreads = std::clamp<unsigned>(pairs.size() / kPairsPerThread, 1,
                                      ctx->getThreadPool().getMaxConcurrency());
  size_t share = pairs.size() / (4 * numThreads) + 1;
  std::vector<unsigned> rankOf(layouts.size(), ~0u), count, sorted;
  for (auto &[key, group] : groups) {
    if (numThreads == 1 || group.size() <= share) {
      tasks.push_back(group);
      continue;
    }
    // Sources contiguous, in first-seen order (a counting sort).
    count.clear();
    for (unsigned p : group) {
      unsigned &rank = rankOf[pairs[p].from];
      if (rank == ~0u) {
        rank = count.size();
        count.push_back(0);
      }
      ++count[rank];
    }
    std::exclusive_scan(count.begin(), count.end(), count.begin(), 0u);
    sorted.resize(group.size());
    for (unsigned p : group)
      sorted[count[rankOf[pairs[p].from]]++] = p;
    for (unsigned p : group)
      rankOf[pairs[p].from] = ~0u;
    group.swap(sorted);
    ArrayRef<unsigned> rest(group);
    while (!rest.empty()) {
      size_t n = std::min(share, rest.size());
      while (n < rest.size() && pairs[rest[n]].from == pairs[rest[n - 1]].from)
        ++n;
      tasks.push_back(rest.take_front(n));
      rest = rest.drop_front(n);
    }
  }
  auto price = [&](ArrayRef<unsigned> task) {
    ReshardPlanner planner(model, plannerOptions);
    const TypeInfo &type = *pairs[task.front()].type;
    std::vector<uint32_t> ids(layouts.size(), ~0u);
    auto idOf = [&](unsigned layout) {
      if (ids[layout] == ~0u)
        ids[layout] = planner.layoutId(type.shape, layouts[layout]);
      return ids[layout];
    };
    std::string error;
    for (unsigned p : task) {
      // Only the time is needed here: costUs prices every target of a
      // source layout from one search (the same double plan()->timeUs
      // gives).
      std::optional<double> time =
          planner.costUs(type.shape, type.elemBytes, idOf(pairs[p].from),
                         idOf(pairs[p].to), error);
      pairs[p].cost = std::min(time ? *time : kInfeasibleCost, pairs[p].cap);
    }
  };
  if (numThreads == 1) {
    llvm::for_each(tasks, price);
  } else {
    // Largest first, so that the last tasks to start are short.
    llvm::stable_sort(tasks, [](ArrayRef<unsigned> a, ArrayRef<unsigned> b) {
      return a.size() > b.size();
    });
    parallelForEach(ctx, tasks, price);
  }
  for (const auto &table : unpriced)
    for (double &cost : table->cost)
      cost = cost == kFree    ? 0.0
             : cost == kNever ? kInfeasibleCost
                              : pairs[static_cast<size_t>(cost)].cost;
  unpriced.clear();
  return numThreads;
}

std::optional<std::vector<HaloDim>> haloDimsOf(Operation *op,
                                               unsigned operand) {
  SmallVector<int64_t> low, high;
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    if (operand != 0 || !pad->hasOneUse() || !pad.getConstantPaddingValue() ||
        pad.getResult().getUses().begin()->getOperandNumber() != 0)
      return std::nullopt;
    low.assign(pad.getStaticLow().begin(), pad.getStaticLow().end());
    high.assign(pad.getStaticHigh().begin(), pad.getStaticHigh().end());
    if (llvm::any_of(llvm::concat<int64_t>(low, high), ShapedType::isDynamic))
      return std::nullopt;
    op = *pad->user_begin();
  } else if (operand != 0) {
    return std::nullopt;
  }
  if (!isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp,
           linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(op))
    return std::nullopt;
  // The last two dims of input, window (weight) and output are H, W.
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto window = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto strides = op->getAttrOfType<DenseIntElementsAttr>("strides");
  auto dilations = op->getAttrOfType<DenseIntElementsAttr>("dilations");
  if (!in || !window || !out || !strides || !dilations ||
      !in.hasStaticShape() || !window.hasStaticShape() || !out.hasStaticShape())
    return std::nullopt;
  int64_t rank = in.getRank();
  low.resize(rank, 0);
  high.resize(rank, 0);
  for (int64_t d = 0; d < rank - 2; ++d)
    if (low[d] || high[d])
      return std::nullopt;
  auto s = strides.getValues<int64_t>(), dl = dilations.getValues<int64_t>();
  std::vector<HaloDim> dims;
  for (int64_t i = 0; i < 2; ++i) {
    int64_t d = rank - 2 + i;
    int64_t k = window.getDimSize(window.getRank() - 2 + i);
    dims.push_back({d, s[i], (k - 1) * dl[i] + 1, low[d], high[d],
                    out.getDimSize(out.getRank() - 2 + i)});
  }
  return dims;
}

Operation *haloWindowOp(Operation *op) {
  return isa<tensor::PadOp>(op) ? *op->user_begin() : op;
}

bool haloFollowsOutput(const TensorLayout &in, const TensorLayout &out,
                       const std::vector<HaloDim> &dims) {
  for (const HaloDim &h : dims)
    if (!in.dimAxes[h.dim].empty() && out.dimAxes[h.dim] != in.dimAxes[h.dim])
      return false;
  return true;
}

TensorLayout wholeOnHaloDims(TensorLayout l, const std::vector<HaloDim> &dims) {
  for (const HaloDim &h : dims)
    l.dimAxes[h.dim].clear();
  return l;
}

} // namespace autoshard::propagate
