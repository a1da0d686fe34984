//===- ExecutorCollective.cpp - A collective step in three phases ---------===//
//
// Every collective runs as
//   pack:     backend kernels lay the local tensor out as the communicator
//             wants it (block k for group member k, contiguous) and allocate
//             the receive buffer;
//   exchange: one communicator call on those buffers;
//   unpack:   backend kernels turn the received blocks into the result.
// Keeping the phases apart is what lets an asynchronous communicator (NCCL
// on a stream of its own) run the exchange while the compute stream goes
// on: the executor queues pack and exchange, and runs unpack only when an
// instruction first reads the result (Executor::resolvePending).
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/Executor.h"

#include <numeric>

using namespace autoshard;
using namespace autoshard::rt;

namespace {
/// Sizes of a tensor viewed as [pre, dim, post] around `dim`.
struct Around {
  int64_t pre = 1, mid = 1, post = 1;
};
Around around(const Shape &shape, int64_t dim) {
  Around a;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    (d < dim ? a.pre : d == dim ? a.mid : a.post) *= shape[d];
  return a;
}

/// The pack phase of one collective instruction: which buffers the exchange
/// uses, the exchange itself and the unpack, per collective kind.
/// Owned by its unpack closures (shared_from_this): an asynchronous
/// exchange's unpack runs after the instruction.
class Packer : public std::enable_shared_from_this<Packer> {
public:
  using Allocate = std::function<Tensor(DType, const Shape &, bool zeroed)>;

  Packer(const Instruction &inst, const Tensor &input, const Shape &outShape,
         Backend &backend, Communicator &comm, Allocate allocate)
      : inst(inst), step(inst.collective), input(input),
        inShape(input.getShape()), outShape(outShape), rank(input.getRank()),
        type(input.getDType()), backend(backend), comm(comm),
        allocate(std::move(allocate)) {
    bool permute = step.kind == CollectiveKind::Permute;
    n = permute ? 1 : comm.getGroupSize(step.axes);
    me = permute ? 0 : comm.getGroupIndex(step.axes);
    uneven = !inst.groupExtents.empty();
    if (uneven && static_cast<int64_t>(inst.groupExtents.size()) != n)
      throw Error(
          "uneven collective: " + std::to_string(inst.groupExtents.size()) +
          " extents for a group of " + std::to_string(n));
  }

  Executor::CollectivePlan pack() {
    switch (step.kind) {
    case CollectiveKind::AllReduce:
      return allReduce();
    case CollectiveKind::MakePartial:
      return local(makePartial());
    case CollectiveKind::AllSlice:
      return local(allSlice());
    case CollectiveKind::AllGather:
      return uneven ? allGatherUneven() : allGather();
    case CollectiveKind::ReduceScatter:
      return uneven ? reduceScatterUneven() : reduceScatter();
    case CollectiveKind::AllToAll:
      return allToAll();
    case CollectiveKind::Permute:
      return permute();
    }
    throw Error("internal: unknown collective kind");
  }

private:
  Tensor fresh(const Shape &shape) { return allocate(type, shape, false); }
  void needDim(int64_t d) const {
    if (d < 0 || d >= rank)
      throw Error("collective dim " + std::to_string(d) + " out of range for " +
                  input.getTypeString());
  }
  void needSplit(const char *what, int64_t extent, int64_t d) const {
    if (extent % n)
      throw Error(std::string(what) + ": dim " + std::to_string(d) + " of " +
                  input.getTypeString() + " does not split " +
                  std::to_string(n) + " ways");
  }
  int64_t prefix(int64_t k) const {
    return std::accumulate(inst.groupExtents.begin(),
                           inst.groupExtents.begin() + k, int64_t(0));
  }
  /// Moves the block axis: [a, blocks, b, c] -> [blocks, a, b, c].
  Tensor swapBlocks(const Tensor &t, int64_t a, int64_t blocks, int64_t b,
                    int64_t c) {
    Tensor view = t.reshaped({a, blocks, b, c});
    Tensor out = fresh({blocks, a, b, c});
    backend.transpose(view, out, {1, 0, 2, 3});
    return out;
  }
  /// `t` at the origin of a zeroed tensor of the declared (padded) shape.
  Tensor padTo(const Tensor &t, const Shape &padded) {
    Tensor out = allocate(type, padded, /*zeroed=*/true);
    backend.insertSlice(t, out, std::vector<int64_t>(rank, 0), t.getShape(),
                        std::vector<int64_t>(rank, 1));
    return out;
  }
  /// A step with no exchange: its result is made in the pack phase.
  static Executor::CollectivePlan local(Tensor result) {
    Executor::CollectivePlan plan;
    plan.unpack = [result] { return result; };
    return plan;
  }

  Executor::CollectivePlan allReduce() {
    Tensor out = fresh(inShape);
    Executor::CollectivePlan plan;
    plan.buffers = {input, out};
    plan.exchange = [&c = comm, in = input, out, s = step] {
      c.allReduce(in.getRawData(), out.getRawData(), in.getNumElements(),
                  in.getDType(), s.reduction, s.axes);
    };
    plan.unpack = [out] { return out; };
    return plan;
  }

