//===- PlanFileTest.cpp - .asplan round trips and errors ------------------===//
//
// Every field of a Program is set to a value other than its default, written
// and read back, and compared field by field: a field the plan file forgets
// comes back as its default and fails. The struct sizes are pinned too, so a
// field added to Program.h fails here until PlanFile.cpp and this test know
// it.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/PlanFile.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace autoshard;
using namespace autoshard::rt;
namespace fs = std::filesystem;

namespace {

TensorLayout makeLayout() {
  TensorLayout l;
  l.dimAxes = {{0}, {}, {2, 1}};
  l.partialAxes = {3};
  l.partialKind = ReductionKind::Max;
  l.unevenSizes = {{3, 5}, {}, {}};
  return l;
}

DeviceMesh makeMesh() {
  return DeviceMesh({MeshAxis{"dp", 2, 25.5, 3.25}, MeshAxis{"mp", 1, 7, 1.5},
                     MeshAxis{"pp", 1, 0, 0}, MeshAxis{"ep", 1, 1, 2}},
                    {1, 0});
}

ProgramIO makeIO(ValueId value, int tied, bool zero) {
  ProgramIO io;
  io.value = value;
  io.name = "w" + std::to_string(value);
  io.file = "weights/w" + std::to_string(value) + ".npy";
  io.fileChecksum = "0123456789abcdef";
  io.globalShape = {8, 1, 2};
  io.layout = makeLayout();
  io.tiedInput = tied;
  io.zeroInit = zero;
  return io;
}

std::shared_ptr<GenericSpec> makeGeneric() {
  auto g = std::make_shared<GenericSpec>();
  g->loopRanges = {4, 2};
  g->numInputs = 1;
  g->numOutputs = 1;
  g->numCaptures = 1;
  g->maps = {{2, {1, 0, 0, 1}, {0, 1}}, {1, {0, 1}, {-1}}};
  ScalarInst s;
  s.op = ScalarOp::FToUI;
  s.type = DType::I64;
  s.srcType = DType::F64;
  s.dst = 7;
  s.a = 1;
  s.b = 2;
  s.c = 3;
  s.imm = -42;
  s.fimm = 2.5;
  s.args = {4, 5};
  g->body = {s, s};
  g->body[1].op = ScalarOp::FCast;
  g->body[1].type = DType::BF16;
  g->body[1].srcType = DType::F16;
  g->numRegs = 9;
  g->yields = {7};
  g->kernel = "autoshard_kernel_3";
  g->gpuKernel = "gpu_kernel_3";
  g->gpuThreads = 4096;
  return g;
}

Instruction makeInstruction(std::shared_ptr<const GenericSpec> generic) {
  Instruction inst;
  inst.kind = OpKind::Collective;
  inst.operands = {0, 1};
  inst.results = {2};
  inst.location = "model.mlir:3:7 linalg.generic";
  inst.transA = inst.transB = true;
  inst.tf32 = true;
  inst.epilogue = GemmEpilogue::BiasGelu;
  inst.perm = {2, 0, 1};
  inst.dim = 2;
  inst.offsets = {1, kDynamic};
  inst.sizes = {3, 4};
  inst.strides = {1, 2};
  inst.generic = std::move(generic);
  inst.constant = Tensor(DType::I32, {2, 3});
  for (int64_t i = 0; i < 6; ++i)
    inst.constant.setFromInt(i, i * 11 - 7);
  CollectiveStep &c = inst.collective;
  c.kind = CollectiveKind::AllToAll;
  c.axes = {0, 1};
  c.dim = 1;
  c.srcDim = 0;
  c.reduction = ReductionKind::Product;
  c.pairs = {{0, 1}, {1, 0}};
  c.before = makeLayout();
  c.after = TensorLayout::replicated(2);
  inst.groupExtents = {5, 3};
  return inst;
}

/// A program with every field set (it need not be executable).
Program makeFullProgram(const std::string &kernelLibrary) {
  Program p;
  p.mesh = makeMesh();
  for (DType t : {DType::I1, DType::F64, DType::BF16, DType::F16})
    p.addValue(t, {static_cast<int64_t>(p.values.size()), 2});
  p.inputs = {makeIO(0, -1, true), makeIO(1, -1, false)};
  p.outputs = {makeIO(2, 1, false)};
  std::shared_ptr<const GenericSpec> g = makeGeneric();
  p.instructions = {makeInstruction(g), makeInstruction(g)};
  p.instructions[1].kind = OpKind::Generic;
  p.instructions[1].tf32 = false;
  p.instructions[1].epilogue = GemmEpilogue::None;
  Tensor half(DType::BF16, {3});
  for (int64_t i = 0; i < 3; ++i)
    half.setFromDouble(i, 1.0 / (i + 3));
  p.instructions[1].constant = half;
  p.kernelLibrary = kernelLibrary;
  p.gpuModule = "// PTX\n.version 8.0\n";
  return p;
}

void expectSameLayout(const TensorLayout &a, const TensorLayout &b) {
  EXPECT_TRUE(sameFields(a, b, /*kindOnlyWhenPartial=*/false));
  EXPECT_EQ(a.partialKind, b.partialKind);
}

void expectSameIO(const ProgramIO &a, const ProgramIO &b) {
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.file, b.file);
  EXPECT_EQ(a.fileChecksum, b.fileChecksum);
  EXPECT_EQ(a.globalShape, b.globalShape);
  expectSameLayout(a.layout, b.layout);
  EXPECT_EQ(a.tiedInput, b.tiedInput);
  EXPECT_EQ(a.zeroInit, b.zeroInit);
}

