//===- PlanFile.cpp - .asplan files: compile here, run there --------------===//

#include "autoshard/Runtime/PlanFile.h"

#include "plan.pb.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <unistd.h>

using namespace autoshard;
using namespace autoshard::rt;
namespace pb = autoshard::plan;
namespace fs = std::filesystem;

namespace {

/// "\x89ASPLAN\n": the high byte and newline catch text-mode transfers.
constexpr char kMagic[8] = {'\x89', 'A', 'S', 'P', 'L', 'A', 'N', '\n'};
/// Magic, version (u32), reserved (u32), payload size (u64), xxh3 (u64).
constexpr size_t kHeaderSize = 32;

void putU32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out += static_cast<char>(v >> (8 * i) & 0xff);
}
void putU64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>(v >> (8 * i) & 0xff);
}
uint64_t getLE(std::string_view bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v |= uint64_t(static_cast<uint8_t>(bytes[at + i])) << (8 * i);
  return v;
}

template <typename Repeated, typename Range>
void putInts(Repeated *out, const Range &values) {
  for (auto v : values)
    out->Add(v);
}
template <typename Vector, typename Repeated>
Vector getInts(const Repeated &in) {
  Vector out;
  for (auto v : in)
    out.push_back(v);
  return out;
}

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

void putLayout(pb::Layout *out, const TensorLayout &l) {
  for (const LayoutAxes &axes : l.dimAxes)
    putInts(out->add_dim_axes()->mutable_v(), axes);
  putInts(out->mutable_partial_axes(), l.partialAxes);
  out->set_partial_kind(std::string(stringifyReductionKind(l.partialKind)));
  for (const std::vector<int64_t> &sizes : l.unevenSizes)
    putInts(out->add_uneven_sizes()->mutable_v(), sizes);
}

void putMesh(pb::Mesh *out, const DeviceMesh &mesh) {
  for (const MeshAxis &a : mesh.getAxes()) {
    pb::MeshAxis *axis = out->add_axes();
    axis->set_name(a.name);
    axis->set_size(a.size);
    axis->set_bandwidth_gbps(a.bandwidthGBps);
    axis->set_latency_us(a.latencyUs);
  }
  putInts(out->mutable_device_ids(), mesh.getDeviceIds());
}

void putIO(pb::ProgramIO *out, const ProgramIO &io) {
  out->set_value(io.value);
  out->set_name(io.name);
  out->set_file(io.file);
  out->set_file_checksum(io.fileChecksum);
  putInts(out->mutable_global_shape(), io.globalShape);
  putLayout(out->mutable_layout(), io.layout);
  out->set_tied_input(io.tiedInput);
  out->set_zero_init(io.zeroInit);
}

void putGeneric(pb::GenericSpec *out, const GenericSpec &g) {
  putInts(out->mutable_loop_ranges(), g.loopRanges);
  out->set_num_inputs(g.numInputs);
  out->set_num_outputs(g.numOutputs);
  out->set_num_captures(g.numCaptures);
  for (const AffineMapSpec &m : g.maps) {
    pb::AffineMap *map = out->add_maps();
    map->set_num_results(m.numResults);
    putInts(map->mutable_coeffs(), m.coeffs);
    putInts(map->mutable_consts(), m.consts);
  }
  for (const ScalarInst &s : g.body) {
    pb::ScalarInst *inst = out->add_body();
    inst->set_op(static_cast<uint32_t>(s.op));
    inst->set_type(std::string(stringifyDType(s.type)));
    inst->set_src_type(std::string(stringifyDType(s.srcType)));
    inst->set_dst(s.dst);
    inst->set_a(s.a);
    inst->set_b(s.b);
    inst->set_c(s.c);
    inst->set_imm(s.imm);
    inst->set_fimm(s.fimm);
    putInts(inst->mutable_args(), s.args);
  }
  out->set_num_regs(g.numRegs);
  putInts(out->mutable_yields(), g.yields);
  out->set_kernel(g.kernel);
  out->set_gpu_kernel(g.gpuKernel);
  out->set_gpu_threads(g.gpuThreads);
}

void putCollective(pb::Collective *out, const CollectiveStep &c) {
  out->set_kind(static_cast<uint32_t>(c.kind));
  putInts(out->mutable_axes(), c.axes);
  out->set_dim(c.dim);
  out->set_src_dim(c.srcDim);
  out->set_reduction(std::string(stringifyReductionKind(c.reduction)));
  for (const auto &[from, to] : c.pairs) {
    out->add_pairs(from);
    out->add_pairs(to);
  }
  putLayout(out->mutable_before(), c.before);
  putLayout(out->mutable_after(), c.after);
}