  Tensor makePartial() {
    Tensor out = allocate(type, inShape, /*zeroed=*/true);
    bool keep = me == 0 || step.reduction == ReductionKind::Max ||
                step.reduction == ReductionKind::Min;
    if (keep) {
      backend.copy(input, out);
    } else if (step.reduction == ReductionKind::Product) {
      Tensor one(type, {});
      one.setFromInt(0, 1);
      backend.fill(out, backend.upload(one));
    }
    return out;
  }

  Tensor allSlice() {
    needDim(step.dim);
    if (!uneven)
      needSplit("all_slice", inShape[step.dim], step.dim);
    int64_t extent = uneven ? inst.groupExtents[me] : inShape[step.dim] / n;
    std::vector<int64_t> offsets(rank, 0), sizes = inShape, strides(rank, 1);
    offsets[step.dim] = uneven ? prefix(me) : me * extent;
    sizes[step.dim] = extent;
    Tensor out = fresh(sizes);
    backend.extractSlice(input, out, offsets, sizes, strides);
    // A padded uneven result keeps its shard at the origin.
    if (out.getShape() != outShape &&
        out.getNumElements() != getNumElements(outShape))
      return padTo(out, outShape);
    return out;
  }

  Executor::CollectivePlan allGather() {
    needDim(step.dim);
    Around ar = around(inShape, step.dim);
    Tensor recv = fresh({n, ar.pre, ar.mid, ar.post});
    Executor::CollectivePlan plan;
    plan.buffers = {input, recv};
    plan.exchange = [&c = comm, in = input, recv, axes = step.axes] {
      c.allGather(in.getRawData(), recv.getRawData(), in.getBytes(), axes);
    };
    plan.unpack = [self = shared_from_this(), recv, ar] {
      Tensor out = self->fresh({ar.pre, self->n, ar.mid, ar.post});
      self->backend.transpose(recv, out, {1, 0, 2, 3});
      return out;
    };
    return plan;
  }

  /// Member k contributes extent k of dim; the local tensor may be padded
  /// beyond its own extent.
  Executor::CollectivePlan allGatherUneven() {
    needDim(step.dim);
    Around ar = around(inShape, step.dim);
    Shape mine = inShape;
    mine[step.dim] = inst.groupExtents[me];
    Tensor own = fresh(mine);
    backend.extractSlice(input, own, std::vector<int64_t>(rank, 0), mine,
                         std::vector<int64_t>(rank, 1));
    std::vector<int64_t> recvBytes;
    for (int64_t k = 0; k < n; ++k)
      recvBytes.push_back(ar.pre * inst.groupExtents[k] * ar.post *
                          getDTypeSize(type));
    Shape full = inShape;
    full[step.dim] = prefix(n);
    Tensor recv = fresh({getNumElements(full)});
    Executor::CollectivePlan plan;
    plan.buffers = {own, recv};
    plan.exchange = [&c = comm, own, recv, recvBytes, axes = step.axes] {
      c.allGatherV(own.getRawData(), recv.getRawData(), recvBytes, axes);
    };
    plan.unpack = [self = shared_from_this(), recv, full] {
      return self->placeGathered(recv, full);
    };
    return plan;
  }
  /// Member k's block of the flat `recv` at its offset along dim of `full`.
  Tensor placeGathered(const Tensor &recv, const Shape &full) {
    Tensor out = fresh(full);
    std::vector<int64_t> offsets(rank, 0), strides(rank, 1);
    int64_t at = 0;
    for (int64_t k = 0; k < n; ++k) {
      Shape piece = inShape;
      piece[step.dim] = inst.groupExtents[k];
      Tensor block = fresh(piece);
      backend.extractSlice(recv, block, {at}, {getNumElements(piece)}, {1});
      offsets[step.dim] = prefix(k);
      backend.insertSlice(block, out, offsets, piece, strides);
      at += getNumElements(piece);
    }
    return out;
  }

  Executor::CollectivePlan reduceScatter() {
    needDim(step.dim);
    Around ar = around(inShape, step.dim);
    needSplit("reduce_scatter", ar.mid, step.dim);
    Tensor packed = swapBlocks(input, ar.pre, n, ar.mid / n, ar.post);
    Tensor out = fresh({ar.pre, ar.mid / n, ar.post});
    Executor::CollectivePlan plan;
    plan.buffers = {packed, out};
    plan.exchange = [&c = comm, packed, out, s = step] {
      c.reduceScatter(packed.getRawData(), out.getRawData(),
                      out.getNumElements(), out.getDType(), s.reduction,
                      s.axes);
    };
    plan.unpack = [out] { return out; };
    return plan;
  }