void expectSameGeneric(const GenericSpec &a, const GenericSpec &b) {
  EXPECT_EQ(a.loopRanges, b.loopRanges);
  EXPECT_EQ(a.numInputs, b.numInputs);
  EXPECT_EQ(a.numOutputs, b.numOutputs);
  EXPECT_EQ(a.numCaptures, b.numCaptures);
  ASSERT_EQ(a.maps.size(), b.maps.size());
  for (size_t i = 0; i < a.maps.size(); ++i) {
    EXPECT_EQ(a.maps[i].numResults, b.maps[i].numResults);
    EXPECT_EQ(a.maps[i].coeffs, b.maps[i].coeffs);
    EXPECT_EQ(a.maps[i].consts, b.maps[i].consts);
  }
  ASSERT_EQ(a.body.size(), b.body.size());
  for (size_t i = 0; i < a.body.size(); ++i) {
    const ScalarInst &x = a.body[i], &y = b.body[i];
    EXPECT_EQ(x.op, y.op);
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.srcType, y.srcType);
    EXPECT_EQ(x.dst, y.dst);
    EXPECT_EQ(x.a, y.a);
    EXPECT_EQ(x.b, y.b);
    EXPECT_EQ(x.c, y.c);
    EXPECT_EQ(x.imm, y.imm);
    EXPECT_EQ(x.fimm, y.fimm);
    EXPECT_EQ(x.args, y.args);
  }
  EXPECT_EQ(a.numRegs, b.numRegs);
  EXPECT_EQ(a.yields, b.yields);
  EXPECT_EQ(a.kernel, b.kernel);
  EXPECT_EQ(a.gpuKernel, b.gpuKernel);
  EXPECT_EQ(a.gpuThreads, b.gpuThreads);
}

