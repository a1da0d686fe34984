//===- Executor.cpp - Runs a Program on one rank --------------------------===//

#include "autoshard/Runtime/Executor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace autoshard;
using namespace autoshard::rt;

static constexpr size_t kLive = std::numeric_limits<size_t>::max();

Executor::Executor(const Program &program, Backend &backend, Communicator &comm,
                   ExecutorOptions options)
    : program(program), backend(backend), comm(comm),
      executorOptions(options) {
  std::string err = program.verify();
  if (!err.empty())
    throw Error("invalid program: " + err);
  if (!(comm.getMesh() == program.mesh))
    throw Error("communicator mesh " + comm.getMesh().str() +
                " differs from the program's mesh " + program.mesh.str());
  planFrees();
  // Communicator groups are created collectively, once, in program order.
  for (const Instruction &inst : program.instructions)
    if (inst.kind == OpKind::Collective) {
      hasCollectives = true;
      if (inst.collective.kind != CollectiveKind::Permute)
        comm.prepareGroup(inst.collective.axes);
    }
  foldZeroInits();
  markCheckedResults();
  invariant.resize(program.values.size());
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

Executor::~Executor() = default;

/// Results execute() allocates itself with their declared type and shape
/// (or, for a reshape, views with the declared shape after checking the
/// type) cannot differ from it: checkResults runs for the other kinds only.
void Executor::markCheckedResults() {
  size_t n = program.instructions.size();
  checksResults.assign(n, true);
  for (size_t i = 0; i < n; ++i) {
    switch (program.instructions[i].kind) {
    case OpKind::Empty:
    case OpKind::Fill:
    case OpKind::Reshape:
    case OpKind::Transpose:
    case OpKind::Softmax:
    case OpKind::Gather:
    case OpKind::ExtractSlice:
    case OpKind::Concat:
    case OpKind::Pad:
      checksResults[i] = false;
      break;
    case OpKind::Matmul:
    case OpKind::BatchMatmul: // a fresh result unless it adds to its init
      checksResults[i] = !overwrites[i];
      break;
    default:
      break;
    }
  }
}

void Executor::planFrees() {
  size_t n = program.instructions.size();
  lastUse.assign(program.values.size(), 0);
  std::vector<bool> used(program.values.size(), false);
  for (size_t i = 0; i < n; ++i)
    for (ValueId id : program.instructions[i].operands) {
      lastUse[id] = i;
      used[id] = true;
    }
  for (const ProgramIO &out : program.outputs) {
    lastUse[out.value] = kLive;
    leftovers.push_back(out.value);
  }
  for (const ProgramIO &in : program.inputs)
    if (!used[in.value])
      leftovers.push_back(in.value);
  // An output read once more by a later output (returned twice) is copied
  // there; its last occurrence moves.
  movesOutput.assign(program.outputs.size(), true);
  for (size_t k = 0; k < program.outputs.size(); ++k)
    for (size_t j = k + 1; j < program.outputs.size(); ++j)
      if (program.outputs[j].value == program.outputs[k].value)
        movesOutput[k] = false;
  // Each instruction's dying operands (once each, even when read twice)
  // and its results nothing reads: computed here, not per run.
  freeBegin.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    freeBegin[i] = frees.size();
    const Instruction &inst = program.instructions[i];
    for (ValueId id : inst.operands)
      if (lastUse[id] == i &&
          std::find(frees.begin() + freeBegin[i], frees.end(), id) ==
              frees.end())
        frees.push_back(id);
    for (ValueId id : inst.results)
      if (!used[id] && lastUse[id] != kLive)
        frees.push_back(id);
  }
  freeBegin[n] = frees.size();
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
  double runStart = profiler ? Profiler::now() : 0;
  std::vector<Tensor> outputs = enqueue(inputs);
  backend.synchronize();
  if (profiler)
    profiler->addRun(Profiler::now() - runStart);
  return outputs;
}

std::vector<Tensor> Executor::enqueue(const std::vector<Tensor> &inputs) {
  replayed = false;
  if (executorOptions.cudaGraphs && !profiler)
    return enqueueGraph(inputs);
  return enqueuePlain(inputs);
}

