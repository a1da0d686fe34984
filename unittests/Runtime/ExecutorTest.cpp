//===- ExecutorTest.cpp - Hand-built plans on one process -----------------===//

#include "autoshard/Runtime/Executor.h"
#include "TestPrograms.h"
#include "autoshard/Runtime/HostIO.h"

#include "gtest/gtest.h"

using namespace autoshard;
using namespace autoshard::rt;
using namespace autoshard::rt::test;

TEST(ExecutorTest, RunsAPlanLikeNaiveLoops) {
  Program p = makeReluMatmul();
  ASSERT_EQ(p.verify(), "");
  std::unique_ptr<Backend> cpu = createCpuBackend();
  std::unique_ptr<Communicator> comm = createLocalCommunicator(p.mesh);
  Executor exec(p, *cpu, *comm);
  Tensor x = makeSeededTensor(DType::F32, {4, 3}, 1, 0);
  Tensor w = makeSeededTensor(DType::F32, {3, 2}, 1, 1);
  for (int run = 0; run < 2; ++run) {
    std::vector<Tensor> out = exec.run({x, w});
    ASSERT_EQ(out.size(), 2u);
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < 3; ++k)
          acc += x.getAsDouble(i * 3 + k) * w.getAsDouble(k * 2 + j);
        EXPECT_NEAR(out[0].getAsDouble(i * 2 + j), std::max(acc, 0.0), 1e-6);
        EXPECT_EQ(out[1].getAsDouble(i * 2 + j), 0.0);
      }
  }
  // Wrong input type: one clear error naming the input.
  try {
    exec.run({w, x});
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("input 'v0': expected f32[4x3], got "
                                         "f32[3x2]"),
              std::string::npos)
        << e.what();
  }
}

TEST(ExecutorTest, VerifyRejectsMalformedPlans) {
  Program p = makeReluMatmul();
  std::swap(p.instructions[0], p.instructions[1]);
  EXPECT_NE(p.verify().find("uses a value before it is defined"),
            std::string::npos);
  Program q = makeReluMatmul();
  q.instructions[3].collective.axes = {3};
  EXPECT_NE(q.verify().find("mesh axis out of range"), std::string::npos);
  std::unique_ptr<Backend> cpu = createCpuBackend();
  std::unique_ptr<Communicator> comm = createLocalCommunicator(q.mesh);
  EXPECT_THROW(Executor(q, *cpu, *comm), Error);
}

TEST(ExecutorTest, LocalCommunicatorNeedsOneDevice) {
  EXPECT_THROW(createLocalCommunicator(DeviceMesh({MeshAxis{"x", 2}})), Error);
}

/// x @ w into a Fill of the constant `zero` (the init's only reader is the
/// matmul unless `keepInit`, which also returns it).
static Program makeFilledMatmul(double zero, bool keepInit) {
  Program p;
  p.mesh = oneDevice();
  ValueId x = p.addValue(DType::F32, {4, 3});
  ValueId w = p.addValue(DType::F32, {3, 2});
  p.inputs = {io(x, {4, 3}), io(w, {3, 2})};
  Instruction value;
  value.kind = OpKind::Constant;
  value.constant = Tensor(DType::F32, {});
  value.constant.setFromDouble(0, zero);
  value.results = {p.addValue(DType::F32, {})};
  Instruction fill;
  fill.kind = OpKind::Fill;
  fill.operands = value.results;
  fill.results = {p.addValue(DType::F32, {4, 2})};
  Instruction mm;
  mm.kind = OpKind::Matmul;
  mm.operands = {x, w, fill.results[0]};
  mm.results = {p.addValue(DType::F32, {4, 2})};
  p.instructions = {value, fill, mm};
  p.outputs = {io(mm.results[0], {4, 2})};
  if (keepInit)
    p.outputs.push_back(io(fill.results[0], {4, 2}));
  return p;
}

TEST(ExecutorTest, ZeroInitsFoldIntoTheGemm) {
  Tensor x = makeSeededTensor(DType::F32, {4, 3}, 1, 0);
  Tensor w = makeSeededTensor(DType::F32, {3, 2}, 1, 1);
  struct Case {
    double zero;
    bool keepInit;
    int64_t fills; // per run: 0 when folded
  };
  for (Case c : {Case{0.0, false, 0}, Case{-0.0, false, 1}, Case{0.0, true, 1},
                 Case{2.0, false, 1}}) {
    Program p = makeFilledMatmul(c.zero, c.keepInit);
    ASSERT_EQ(p.verify(), "");
    std::unique_ptr<Backend> cpu = createCpuBackend();
    std::unique_ptr<Communicator> comm = createLocalCommunicator(p.mesh);
    Executor exec(p, *cpu, *comm);
    Profiler profiler;
    exec.setProfiler(&profiler);
    for (int run = 0; run < 2; ++run) {
      std::vector<Tensor> out = exec.run({x, w});
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          double acc = c.zero;
          for (int64_t k = 0; k < 3; ++k)
            acc += x.getAsDouble(i * 3 + k) * w.getAsDouble(k * 2 + j);
          EXPECT_NEAR(out[0].getAsDouble(i * 2 + j), acc, 1e-6);
          if (c.keepInit)
            EXPECT_EQ(out[1].getAsDouble(i * 2 + j), 0.0);
        }
    }
    int64_t fills = 0;
    for (const Profiler::Entry &e : profiler.getEntries())
      if (e.kind == "fill")
        fills = e.calls;
    EXPECT_EQ(fills, 2 * c.fills)
        << "zero " << c.zero << " keep " << c.keepInit;
  }
}