  Executor::CollectivePlan reduceScatterUneven() {
    needDim(step.dim);
    Around ar = around(inShape, step.dim);
    // Member k's block (extent k of dim), flattened one after the other.
    Tensor packed = fresh({prefix(n) * ar.pre * ar.post});
    std::vector<int64_t> counts;
    std::vector<int64_t> offsets(rank, 0), strides(rank, 1);
    int64_t at = 0;
    for (int64_t k = 0; k < n; ++k) {
      Shape piece = inShape;
      piece[step.dim] = inst.groupExtents[k];
      offsets[step.dim] = prefix(k);
      Tensor block = fresh(piece);
      backend.extractSlice(input, block, offsets, piece, strides);
      counts.push_back(getNumElements(piece));
      backend.insertSlice(block.reshaped({counts[k]}), packed, {at},
                          {counts[k]}, {1});
      at += counts[k];
    }
    Shape mine = inShape;
    mine[step.dim] = inst.groupExtents[me];
    Tensor out = fresh(mine);
    Executor::CollectivePlan plan;
    plan.buffers = {packed, out};
    plan.exchange = [&c = comm, packed, out, counts, s = step] {
      c.reduceScatterV(packed.getRawData(), out.getRawData(), counts,
                       out.getDType(), s.reduction, s.axes);
    };
    plan.unpack = [self = shared_from_this(), out] {
      if (out.getNumElements() == getNumElements(self->outShape))
        return out;
      return self->padTo(out, self->outShape);
    };
    return plan;
  }

  Executor::CollectivePlan allToAll() {
    int64_t split = step.dim, cat = step.srcDim;
    needDim(split);
    needDim(cat);
    if (uneven)
      throw Error("all_to_all with uneven extents is not supported");
    Around as = around(inShape, split);
    needSplit("all_to_all", as.mid, split);
    Tensor packed = swapBlocks(input, as.pre, n, as.mid / n, as.post);
    Tensor recv = fresh(packed.getShape());
    Shape block = inShape;
    block[split] /= n;
    Around ac = around(block, cat);
    Executor::CollectivePlan plan;
    plan.buffers = {packed, recv};
    plan.exchange = [&c = comm, packed, recv, n = n, axes = step.axes] {
      c.allToAll(packed.getRawData(), recv.getRawData(),
                 packed.getBytes() / n, axes);
    };
    plan.unpack = [self = shared_from_this(), recv, ac] {
      int64_t n = self->n;
      Tensor out = self->fresh({ac.pre, n, ac.mid, ac.post});
      self->backend.transpose(recv.reshaped({n, ac.pre, ac.mid, ac.post}),
                              out, {1, 0, 2, 3});
      return out;
    };
    return plan;
  }

  Executor::CollectivePlan permute() {
    int64_t pos = comm.getPosition();
    int64_t dst = -1, src = -1;
    for (auto [s, d] : step.pairs) {
      if (s == pos)
        dst = d;
      if (d == pos)
        src = s;
    }
    Tensor out = fresh(inShape);
    if (src < 0) // nobody sends here: the value stays
      backend.copy(input, out);
    Executor::CollectivePlan plan;
    plan.buffers = {input, out};
    plan.exchange = [&c = comm, in = input, out, dst, src] {
      c.sendRecv(in.getRawData(), dst, out.getRawData(), src, in.getBytes());
    };
    plan.unpack = [out] { return out; };
    return plan;
  }

  const Instruction &inst;
  const CollectiveStep &step;
  Tensor input;
  Shape inShape, outShape;
  int64_t rank;
  DType type;
  Backend &backend;
  Communicator &comm;
  Allocate allocate;
  int64_t n = 1, me = 0;
  bool uneven = false;
};
} // namespace

Executor::CollectivePlan
Executor::packCollective(const Instruction &inst, const Tensor &input) {
  auto packer = std::make_shared<Packer>(
      inst, input, program.values[inst.results[0]].shape, backend, comm,
      [this](DType type, const Shape &shape, bool zeroed) {
        return allocate(type, shape, zeroed);
      });
  return packer->pack();
}

void Executor::executeCollective(const Instruction &inst,
                                 std::vector<Tensor> &env) {
  CollectivePlan plan = packCollective(inst, env[inst.operands[0]]);
  if (plan.exchange) {
    plan.exchange();
    if (comm.isAsynchronous()) {
      std::shared_ptr<Communicator::Completion> done =
          comm.recordCompletion();
      // Profiled instructions are timed whole: wait at once.
      if (!profiler) {
        pending[inst.results[0]] = {std::move(done), std::move(plan), &inst};
        return;
      }
      comm.waitFor(*done);
    }
  }
  finishCollective(inst, plan.unpack(), env);
}

void Executor::finishCollective(const Instruction &inst, const Tensor &t,
                                std::vector<Tensor> &env) {
  const ValueInfo &outInfo = program.values[inst.results[0]];
  if (t.getNumElements() != getNumElements(outInfo.shape))
    throw Error(std::string("collective result ") + t.getTypeString() +
                " does not match the declared " +
                std::string(stringifyDType(outInfo.type)) + "[" +
                stringifyShape(outInfo.shape) + "]");
  env[inst.results[0]] = t.reshaped(outInfo.shape);
}