/// What a recorded graph knows of its inputs: their addresses and types
/// (it holds no reference: a block freed and lent again at the same
/// address is read there as the recording did).
static std::vector<Executor::InputKey>
getInputKeys(const std::vector<Tensor> &inputs) {
  std::vector<Executor::InputKey> keys;
  for (const Tensor &t : inputs)
    keys.push_back(t.isNull() ? Executor::InputKey{}
                              : Executor::InputKey{t.getRawData(),
                                                   t.getDType(), t.getShape()});
  return keys;
}

static bool sameInputs(const std::vector<Tensor> &inputs,
                       const std::vector<Executor::InputKey> &keys) {
  if (inputs.size() != keys.size())
    return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor &t = inputs[i];
    if (t.isNull() || t.getRawData() != keys[i].data ||
        t.getDType() != keys[i].type || t.getShape() != keys[i].shape)
      return false;
  }
  return true;
}

std::vector<Tensor> Executor::enqueueGraph(const std::vector<Tensor> &inputs) {
  if (graph && sameInputs(inputs, graphInputs)) {
    graph->replay();
    replayed = true;
    return graphOutputs;
  }
  // Record on the second run on these buffers: the first made the
  // invariant values, loaded kernels and filled the pool.
  if (!graph && graphFailure.empty() && sameInputs(inputs, previousInputs) &&
      capture(inputs)) {
    previousInputs.clear();
    replayed = true;
    return graphOutputs;
  }
  std::vector<Tensor> outputs = enqueuePlain(inputs);
  if (!graph && graphFailure.empty())
    previousInputs = getInputKeys(inputs);
  return outputs;
}

bool Executor::capture(const std::vector<Tensor> &inputs) {
  // A collective's exchange runs on the communicator, outside the
  // backend's recording.
  if (hasCollectives) {
    graphFailure = "the program has collectives (their exchange runs on the "
                   "communicator, outside a recording)";
    return false;
  }
  if (!backend.beginCapture()) {
    graphFailure = backend.getCaptureError();
    return false;
  }
  std::vector<Tensor> outputs;
  std::string failure;
  try {
    outputs = enqueuePlain(inputs);
  } catch (const Error &e) { // the plain run that follows says it again
    failure = std::string("recording failed: ") + e.what();
  } catch (...) { // out of memory: end the recording, then let it through
    backend.endCapture();
    graphFailure = "recording failed: out of memory";
    throw;
  }
  std::unique_ptr<CapturedWork> work = backend.endCapture();
  if (!failure.empty() || !work) {
    graphFailure = !failure.empty() ? failure : backend.getCaptureError();
    return false;
  }
  graph = std::move(work);
  graphInputs = getInputKeys(inputs);
  graphOutputs = std::move(outputs);
  graph->replay(); // the recording ran nothing
  return true;
}

std::vector<Tensor> Executor::enqueuePlain(const std::vector<Tensor> &inputs) {
  // On an error, collectives still in flight must not outlive their buffers
  // and no value may outlive the run.
  struct Drain {
    Executor &e;
    bool finished = false;
    ~Drain() {
      e.backend.setLocation(nullptr);
      if (finished) { // every other value was freed after its last use
        for (ValueId id : e.leftovers)
          e.env[id] = Tensor();
        return;
      }
      try {
        e.dropPending();
      } catch (const Error &) { // already unwinding from the first error
      }
      std::fill(e.env.begin(), e.env.end(), Tensor());
    }
  } drain{*this};
  bindInputs(inputs);
  if (!invariantsMade)
    makeInvariants();
  for (current = 0; current < program.instructions.size(); ++current) {
    const Instruction &inst = program.instructions[current];
    if (skipped[current]) { // its only reader, a GEMM, overwrites instead
      freeDead(current);
      continue;
    }
    double start = 0;
    if (profiler) {
      start = Profiler::now();
      nestedSeconds = 0;
    }
    backend.setLocation(&inst.location);
    try {
      resolveOperands(inst, env);
      execute(inst, env);
      if (profiler)
        backend.synchronize();
    } catch (const DeviceFaultError &) { // names the instruction that faulted
      throw;
    } catch (const Error &e) {
      throw Error(std::string(e.what()) +
                  (inst.location.empty() ? "" : " (at " + inst.location + ")"));
    }
    if (profiler) {
      double end = Profiler::now();
      profiler->add(profileSlots[current], end - start - nestedSeconds);
      start = end;
    }
    if (checksResults[current])
      checkResults(inst, env);
    freeDead(current);
    if (profiler) // freeing: allocation time, no call
      profiler->add(allocationSlot, Profiler::now() - start, 0);
  }
  std::vector<Tensor> outputs;
  outputs.reserve(program.outputs.size());
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    ValueId id = program.outputs[k].value;
    resolvePending(id, env);
    // The run is over: its last reference to an output moves out.
    if (movesOutput[k])
      outputs.push_back(std::move(env[id]));
    else
      outputs.push_back(env[id]);
  }
  dropPending();
  drain.finished = true;
  return outputs;
}

