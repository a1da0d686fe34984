//===- Executor.cpp - Runs a Program on one rank --------------------------===//

#include "autoshard/Runtime/Executor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace autoshard;
using namespace autoshard::rt;

static constexpr size_t kLive = std::numeric_limits<size_t>::max();

Executor::Executor(const Program &program, Backend &backend, Communicator &comm)
    : program(program), backend(backend), comm(comm) {
  std::string err = program.verify();
  if (!err.empty())
    throw Error("invalid program: " + err);
  if (!(comm.getMesh() == program.mesh))
    throw Error("communicator mesh " + comm.getMesh().str() +
                " differs from the program's mesh " + program.mesh.str());
  lastUse.assign(program.values.size(), 0);
  for (size_t i = 0; i < program.instructions.size(); ++i)
    for (ValueId id : program.instructions[i].operands)
      lastUse[id] = i;
  for (const ProgramIO &out : program.outputs)
    lastUse[out.value] = kLive;
  // Communicator groups are created collectively, once, in program order.
  for (const Instruction &inst : program.instructions)
    if (inst.kind == OpKind::Collective &&
        inst.collective.kind != CollectiveKind::Permute)
      comm.prepareGroup(inst.collective.axes);
  foldZeroInits();
  backend.prepare(program);
  // Compiled loop nests run on host memory: the CPU backend's.
  if (!program.kernelLibrary.empty() && backend.getName() == "cpu") {
    kernelLibrary = KernelLibrary::open(program.kernelLibrary);
    kernels.assign(program.instructions.size(), nullptr);
    for (size_t i = 0; i < program.instructions.size(); ++i) {
      const Instruction &inst = program.instructions[i];
      if (inst.kind == OpKind::Generic && !inst.generic->kernel.empty())
        kernels[i] = kernelLibrary->lookup(inst.generic->kernel);
    }
  }
}

/// Whether instruction `inst` makes a tensor of +0.0 (an Empty, or a Fill
/// of a constant whose bits are all zero: -0.0 would not fold exactly).
static bool makesPositiveZeros(const Program &program, const Instruction &inst,
                               const std::vector<int> &definedBy) {
  if (inst.kind == OpKind::Empty)
    return true;
  if (inst.kind != OpKind::Fill || definedBy[inst.operands[0]] < 0)
    return false;
  const Instruction &value = program.instructions[definedBy[inst.operands[0]]];
  if (value.kind != OpKind::Constant || value.constant.getNumElements() != 1)
    return false;
  double v = value.constant.getAsDouble(0);
  return v == 0 && !std::signbit(v);
}

void Executor::foldZeroInits() {
  size_t n = program.instructions.size();
  skipped.assign(n, false);
  overwrites.assign(n, false);
  std::vector<int> definedBy(program.values.size(), -1);
  std::vector<int> uses(program.values.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    for (ValueId id : program.instructions[i].results)
      definedBy[id] = static_cast<int>(i);
    for (ValueId id : program.instructions[i].operands)
      ++uses[id];
  }
  for (const ProgramIO &out : program.outputs)
    ++uses[out.value];
  for (size_t i = 0; i < n; ++i) {
    const Instruction &gemm = program.instructions[i];
    if (gemm.kind != OpKind::Matmul && gemm.kind != OpKind::BatchMatmul)
      continue;
    ValueId init = gemm.operands[2];
    int def = definedBy[init];
    if (def < 0 || uses[init] != 1 ||
        !makesPositiveZeros(program, program.instructions[def], definedBy))
      continue;
    skipped[def] = true;
    overwrites[i] = true;
  }
}