void expectSameInstruction(const Instruction &a, const Instruction &b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.operands, b.operands);
  EXPECT_EQ(a.results, b.results);
  EXPECT_EQ(a.location, b.location);
  EXPECT_EQ(a.transA, b.transA);
  EXPECT_EQ(a.transB, b.transB);
  EXPECT_EQ(a.tf32, b.tf32);
  EXPECT_EQ(a.epilogue, b.epilogue);
  EXPECT_EQ(a.perm, b.perm);
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_EQ(a.sizes, b.sizes);
  EXPECT_EQ(a.strides, b.strides);
  ASSERT_EQ(!a.generic, !b.generic);
  if (a.generic)
    expectSameGeneric(*a.generic, *b.generic);
  ASSERT_EQ(a.constant.isNull(), b.constant.isNull());
  if (!a.constant.isNull()) {
    EXPECT_EQ(a.constant.getTypeString(), b.constant.getTypeString());
    ASSERT_EQ(a.constant.getBytes(), b.constant.getBytes());
    EXPECT_EQ(std::memcmp(a.constant.getRawData(), b.constant.getRawData(),
                          a.constant.getBytes()),
              0);
  }
  const CollectiveStep &x = a.collective, &y = b.collective;
  EXPECT_EQ(x.kind, y.kind);
  EXPECT_EQ(x.axes, y.axes);
  EXPECT_EQ(x.dim, y.dim);
  EXPECT_EQ(x.srcDim, y.srcDim);
  EXPECT_EQ(x.reduction, y.reduction);
  EXPECT_EQ(x.pairs, y.pairs);
  expectSameLayout(x.before, y.before);
  expectSameLayout(x.after, y.after);
  EXPECT_EQ(a.groupExtents, b.groupExtents);
}

void expectSameProgram(const Program &a, const Program &b) {
  EXPECT_TRUE(a.mesh == b.mesh);
  ASSERT_EQ(a.mesh.getNumAxes(), b.mesh.getNumAxes());
  for (int64_t i = 0; i < a.mesh.getNumAxes(); ++i) {
    EXPECT_EQ(a.mesh.getAxis(i).name, b.mesh.getAxis(i).name);
    EXPECT_EQ(a.mesh.getAxis(i).size, b.mesh.getAxis(i).size);
    EXPECT_EQ(a.mesh.getAxis(i).bandwidthGBps, b.mesh.getAxis(i).bandwidthGBps);
    EXPECT_EQ(a.mesh.getAxis(i).latencyUs, b.mesh.getAxis(i).latencyUs);
  }
  EXPECT_EQ(a.mesh.getDeviceIds(), b.mesh.getDeviceIds());
  ASSERT_EQ(a.values.size(), b.values.size());
  for (size_t i = 0; i < a.values.size(); ++i) {
    EXPECT_EQ(a.values[i].type, b.values[i].type);
    EXPECT_EQ(a.values[i].shape, b.values[i].shape);
  }
  ASSERT_EQ(a.inputs.size(), b.inputs.size());
  for (size_t i = 0; i < a.inputs.size(); ++i)
    expectSameIO(a.inputs[i], b.inputs[i]);
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (size_t i = 0; i < a.outputs.size(); ++i)
    expectSameIO(a.outputs[i], b.outputs[i]);
  ASSERT_EQ(a.instructions.size(), b.instructions.size());
  for (size_t i = 0; i < a.instructions.size(); ++i)
    expectSameInstruction(a.instructions[i], b.instructions[i]);
  EXPECT_EQ(a.gpuModule, b.gpuModule);
  // kernelLibrary is a path: the bytes behind it must match.
  ASSERT_EQ(a.kernelLibrary.empty(), b.kernelLibrary.empty());
  if (!a.kernelLibrary.empty())
    EXPECT_EQ(readFileBytes(a.kernelLibrary), readFileBytes(b.kernelLibrary));
}

class PlanFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("autoshard-planfile-" + std::to_string(::getpid()));
    fs::create_directories(dir / "build");
    library = (dir / "build" / "autoshard-0123.so").string();
    std::ofstream(library, std::ios::binary) << std::string("\x7f" "ELF\0lib", 8);
    cache = (dir / "cache").string();
  }
  void TearDown() override { fs::remove_all(dir); }

  /// The error decoding `bytes` throws ("" if none).
  std::string decodeError(const std::string &bytes) {
    try {
      decodePlan(bytes, "p.asplan", cache);
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  }

  fs::path dir;
  std::string library, cache;
};

} // namespace