/// Builds the Plan message, storing each distinct loop nest and blob once.
class Encoder {
public:
  pb::Plan plan;

  void putProgram(pb::Program *out, const Program &p) {
    putMesh(out->mutable_mesh(), p.mesh);
    for (const ValueInfo &v : p.values) {
      pb::ValueInfo *info = out->add_values();
      info->set_dtype(std::string(stringifyDType(v.type)));
      putInts(info->mutable_shape(), v.shape);
    }
    for (const ProgramIO &io : p.inputs)
      putIO(out->add_inputs(), io);
    for (const ProgramIO &io : p.outputs)
      putIO(out->add_outputs(), io);
    for (const Instruction &inst : p.instructions)
      putInstruction(out->add_instructions(), inst);
    if (!p.kernelLibrary.empty()) {
      out->set_kernel_library(addBlob(readFileBytes(p.kernelLibrary)));
      out->set_kernel_library_name(
          fs::path(p.kernelLibrary).filename().string());
    }
    if (!p.gpuModule.empty())
      out->set_gpu_module(addBlob(p.gpuModule));
  }

private:
  void putInstruction(pb::Instruction *out, const Instruction &inst) {
    out->set_kind(static_cast<uint32_t>(inst.kind));
    putInts(out->mutable_operands(), inst.operands);
    putInts(out->mutable_results(), inst.results);
    out->set_location(inst.location);
    out->set_trans_a(inst.transA);
    out->set_trans_b(inst.transB);
    out->set_tf32(inst.tf32);
    if (inst.epilogue != GemmEpilogue::None)
      out->set_epilogue(std::string(stringifyGemmEpilogue(inst.epilogue)));
    putInts(out->mutable_perm(), inst.perm);
    out->set_dim(inst.dim);
    putInts(out->mutable_offsets(), inst.offsets);
    putInts(out->mutable_sizes(), inst.sizes);
    putInts(out->mutable_strides(), inst.strides);
    if (inst.generic)
      out->set_generic(addGeneric(*inst.generic));
    if (!inst.constant.isNull()) {
      pb::TensorData *t = out->mutable_constant();
      t->set_dtype(std::string(stringifyDType(inst.constant.getDType())));
      putInts(t->mutable_shape(), inst.constant.getShape());
      t->set_data(inst.constant.getRawData(), inst.constant.getBytes());
    }
    // Most instructions carry the default step: leave it out.
    const CollectiveStep &c = inst.collective;
    if (inst.kind == OpKind::Collective || !c.axes.empty() || c.dim != -1 ||
        c.srcDim != -1 || !c.pairs.empty() ||
        c.kind != CollectiveKind::AllGather ||
        c.reduction != ReductionKind::Sum || c.before.getRank() != 0 ||
        c.after.getRank() != 0)
      putCollective(out->mutable_collective(), c);
    putInts(out->mutable_group_extents(), inst.groupExtents);
  }

  uint32_t addGeneric(const GenericSpec &g) {
    if (auto it = byPointer.find(&g); it != byPointer.end())
      return it->second;
    pb::GenericSpec message;
    putGeneric(&message, g);
    std::string key = message.SerializeAsString();
    auto [it, inserted] =
        byContent.try_emplace(key, plan.generics_size() + 1);
    if (inserted)
      *plan.add_generics() = std::move(message);
    return byPointer[&g] = it->second;
  }

  uint32_t addBlob(std::string bytes) {
    auto [it, inserted] = blobs.try_emplace(bytes, plan.blobs_size() + 1);
    if (inserted)
      plan.add_blobs(std::move(bytes));
    return it->second;
  }

  std::map<const GenericSpec *, uint32_t> byPointer;
  std::map<std::string, uint32_t> byContent;
  std::map<std::string, uint32_t> blobs;
};

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

/// Thrown for a payload that decodes but does not describe a valid plan.
struct Invalid {
  std::string message;
};

DType getDType(const std::string &name) {
  if (std::optional<DType> type = parseDType(name))
    return *type;
  throw Invalid{"unknown element type '" + name + "'"};
}

ReductionKind getReduction(const std::string &name) {
  if (std::optional<ReductionKind> kind = symbolizeReductionKind(name))
    return *kind;
  throw Invalid{"unknown reduction '" + name + "'"};
}

template <typename Enum> Enum getEnum(uint32_t v, Enum last, const char *what) {
  if (v > static_cast<uint32_t>(last))
    throw Invalid{std::string("unknown ") + what + " " + std::to_string(v)};
  return static_cast<Enum>(v);
}