std::vector<Tensor> Executor::run(const std::vector<Tensor> &inputs) {
  if (inputs.size() != program.inputs.size())
    throw Error("program takes " + std::to_string(program.inputs.size()) +
                " inputs, got " + std::to_string(inputs.size()));
  std::vector<Tensor> env(program.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ProgramIO &io = program.inputs[i];
    const ValueInfo &info = program.values[io.value];
    if (inputs[i].isNull() || inputs[i].getDType() != info.type ||
        inputs[i].getShape() != info.shape)
      throw Error("input '" + io.name + "': expected " +
                  std::string(stringifyDType(info.type)) + "[" +
                  stringifyShape(info.shape) + "], got " +
                  (inputs[i].isNull() ? "nothing" : inputs[i].getTypeString()));
    env[io.value] = inputs[i];
  }
  double runStart = profiler ? Profiler::now() : 0;
  for (current = 0; current < program.instructions.size(); ++current) {
    const Instruction &inst = program.instructions[current];
    if (skipped[current]) { // its only reader, a GEMM, overwrites instead
      for (ValueId id : inst.operands)
        if (lastUse[id] == current)
          env[id] = Tensor();
      continue;
    }
    double start = 0;
    if (profiler) {
      start = Profiler::now();
      nestedSeconds = 0;
    }
    try {
      execute(inst, env);
      if (profiler)
        backend.synchronize();
    } catch (const Error &e) {
      throw Error(std::string(e.what()) +
                  (inst.location.empty() ? "" : " (at " + inst.location + ")"));
    }
    if (profiler) {
      double end = Profiler::now();
      profiler->add(profileSlots[current], end - start - nestedSeconds);
      start = end;
    }
    for (ValueId id : inst.results) {
      const ValueInfo &info = program.values[id];
      if (env[id].isNull() || env[id].getDType() != info.type ||
          env[id].getShape() != info.shape)
        throw Error("internal: " + std::string(stringifyOpKind(inst.kind)) +
                    " produced " +
                    (env[id].isNull() ? "nothing" : env[id].getTypeString()) +
                    " for a value of type " +
                    std::string(stringifyDType(info.type)) + "[" +
                    stringifyShape(info.shape) + "]");
    }
    for (ValueId id : inst.operands)
      if (lastUse[id] == current)
        env[id] = Tensor();
    if (profiler) // freeing: allocation time, no call
      profiler->add(allocationSlot, Profiler::now() - start, 0);
  }
  std::vector<Tensor> outputs;
  for (const ProgramIO &out : program.outputs)
    outputs.push_back(env[out.value]);
  backend.synchronize();
  if (profiler)
    profiler->addRun(Profiler::now() - runStart);
  return outputs;
}

void Executor::setProfiler(Profiler *p) {
  profiler = p;
  profileSlots.clear();
  if (!profiler)
    return;
  for (size_t i = 0; i < program.instructions.size(); ++i)
    profileSlots.push_back(profiler->getSlot(getProfileKind(i)));
  allocationSlot = profiler->getSlot("allocation");
  initCopySlot = profiler->getSlot("init copy");
}

std::string Executor::getProfileKind(size_t i) const {
  const Instruction &inst = program.instructions[i];
  if (inst.kind == OpKind::Collective)
    return "collective " +
           std::string(stringifyCollectiveKind(inst.collective.kind));
  if (inst.kind == OpKind::Generic)
    return (i < kernels.size() && kernels[i]) ||
                   (!inst.generic->gpuKernel.empty() &&
                    backend.getName().rfind("cuda", 0) == 0)
               ? "generic (compiled)"
               : "generic (interpreted)";
  return std::string(stringifyOpKind(inst.kind));
}

Tensor Executor::allocate(DType type, const Shape &shape, bool zeroed) {
  if (!profiler)
    return zeroed ? backend.allocate(type, shape)
                  : backend.allocateUninitialized(type, shape);
  double start = Profiler::now();
  Tensor t = zeroed ? backend.allocate(type, shape)
                    : backend.allocateUninitialized(type, shape);
  if (zeroed)
    backend.synchronize();
  double seconds = Profiler::now() - start;
  profiler->add(allocationSlot, seconds);
  nestedSeconds += seconds;
  return t;
}

Tensor Executor::takeInit(std::vector<Tensor> &env, ValueId id,
                          size_t instIndex) {
  const Instruction &inst = program.instructions[instIndex];
  bool usedTwice =
      std::count(inst.operands.begin(), inst.operands.end(), id) > 1;
  Tensor &init = env[id];
  if (lastUse[id] == instIndex && !usedTwice && init.isUnique()) {
    Tensor t = init;
    init = Tensor();
    return t;
  }
  Tensor copy = allocate(init.getDType(), init.getShape(), /*zeroed=*/false);
  double start = profiler ? Profiler::now() : 0;
  backend.copy(init, copy);
  if (profiler) {
    backend.synchronize();
    double seconds = Profiler::now() - start;
    profiler->add(initCopySlot, seconds);
    nestedSeconds += seconds;
  }
  return copy;
}