// A field added to these structs must be written by PlanFile.cpp and compared
// above; then update the size here.
TEST(PlanFileFields, StructSizesArePinned) {
  EXPECT_EQ(sizeof(ScalarInst), 64u);
  EXPECT_EQ(sizeof(AffineMapSpec), 56u);
  EXPECT_EQ(sizeof(GenericSpec), 192u);
  EXPECT_EQ(sizeof(Instruction), 688u);
  EXPECT_EQ(sizeof(ValueInfo), 32u);
  EXPECT_EQ(sizeof(ProgramIO), 296u);
  EXPECT_EQ(sizeof(Program), 208u);
  EXPECT_EQ(sizeof(CollectiveStep), 400u);
  EXPECT_EQ(sizeof(TensorLayout), 160u);
  EXPECT_EQ(sizeof(MeshAxis), 56u);
  // Enums are stored by number: a new enumerator or a renumbering bumps
  // kPlanFormatVersion and PlanFile.cpp's range checks.
  EXPECT_EQ(static_cast<int>(ScalarOp::ZExt), 55);
  EXPECT_EQ(static_cast<int>(OpKind::Collective), 15);
  EXPECT_EQ(static_cast<int>(CollectiveKind::MakePartial), 6);
}

TEST_F(PlanFileTest, RoundTripsEveryField) {
  Plan plan;
  plan.programs = {makeFullProgram(library), makeFullProgram("")};
  plan.programs[1].gpuModule = "";
  plan.rankProgram = {1, 0, 1};
  std::string path = (dir / "p.asplan").string();
  writePlanFile(path, plan);
  Plan back = readPlanFile(path, cache);
  ASSERT_EQ(back.programs.size(), 2u);
  EXPECT_EQ(back.rankProgram, plan.rankProgram);
  expectSameProgram(plan.programs[0], back.programs[0]);
  expectSameProgram(plan.programs[1], back.programs[1]);
  // The library went into the cache under its name; the loop nest both
  // instructions share is decoded once.
  EXPECT_EQ(back.programs[0].kernelLibrary,
            (fs::path(cache) / "autoshard-0123.so").string());
  EXPECT_EQ(back.programs[0].instructions[0].generic,
            back.programs[0].instructions[1].generic);
  EXPECT_EQ(&back.getProgram(0), &back.programs[1]);
  EXPECT_EQ(&back.getProgram(1), &back.programs[0]);
  EXPECT_THROW(back.getProgram(3), Error);
  // Reading again reuses the cached library.
  auto written = fs::last_write_time(back.programs[0].kernelLibrary);
  Plan again = readPlanFile(path, cache);
  EXPECT_EQ(fs::last_write_time(again.programs[0].kernelLibrary), written);
}

// What the loop nests were compiled for travels with the plan (as the
// blob it carries), so running it on the other backend is a warning.
TEST_F(PlanFileTest, RecordsTheKernelsBackend) {
  Plan plan;
  plan.programs = {makeFullProgram(library), makeFullProgram(""),
                   makeFullProgram("")};
  plan.programs[0].gpuModule = "";
  plan.programs[2].gpuModule = "";
  std::string path = (dir / "k.asplan").string();
  writePlanFile(path, plan);
  Plan back = readPlanFile(path, cache);
  ASSERT_EQ(back.programs.size(), 3u);
  const Program &cpuPlan = back.programs[0], &cudaPlan = back.programs[1],
                &neither = back.programs[2];
  EXPECT_EQ(cpuPlan.getKernelBackend(), "cpu");
  EXPECT_EQ(cudaPlan.getKernelBackend(), "cuda");
  EXPECT_EQ(neither.getKernelBackend(), "");
  EXPECT_EQ(cpuPlan.getKernelBackendWarning("cpu"), "");
  EXPECT_EQ(cpuPlan.getKernelBackendWarning("cuda"),
            "the plan's loop nests were compiled for the CPU (a kernel "
            "library); --backend cuda runs them as bytecode kernels (compile "
            "with --backend cuda for generated CUDA kernels)");
  EXPECT_NE(cudaPlan.getKernelBackendWarning("cpu").find("interprets them"),
            std::string::npos);
  EXPECT_EQ(cudaPlan.getKernelBackendWarning("cuda"), "");
  EXPECT_EQ(neither.getKernelBackendWarning("cuda"), "");
}