void Executor::bindInputs(const std::vector<Tensor> &inputs) {
  if (inputs.size() != program.inputs.size())
    throw Error("program takes " + std::to_string(program.inputs.size()) +
                " inputs, got " + std::to_string(inputs.size()));
  env.resize(program.values.size()); // all null: the last run cleared it
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
}

void Executor::checkResults(const Instruction &inst,
                            const std::vector<Tensor> &env) const {
  for (ValueId id : inst.results) {
    if (!pending.empty() && pending.count(id)) // checked when awaited
      continue;
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
}

void Executor::resolveOperands(const Instruction &inst,
                               std::vector<Tensor> &env) {
  if (pending.empty())
    return;
  for (ValueId id : inst.operands)
    resolvePending(id, env);
}

void Executor::resolvePending(ValueId id, std::vector<Tensor> &env) {
  auto it = pending.find(id);
  if (it == pending.end())
    return;
  PendingCollective p = std::move(it->second);
  pending.erase(it);
  comm.waitFor(*p.done);
  finishCollective(*p.inst, p.plan.unpack(), env);
  checkResults(*p.inst, env);
}

void Executor::dropPending() {
  for (auto &entry : pending)
    comm.waitFor(*entry.second.done);
  pending.clear();
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
    Tensor t = std::move(init);
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
  case OpKind::Constant: // made before the run (makeInvariants)
    res = invariant[inst.results[0]];
    return;
  case OpKind::Empty:
    res = allocate(resultInfo(0).type, resultInfo(0).shape, /*zeroed=*/true);
    return;
  case OpKind::Fill:
    res = fresh(0);
    backend.fill(res, in(0));
    return;
  case OpKind::Reshape:
    if (in(0).getDType() != resultInfo(0).type)
      throw Error("reshape changes the element type");
    res = in(0).reshaped(resultInfo(0).shape);
    return;
  case OpKind::Matmul:
  case OpKind::BatchMatmul: {
    GemmOptions options;
    options.batched = inst.kind == OpKind::BatchMatmul;
    options.transA = inst.transA;
    options.transB = inst.transB;
    options.accumulate = !overwrites[current];
    options.tf32 = inst.tf32;
    options.epilogue = inst.epilogue;
    if (hasBias(inst.epilogue))
      options.bias = &in(3);
    Tensor c = options.accumulate ? takeInit(env, inst.operands[2], current)
                                  : fresh(0);
    backend.gemm(in(0), in(1), c, options);
    res = std::move(c);
    return;
  }
  case OpKind::Conv2D:
  case OpKind::Pool2D:
    // The backend's kernel (oneDNN on the CPU), else the loop nest.
    if (backend.hasWindowKernels())
      return executeWindow(inst, env);
    [[fallthrough]];
  case OpKind::Generic:
    return executeGeneric(inst, env);
  case OpKind::Transpose:
    res = fresh(0);
    backend.transpose(in(0), res, inst.perm);
    return;
  case OpKind::Softmax:
    res = fresh(0);
    backend.softmax(in(0), res, inst.dim);
    return;
  case OpKind::Gather:
    res = fresh(0);
    backend.gather(in(0), in(1), res, inst.perm);
    return;
  case OpKind::ExtractSlice: {
    SliceBounds b = resolveSlice(inst, /*next=*/1, env, backend);
    res = fresh(0);
    backend.extractSlice(in(0), res, b.offsets, b.sizes, b.strides);
    return;
  }
  case OpKind::InsertSlice: {
    SliceBounds b = resolveSlice(inst, /*next=*/2, env, backend);
    Tensor dest = takeInit(env, inst.operands[1], current);
    backend.insertSlice(in(0), dest, b.offsets, b.sizes, b.strides);
    res = std::move(dest);
    return;
  }
  case OpKind::Concat: {
    std::vector<const Tensor *> pieces;
    for (size_t k = 0; k < inst.operands.size(); ++k)
      pieces.push_back(&in(k));
    res = fresh(0);
    backend.concat(pieces, res, inst.dim);
    return;
  }
  case OpKind::Pad: {
    size_t next = 2;
    std::vector<int64_t> low = resolve(inst.offsets, inst, next, env, backend);
    res = fresh(0);
    backend.pad(in(0), in(1), res, low);
    return;
  }
  case OpKind::ProcessIndex:
    for (ValueId id : inst.results) // made before the run
      env[id] = invariant[id];
    return;
  case OpKind::Collective:
    return executeCollective(inst, env);
  }
}