/// Resolves kDynamic entries from operands starting at `next`. The scalar
/// operands may live in device memory, so they are read through the backend.
static std::vector<int64_t> resolve(const std::vector<int64_t> &values,
                                    const Instruction &inst, size_t &next,
                                    const std::vector<Tensor> &env,
                                    Backend &backend) {
  std::vector<int64_t> out = values;
  for (int64_t &v : out)
    if (v == kDynamic) {
      if (next >= inst.operands.size())
        throw Error("missing dynamic offset operand");
      v = backend.download(env[inst.operands[next++]]).getAsInt(0);
    }
  return out;
}

namespace {
struct SliceBounds {
  std::vector<int64_t> offsets, sizes, strides;
};
} // namespace

/// Offsets, sizes and strides of a slice; dynamic entries come from the
/// operands starting at `next`, in that order (as tensor.extract_slice).
static SliceBounds resolveSlice(const Instruction &inst, size_t next,
                                const std::vector<Tensor> &env,
                                Backend &backend) {
  SliceBounds b;
  b.offsets = resolve(inst.offsets, inst, next, env, backend);
  b.sizes = resolve(inst.sizes, inst, next, env, backend);
  b.strides = resolve(inst.strides, inst, next, env, backend);
  return b;
}

void Executor::execute(const Instruction &inst, std::vector<Tensor> &env) {
  auto in = [&](size_t k) -> const Tensor & { return env[inst.operands[k]]; };
  auto resultInfo = [&](size_t k) -> const ValueInfo & {
    return program.values[inst.results[k]];
  };
  // Results the kernel overwrites whole need no zero-fill.
  auto fresh = [&](size_t k) {
    return allocate(resultInfo(k).type, resultInfo(k).shape, /*zeroed=*/false);
  };
  Tensor &res = env[inst.results.empty() ? 0 : inst.results[0]];

  switch (inst.kind) {
  case OpKind::Constant:
    res = backend.upload(inst.constant);
    return;
  case OpKind::Empty:
    res = allocate(resultInfo(0).type, resultInfo(0).shape, /*zeroed=*/true);
    return;
  case OpKind::Fill: {
    Tensor out = fresh(0);
    backend.fill(out, in(0));
    res = out;
    return;
  }
  case OpKind::Reshape:
    if (in(0).getDType() != resultInfo(0).type)
      throw Error("reshape changes the element type");
    res = in(0).reshaped(resultInfo(0).shape);
    return;
  case OpKind::Matmul:
  case OpKind::BatchMatmul: {
    bool accumulate = !overwrites[current];
    Tensor c = accumulate ? takeInit(env, inst.operands[2], current) : fresh(0);
    if (inst.kind == OpKind::Matmul)
      backend.matmul(in(0), in(1), c, inst.transA, inst.transB, accumulate);
    else
      backend.batchMatmul(in(0), in(1), c, inst.transA, inst.transB,
                          accumulate);
    res = c;
    return;
  }
  case OpKind::Conv2D:
  case OpKind::Pool2D:
    // The backend's kernel (oneDNN on the CPU), else the loop nest below.
    if (backend.hasWindowKernels()) {
      Tensor out = takeInit(env, inst.operands[2], current);
      if (inst.kind == OpKind::Conv2D)
        backend.conv2d(in(0), in(1), out, inst.strides, inst.offsets);
      else
        backend.pool2d(in(0), out, inst.sizes, inst.strides, inst.offsets,
                       inst.dim == 0 ? ReductionKind::Max : ReductionKind::Sum);
      res = out;
      return;
    }
    [[fallthrough]];
  case OpKind::Generic: {
    const GenericSpec &g = *inst.generic;
    std::vector<const Tensor *> ins, caps;
    for (int32_t k = 0; k < g.numInputs; ++k)
      ins.push_back(&in(k));
    for (int32_t k = 0; k < g.numCaptures; ++k)
      caps.push_back(&in(g.numInputs + g.numOutputs + k));
    std::vector<Tensor> outs;
    for (int32_t k = 0; k < g.numOutputs; ++k)
      outs.push_back(takeInit(env, inst.operands[g.numInputs + k], current));
    std::vector<Tensor *> outPtrs;
    for (Tensor &t : outs)
      outPtrs.push_back(&t);
    if (current < kernels.size() && kernels[current])
      runKernel(kernels[current], ins, outPtrs, caps);
    else
      backend.generic(g, ins, caps, outPtrs);
    for (int32_t k = 0; k < g.numOutputs; ++k)
      env[inst.results[k]] = outs[k];
    return;
  }
  case OpKind::Transpose: {
    Tensor out = fresh(0);
    backend.transpose(in(0), out, inst.perm);
    res = out;
    return;
  }
  case OpKind::Softmax: {
    Tensor out = fresh(0);
    backend.softmax(in(0), out, inst.dim);
    res = out;
    return;
  }
  case OpKind::Gather: {
    Tensor out = fresh(0);
    backend.gather(in(0), in(1), out, inst.perm);
    res = out;
    return;
  }
  case OpKind::ExtractSlice: {
    SliceBounds b = resolveSlice(inst, /*next=*/1, env, backend);
    Tensor out = fresh(0);
    backend.extractSlice(in(0), out, b.offsets, b.sizes, b.strides);
    res = out;
    return;
  }
  case OpKind::InsertSlice: {
    SliceBounds b = resolveSlice(inst, /*next=*/2, env, backend);
    Tensor dest = takeInit(env, inst.operands[1], current);
    backend.insertSlice(in(0), dest, b.offsets, b.sizes, b.strides);
    res = dest;
    return;
  }
  case OpKind::Concat: {
    std::vector<const Tensor *> pieces;
    for (size_t k = 0; k < inst.operands.size(); ++k)
      pieces.push_back(&in(k));
    Tensor out = fresh(0);
    backend.concat(pieces, out, inst.dim);
    res = out;
    return;
  }
  case OpKind::Pad: {
    size_t next = 2;
    std::vector<int64_t> low = resolve(inst.offsets, inst, next, env, backend);
    Tensor out = fresh(0);
    backend.pad(in(0), in(1), out, low);
    res = out;
    return;
  }
  case OpKind::ProcessIndex: {
    int64_t pos = comm.getPosition();
    std::vector<int64_t> coord = program.mesh.getCoordinate(pos);
    std::vector<int64_t> axes = inst.perm;
    if (axes.empty() && inst.dim != 1) {
      axes.resize(program.mesh.getNumAxes());
      std::iota(axes.begin(), axes.end(), 0);
    }
    if (inst.dim == 1) {
      Tensor t(DType::I64, {});
      t.setFromInt(0, pos);
      env[inst.results[0]] = backend.upload(t);
      return;
    }
    if (axes.size() != inst.results.size())
      throw Error("process index: result count differs from the axes");
    for (size_t k = 0; k < axes.size(); ++k) {
      Tensor t(DType::I64, {});
      t.setFromInt(0, coord.at(axes[k]));
      env[inst.results[k]] = backend.upload(t);
    }
    return;
  }
  case OpKind::Collective:
    executeCollective(inst, env);
    return;
  }
}

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
} // namespace