TensorLayout getLayout(const pb::Layout &in) {
  TensorLayout l;
  for (const pb::Ints &axes : in.dim_axes())
    l.dimAxes.push_back(getInts<LayoutAxes>(axes.v()));
  l.partialAxes = getInts<LayoutAxes>(in.partial_axes());
  l.partialKind = getReduction(in.partial_kind());
  for (const pb::Ints &sizes : in.uneven_sizes())
    l.unevenSizes.push_back(getInts<std::vector<int64_t>>(sizes.v()));
  return l;
}

DeviceMesh getMesh(const pb::Mesh &in) {
  std::vector<MeshAxis> axes;
  for (const pb::MeshAxis &a : in.axes())
    axes.push_back({a.name(), a.size(), a.bandwidth_gbps(), a.latency_us()});
  DeviceMesh mesh(std::move(axes),
                  getInts<std::vector<int64_t>>(in.device_ids()));
  if (std::string error = mesh.validate(); !error.empty())
    throw Invalid{"mesh: " + error};
  return mesh;
}

ProgramIO getIO(const pb::ProgramIO &in) {
  ProgramIO io;
  io.value = in.value();
  io.name = in.name();
  io.file = in.file();
  io.fileChecksum = in.file_checksum();
  io.globalShape = getInts<Shape>(in.global_shape());
  io.layout = getLayout(in.layout());
  io.tiedInput = in.tied_input();
  io.zeroInit = in.zero_init();
  return io;
}

std::shared_ptr<const GenericSpec> getGeneric(const pb::GenericSpec &in) {
  auto g = std::make_shared<GenericSpec>();
  g->loopRanges = getInts<std::vector<int64_t>>(in.loop_ranges());
  g->numInputs = in.num_inputs();
  g->numOutputs = in.num_outputs();
  g->numCaptures = in.num_captures();
  for (const pb::AffineMap &m : in.maps())
    g->maps.push_back({m.num_results(), getInts<std::vector<int64_t>>(m.coeffs()),
                       getInts<std::vector<int64_t>>(m.consts())});
  for (const pb::ScalarInst &s : in.body()) {
    ScalarInst inst;
    inst.op = getEnum(s.op(), ScalarOp::ZExt, "scalar op");
    inst.type = getDType(s.type());
    inst.srcType = getDType(s.src_type());
    inst.dst = s.dst();
    inst.a = s.a();
    inst.b = s.b();
    inst.c = s.c();
    inst.imm = s.imm();
    inst.fimm = s.fimm();
    inst.args = getInts<std::vector<int32_t>>(s.args());
    g->body.push_back(std::move(inst));
  }
  g->numRegs = in.num_regs();
  g->yields = getInts<std::vector<int32_t>>(in.yields());
  g->kernel = in.kernel();
  g->gpuKernel = in.gpu_kernel();
  g->gpuThreads = in.gpu_threads();
  return g;
}

CollectiveStep getCollective(const pb::Collective &in) {
  CollectiveStep c;
  c.kind = getEnum(in.kind(), CollectiveKind::MakePartial, "collective");
  c.axes = getInts<std::vector<int64_t>>(in.axes());
  c.dim = in.dim();
  c.srcDim = in.src_dim();
  c.reduction = getReduction(in.reduction());
  if (in.pairs_size() % 2)
    throw Invalid{"a permute's pairs have an odd count"};
  for (int i = 0; i < in.pairs_size(); i += 2)
    c.pairs.emplace_back(in.pairs(i), in.pairs(i + 1));
  c.before = getLayout(in.before());
  c.after = getLayout(in.after());
  return c;
}

/// A value's size in bytes; its dims come from the file, so a product past
/// int64 (which would wrap to a small buffer, then be written past) or a
/// negative dim is an invalid plan.
int64_t checkedBytes(DType type, const Shape &shape, const char *what) {
  int64_t bytes = getDTypeSize(type);
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(bytes, d, &bytes))
      throw Invalid{std::string(what) + " of type " +
                    std::string(stringifyDType(type)) + "[" +
                    stringifyShape(shape) +
                    "] has a negative dim or more bytes than a buffer can "
                    "hold"};
  return bytes;
}

Tensor getTensor(const pb::TensorData &in) {
  Shape shape = getInts<Shape>(in.shape());
  DType type = getDType(in.dtype());
  // Checked before allocating: a constant that claims 2^40 elements and
  // holds none must not size a buffer.
  int64_t bytes = checkedBytes(type, shape, "a constant");
  if (static_cast<int64_t>(in.data().size()) != bytes)
    throw Invalid{"a constant of type " + std::string(stringifyDType(type)) +
                  "[" + stringifyShape(shape) + "] holds " +
                  std::to_string(in.data().size()) + " bytes"};
  Tensor t(type, shape);
  std::memcpy(t.getRawData(), in.data().data(), in.data().size());
  return t;
}