TEST_F(PlanFileTest, IdenticalPartsAreStoredOnce) {
  Plan one, two;
  one.programs = {makeFullProgram(library)};
  two.programs = {makeFullProgram(library), makeFullProgram(library)};
  size_t single = encodePlan(one).size(), twice = encodePlan(two).size();
  // The second program adds its instructions, not another library, PTX
  // module or loop nest.
  Plan bare = one;
  bare.programs[0].kernelLibrary.clear();
  bare.programs[0].gpuModule.clear();
  EXPECT_LT(twice - single, encodePlan(bare).size());
}

TEST_F(PlanFileTest, BadFilesAreOneLineErrors) {
  Plan plan;
  plan.programs = {makeFullProgram(library)};
  std::string bytes = encodePlan(plan);
  EXPECT_EQ(decodeError(bytes), "");

  EXPECT_EQ(decodeError(""),
            "p.asplan: not an autoshard plan file (no ASPLAN header)");
  EXPECT_EQ(decodeError("module {}\n"),
            "p.asplan: not an autoshard plan file (no ASPLAN header)");
  EXPECT_EQ(decodeError(bytes.substr(0, 12)),
            "p.asplan: truncated: 12 bytes, shorter than the plan header");
  EXPECT_EQ(decodeError(bytes.substr(0, bytes.size() - 5)),
            "p.asplan: truncated: " + std::to_string(bytes.size() - 5) +
                " of " + std::to_string(bytes.size()) + " bytes");
  EXPECT_EQ(decodeError(bytes + "xy"),
            "p.asplan: corrupt: 2 bytes after the end of the plan");
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x10;
  EXPECT_EQ(decodeError(flipped).rfind("p.asplan: corrupt: checksum ", 0), 0u);
  std::string other = bytes;
  other[8] = 7;
  EXPECT_EQ(decodeError(other),
            "p.asplan: plan format version 7, but this autoshard-run reads "
            "version " +
                std::to_string(kPlanFormatVersion) +
                "; compile it again with the matching autoshard");
  for (const std::string &error :
       {decodeError(""), decodeError(flipped), decodeError(other)})
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST_F(PlanFileTest, MissingRankProgramIsRejected) {
  Plan plan;
  plan.programs = {makeFullProgram("")};
  plan.rankProgram = {4};
  EXPECT_EQ(decodeError(encodePlan(plan)),
            "p.asplan: invalid plan: a rank's program 4 does not exist");
}

TEST_F(PlanFileTest, MissingKernelLibraryFailsToEncode) {
  Plan plan;
  plan.programs = {makeFullProgram((dir / "nosuch.so").string())};
  EXPECT_THROW(encodePlan(plan), Error);
}

// Issue 22: dims come from the file; a byte size past int64 wrapped to a
// small buffer that the program then wrote past.
TEST_F(PlanFileTest, ValueSizesPastInt64AreRejected) {
  Program p;
  p.mesh = DeviceMesh({MeshAxis{"replica", 1, 0, 0}}, {0});
  p.values = {{DType::F32, {int64_t(1) << 62}}};
  Instruction empty;
  empty.kind = OpKind::Empty;
  empty.results = {0};
  p.instructions = {empty};
  Plan plan;
  plan.programs = {p};
  EXPECT_EQ(decodeError(encodePlan(plan)),
            "p.asplan: invalid plan: a value of type f32[4611686018427387904] "
            "has a negative dim or more bytes than a buffer can hold");
}