void Executor::executeWindow(const Instruction &inst,
                             std::vector<Tensor> &env) {
  const Tensor &in = env[inst.operands[0]];
  Tensor out = takeInit(env, inst.operands[2], current);
  if (inst.kind == OpKind::Conv2D)
    backend.conv2d(in, env[inst.operands[1]], out, inst.strides, inst.offsets);
  else
    backend.pool2d(in, out, inst.sizes, inst.strides, inst.offsets,
                   inst.dim == 0 ? ReductionKind::Max : ReductionKind::Sum);
  env[inst.results[0]] = std::move(out);
}

void Executor::executeGeneric(const Instruction &inst,
                              std::vector<Tensor> &env) {
  const GenericSpec &g = *inst.generic;
  auto in = [&](size_t k) -> const Tensor & { return env[inst.operands[k]]; };
  // The operand lists live in members: a run builds no vectors per loop nest.
  GenericArgs &a = genericArgs;
  a.ins.clear();
  a.caps.clear();
  a.outs.clear();
  a.outPtrs.clear();
  for (int32_t k = 0; k < g.numInputs; ++k)
    a.ins.push_back(&in(k));
  for (int32_t k = 0; k < g.numCaptures; ++k)
    a.caps.push_back(&in(g.numInputs + g.numOutputs + k));
  for (int32_t k = 0; k < g.numOutputs; ++k)
    a.outs.push_back(takeInit(env, inst.operands[g.numInputs + k], current));
  for (Tensor &t : a.outs)
    a.outPtrs.push_back(&t);
  if (current < kernels.size() && kernels[current])
    runKernel(kernels[current], a.ins, a.outPtrs, a.caps);
  else
    backend.generic(g, a.ins, a.caps, a.outPtrs);
  for (int32_t k = 0; k < g.numOutputs; ++k)
    env[inst.results[k]] = std::move(a.outs[k]);
}

void Executor::makeInvariants() {
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    const Instruction &inst = program.instructions[i];
    if (skipped[i] || inst.results.empty() ||
        !invariant[inst.results[0]].isNull())
      continue;
    if (inst.kind == OpKind::Constant)
      invariant[inst.results[0]] = backend.upload(inst.constant);
    else if (inst.kind == OpKind::ProcessIndex)
      makeProcessIndex(inst, invariant); // indexed by value, as env is
  }
  invariantsMade = true;
}

void Executor::makeProcessIndex(const Instruction &inst,
                                std::vector<Tensor> &env) {
  auto scalar = [&](int64_t v) {
    Tensor t(DType::I64, {});
    t.setFromInt(0, v);
    return backend.upload(t);
  };
  int64_t pos = comm.getPosition();
  if (inst.dim == 1) { // the linear index
    env[inst.results[0]] = scalar(pos);
    return;
  }
  std::vector<int64_t> coord = program.mesh.getCoordinate(pos);
  std::vector<int64_t> axes = inst.perm;
  if (axes.empty()) {
    axes.resize(program.mesh.getNumAxes());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (axes.size() != inst.results.size())
    throw Error("process index: result count differs from the axes");
  for (size_t k = 0; k < axes.size(); ++k)
    env[inst.results[k]] = scalar(coord.at(axes[k]));
}