/// The default kernel cache (KernelCompiler's getKernelCacheDir).
std::string defaultKernelCacheDir() {
  if (const char *dir = std::getenv("AUTOSHARD_KERNEL_CACHE"); dir && *dir)
    return dir;
  fs::path path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    path = xdg;
  else if (const char *home = std::getenv("HOME"); home && *home)
    path = fs::path(home) / ".cache";
  else
    path = fs::temp_directory_path();
  return (path / "autoshard" / "kernels").string();
}

/// Writes `bytes` to `path` through a temporary file renamed into place, so
/// readers (other ranks, a concurrent compile) never see a partial file.
void writeAtomically(const fs::path &path, std::string_view bytes) {
  std::random_device random;
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(random());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(bytes.data(), bytes.size());
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw Error("cannot write '" + tmp.string() + "'");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error("cannot write '" + path.string() + "'");
  }
}

/// The path of an embedded kernel library in the cache, written there unless
/// a file with the same bytes already is (the compile that made it).
std::string materializeLibrary(const std::string &bytes, std::string name,
                               std::string cacheDir) {
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.')
    name = "autoshard-plan-" + formatHash(hashBytes(bytes.data(),
                                                    bytes.size())) + ".so";
  if (cacheDir.empty())
    cacheDir = defaultKernelCacheDir();
  std::error_code ec;
  fs::create_directories(cacheDir, ec);
  fs::path path = fs::path(cacheDir) / name;
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::string existing((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
    if (existing == bytes)
      return path.string();
  }
  writeAtomically(path, bytes);
  return path.string();
}

class Decoder {
public:
  Decoder(const pb::Plan &plan, std::string cacheDir)
      : plan(plan), cacheDir(std::move(cacheDir)) {}

  Plan decode() {
    for (const pb::GenericSpec &g : plan.generics())
      generics.push_back(getGeneric(g));
    Plan out;
    for (const pb::Program &p : plan.programs())
      out.programs.push_back(getProgram(p));
    if (out.programs.empty())
      throw Invalid{"no program"};
    for (uint32_t index : plan.rank_program()) {
      if (index >= out.programs.size())
        throw Invalid{"a rank's program " + std::to_string(index) +
                      " does not exist"};
      out.rankProgram.push_back(index);
    }
    return out;
  }

private:
  const std::string &getBlob(uint32_t index) const {
    if (index == 0 || static_cast<int>(index) > plan.blobs_size())
      throw Invalid{"blob " + std::to_string(index) + " does not exist"};
    return plan.blobs(index - 1);
  }

  Instruction getInstruction(const pb::Instruction &in) const {
    Instruction inst;
    inst.kind = getEnum(in.kind(), OpKind::Pool2D, "instruction kind");
    inst.operands = getInts<std::vector<ValueId>>(in.operands());
    inst.results = getInts<std::vector<ValueId>>(in.results());
    inst.location = in.location();
    inst.transA = in.trans_a();
    inst.transB = in.trans_b();
    inst.tf32 = in.tf32();
    if (!in.epilogue().empty()) {
      std::optional<GemmEpilogue> e = symbolizeGemmEpilogue(in.epilogue());
      if (!e)
        throw Invalid{"unknown GEMM epilogue '" + in.epilogue() + "'"};
      inst.epilogue = *e;
    }
    inst.perm = getInts<std::vector<int64_t>>(in.perm());
    inst.dim = in.dim();
    inst.offsets = getInts<std::vector<int64_t>>(in.offsets());
    inst.sizes = getInts<std::vector<int64_t>>(in.sizes());
    inst.strides = getInts<std::vector<int64_t>>(in.strides());
    if (uint32_t g = in.generic()) {
      if (g > generics.size())
        throw Invalid{"loop nest " + std::to_string(g) + " does not exist"};
      inst.generic = generics[g - 1];
    }
    if (in.has_constant())
      inst.constant = getTensor(in.constant());
    if (in.has_collective())
      inst.collective = getCollective(in.collective());
    inst.groupExtents = getInts<std::vector<int64_t>>(in.group_extents());
    return inst;
  }

  Program getProgram(const pb::Program &in) const {
    Program p;
    p.mesh = getMesh(in.mesh());
    for (const pb::ValueInfo &v : in.values()) {
      p.values.push_back({getDType(v.dtype()), getInts<Shape>(v.shape())});
      checkedBytes(p.values.back().type, p.values.back().shape, "a value");
    }
    for (const pb::ProgramIO &io : in.inputs())
      p.inputs.push_back(getIO(io));
    for (const pb::ProgramIO &io : in.outputs())
      p.outputs.push_back(getIO(io));
    for (const pb::Instruction &inst : in.instructions())
      p.instructions.push_back(getInstruction(inst));
    if (in.kernel_library())
      p.kernelLibrary = materializeLibrary(getBlob(in.kernel_library()),
                                           in.kernel_library_name(), cacheDir);
    if (in.gpu_module())
      p.gpuModule = getBlob(in.gpu_module());
    return p;
  }

  const pb::Plan &plan;
  std::string cacheDir;
  std::vector<std::shared_ptr<const GenericSpec>> generics;
};

} // namespace