void Executor::executeCollective(const Instruction &inst,
                                 std::vector<Tensor> &env) {
  const CollectiveStep &step = inst.collective;
  const Tensor &input = env[inst.operands[0]];
  const ValueInfo &outInfo = program.values[inst.results[0]];
  Tensor &res = env[inst.results[0]];
  const AxisList &axes = step.axes;
  DType type = input.getDType();
  int64_t elem = getDTypeSize(type);
  int64_t n =
      step.kind == CollectiveKind::Permute ? 1 : comm.getGroupSize(axes);
  int64_t me =
      step.kind == CollectiveKind::Permute ? 0 : comm.getGroupIndex(axes);
  const Shape &inShape = input.getShape();
  int64_t rank = input.getRank();
  bool uneven = !inst.groupExtents.empty();
  if (uneven && static_cast<int64_t>(inst.groupExtents.size()) != n)
    throw Error(
        "uneven collective: " + std::to_string(inst.groupExtents.size()) +
        " extents for a group of " + std::to_string(n));
  auto needDim = [&](int64_t d) {
    if (d < 0 || d >= rank)
      throw Error("collective dim " + std::to_string(d) + " out of range for " +
                  input.getTypeString());
  };
  auto prefix = [&](int64_t k) {
    return std::accumulate(inst.groupExtents.begin(),
                           inst.groupExtents.begin() + k, int64_t(0));
  };
  // Moves block axis: [a, n, b, c] <-> [n, a, b, c].
  auto swapBlocks = [&](const Tensor &t, int64_t a, int64_t blocks, int64_t b,
                        int64_t c) {
    Tensor view = t.reshaped({a, blocks, b, c});
    Tensor out = allocate(type, {blocks, a, b, c}, /*zeroed=*/false);
    backend.transpose(view, out, {1, 0, 2, 3});
    return out;
  };
  auto finish = [&](Tensor t) {
    if (t.getNumElements() != getNumElements(outInfo.shape))
      throw Error(std::string("collective result ") + t.getTypeString() +
                  " does not match the declared " +
                  std::string(stringifyDType(outInfo.type)) + "[" +
                  stringifyShape(outInfo.shape) + "]");
    res = t.reshaped(outInfo.shape);
  };

  switch (step.kind) {
  case CollectiveKind::AllReduce: {
    Tensor out = allocate(type, inShape, /*zeroed=*/false);
    comm.allReduce(input.getRawData(), out.getRawData(), input.getNumElements(),
                   type, step.reduction, axes);
    return finish(out);
  }
  case CollectiveKind::MakePartial: {
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
    return finish(out);
  }
  case CollectiveKind::AllSlice: {
    needDim(step.dim);
    int64_t extent = uneven ? inst.groupExtents[me] : inShape[step.dim] / n;
    int64_t offset = uneven ? prefix(me) : me * extent;
    if (!uneven && inShape[step.dim] % n)
      throw Error("all_slice: dim " + std::to_string(step.dim) + " of " +
                  input.getTypeString() + " does not split " +
                  std::to_string(n) + " ways");
    std::vector<int64_t> offsets(rank, 0), sizes = inShape, strides(rank, 1);
    offsets[step.dim] = offset;
    sizes[step.dim] = extent;
    Tensor out = allocate(type, sizes, /*zeroed=*/false);
    backend.extractSlice(input, out, offsets, sizes, strides);
    // A padded uneven result keeps its shard at the origin.
    if (out.getShape() != outInfo.shape &&
        out.getNumElements() != getNumElements(outInfo.shape)) {
      Tensor padded = allocate(type, outInfo.shape, /*zeroed=*/true);
      backend.insertSlice(out, padded, std::vector<int64_t>(rank, 0), sizes,
                          strides);
      return finish(padded);
    }
    return finish(out);
  }
  case CollectiveKind::AllGather: {
    needDim(step.dim);
    Around ar = around(inShape, step.dim);
    if (!uneven) {
      Tensor recv =
          allocate(type, {n, ar.pre, ar.mid, ar.post}, /*zeroed=*/false);
      comm.allGather(input.getRawData(), recv.getRawData(), input.getBytes(),
                     axes);
      Tensor view = recv.reshaped({n, ar.pre, ar.mid, ar.post});
      Tensor out =
          allocate(type, {ar.pre, n, ar.mid, ar.post}, /*zeroed=*/false);
      backend.transpose(view, out, {1, 0, 2, 3});
      return finish(out);
    }
    // Uneven: member k contributes extent k of dim; the local tensor may be
    // padded beyond its own extent.
    std::vector<int64_t> offsets(rank, 0), strides(rank, 1);
    Shape mine = inShape;
    mine[step.dim] = inst.groupExtents[me];
    Tensor own = allocate(type, mine, /*zeroed=*/false);
    backend.extractSlice(input, own, offsets, mine, strides);
    std::vector<int64_t> recvBytes;
    for (int64_t k = 0; k < n; ++k)
      recvBytes.push_back(ar.pre * inst.groupExtents[k] * ar.post * elem);
    Shape full = inShape;
    full[step.dim] = prefix(n);
    Tensor recv = allocate(type, {getNumElements(full)}, /*zeroed=*/false);
    comm.allGatherV(own.getRawData(), recv.getRawData(), recvBytes, axes);
    Tensor out = allocate(type, full, /*zeroed=*/false);
    int64_t at = 0;
    for (int64_t k = 0; k < n; ++k) {
      Shape piece = inShape;
      piece[step.dim] = inst.groupExtents[k];
      Tensor block = allocate(type, piece, /*zeroed=*/false);
      std::vector<int64_t> start{at}, sz{getNumElements(piece)}, one{1};
      backend.extractSlice(recv, block, start, sz, one);
      offsets[step.dim] = prefix(k);
      backend.insertSlice(block, out, offsets, piece, strides);
      at += getNumElements(piece);
    }
    return finish(out);
  }
  case CollectiveKind::ReduceScatter: {
    needDim(step.dim);
    Around ar = around(inShape, step.dim);
    if (!uneven) {
      if (ar.mid % n)
        throw Error("reduce_scatter: dim " + std::to_string(step.dim) + " of " +
                    input.getTypeString() + " does not split " +
                    std::to_string(n) + " ways");
      Tensor packed = swapBlocks(input, ar.pre, n, ar.mid / n, ar.post);
      Tensor out =
          allocate(type, {ar.pre, ar.mid / n, ar.post}, /*zeroed=*/false);
      comm.reduceScatter(packed.getRawData(), out.getRawData(),
                         out.getNumElements(), type, step.reduction, axes);
      return finish(out);
    }
    std::vector<const Tensor *> pieces;
    std::vector<Tensor> owned;
    std::vector<int64_t> counts;
    std::vector<int64_t> offsets(rank, 0), strides(rank, 1);
    for (int64_t k = 0; k < n; ++k) {
      Shape piece = inShape;
      piece[step.dim] = inst.groupExtents[k];
      offsets[step.dim] = prefix(k);
      owned.push_back(allocate(type, piece, /*zeroed=*/false));
      backend.extractSlice(input, owned.back(), offsets, piece, strides);
      counts.push_back(getNumElements(piece));
    }
    Tensor packed =
        allocate(type, {prefix(n) * ar.pre * ar.post}, /*zeroed=*/false);
    int64_t at = 0;
    for (int64_t k = 0; k < n; ++k) {
      Tensor flat = owned[k].reshaped({counts[k]});
      backend.insertSlice(flat, packed, {at}, {counts[k]}, {1});
      at += counts[k];
    }
    Shape mine = inShape;
    mine[step.dim] = inst.groupExtents[me];
    Tensor out = allocate(type, mine, /*zeroed=*/false);
    comm.reduceScatterV(packed.getRawData(), out.getRawData(), counts, type,
                        step.reduction, axes);
    if (getNumElements(mine) != getNumElements(outInfo.shape)) {
      Tensor padded = allocate(type, outInfo.shape, /*zeroed=*/true);
      backend.insertSlice(out, padded, std::vector<int64_t>(rank, 0), mine,
                          strides);
      return finish(padded);
    }
    return finish(out);
  }
  case CollectiveKind::AllToAll: {
    int64_t split = step.dim, cat = step.srcDim;
    needDim(split);
    needDim(cat);
    if (uneven)
      throw Error("all_to_all with uneven extents is not supported");
    Around as = around(inShape, split);
    if (as.mid % n)
      throw Error("all_to_all: dim " + std::to_string(split) + " of " +
                  input.getTypeString() + " does not split " +
                  std::to_string(n) + " ways");
    Tensor packed = swapBlocks(input, as.pre, n, as.mid / n, as.post);
    Tensor recv = allocate(type, packed.getShape(), /*zeroed=*/false);
    comm.allToAll(packed.getRawData(), recv.getRawData(), packed.getBytes() / n,
                  axes);
    Shape block = inShape;
    block[split] /= n;
    Around ac = around(block, cat);
    Tensor view = recv.reshaped({n, ac.pre, ac.mid, ac.post});
    Tensor out = allocate(type, {ac.pre, n, ac.mid, ac.post}, /*zeroed=*/false);
    backend.transpose(view, out, {1, 0, 2, 3});
    return finish(out);
  }
  case CollectiveKind::Permute: {
    int64_t pos = comm.getPosition();
    int64_t dst = -1, src = -1;
    for (auto [s, d] : step.pairs) {
      if (s == pos)
        dst = d;
      if (d == pos)
        src = s;
    }
    Tensor out = allocate(type, inShape, /*zeroed=*/false);
    if (src < 0)
      backend.copy(input, out);
    comm.sendRecv(input.getRawData(), dst, out.getRawData(), src,
                  input.getBytes());
    return finish(out);
  }
  }
}