const Program &Plan::getProgram(int64_t rank) const {
  if (programs.empty())
    throw Error("the plan has no program");
  if (rankProgram.empty())
    return programs[0];
  if (rank < 0 || rank >= static_cast<int64_t>(rankProgram.size()))
    throw Error("the plan has programs for " +
                std::to_string(rankProgram.size()) + " ranks, not rank " +
                std::to_string(rank));
  return programs[rankProgram[rank]];
}

uint64_t rt::hashBytes(const void *data, size_t size) {
  return XXH3_64bits(data, size);
}

std::string rt::formatHash(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(hash));
  return buf;
}

std::string rt::readFileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot open '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad())
    throw Error("cannot read '" + path + "'");
  return bytes.str();
}

std::string rt::encodePlan(const Plan &plan) {
  Encoder encoder;
  encoder.plan.set_producer("autoshard plan format " +
                            std::to_string(kPlanFormatVersion));
  for (const Program &p : plan.programs)
    encoder.putProgram(encoder.plan.add_programs(), p);
  putInts(encoder.plan.mutable_rank_program(), plan.rankProgram);
  std::string payload;
  if (!encoder.plan.SerializeToString(&payload))
    throw Error("cannot serialize the plan (over 2 GiB?)");
  std::string out(kMagic, sizeof(kMagic));
  putU32(out, kPlanFormatVersion);
  putU32(out, 0);
  putU64(out, payload.size());
  putU64(out, hashBytes(payload.data(), payload.size()));
  return out + payload;
}

Plan rt::decodePlan(std::string_view bytes, const std::string &name,
                    const std::string &kernelCacheDir) {
  auto fail = [&](const std::string &message) -> Error {
    return Error(name + ": " + message);
  };
  if (bytes.size() < sizeof(kMagic) ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    throw fail("not an autoshard plan file (no ASPLAN header)");
  if (bytes.size() < kHeaderSize)
    throw fail("truncated: " + std::to_string(bytes.size()) +
               " bytes, shorter than the plan header");
  uint32_t version = getLE(bytes, 8, 4);
  if (version != kPlanFormatVersion)
    throw fail("plan format version " + std::to_string(version) +
               ", but this autoshard-run reads version " +
               std::to_string(kPlanFormatVersion) +
               "; compile it again with the matching autoshard");
  uint64_t size = getLE(bytes, 16, 8), expected = getLE(bytes, 24, 8);
  std::string_view payload = bytes.substr(kHeaderSize);
  if (payload.size() < size)
    throw fail("truncated: " + std::to_string(bytes.size()) + " of " +
               std::to_string(kHeaderSize + size) + " bytes");
  if (payload.size() > size)
    throw fail("corrupt: " + std::to_string(payload.size() - size) +
               " bytes after the end of the plan");
  if (uint64_t sum = hashBytes(payload.data(), payload.size());
      sum != expected)
    throw fail("corrupt: checksum " + formatHash(sum) + ", expected " +
               formatHash(expected));
  pb::Plan plan;
  if (payload.size() > INT32_MAX ||
      !plan.ParseFromArray(payload.data(), static_cast<int>(payload.size())))
    throw fail("corrupt: the plan does not decode");
  try {
    return Decoder(plan, kernelCacheDir).decode();
  } catch (const Invalid &e) {
    throw fail("invalid plan: " + e.message);
  } catch (const Error &e) {
    throw fail(e.what());
  }
}

void rt::writePlanFile(const std::string &path, const Plan &plan) {
  writeAtomically(path, encodePlan(plan));
}

Plan rt::readPlanFile(const std::string &path,
                      const std::string &kernelCacheDir) {
  std::string bytes = readFileBytes(path);
  return decodePlan(bytes, path, kernelCacheDir);
}
