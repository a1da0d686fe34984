//===- ExecutorTest.cpp - Hand-built plans on one process -----------------===//

#include "autoshard/Runtime/Executor.h"
#include "autoshard/Runtime/HostIO.h"

#include "gtest/gtest.h"

using namespace autoshard;
using namespace autoshard::rt;

namespace {
DeviceMesh oneDevice() { return DeviceMesh({MeshAxis{"x", 1}}); }

ProgramIO io(ValueId v, Shape shape) {
  ProgramIO p;
  p.value = v;
  p.name = "v" + std::to_string(v);
  p.globalShape = shape;
  p.layout = TensorLayout::replicated(shape.size());
  return p;
}

/// relu(x @ w) and the zero init the matmul started from (returned too, so
/// the executor must not update it in place).
Program makeReluMatmul() {
  Program p;
  p.mesh = oneDevice();
  ValueId x = p.addValue(DType::F32, {4, 3});
  ValueId w = p.addValue(DType::F32, {3, 2});
  p.inputs = {io(x, {4, 3}), io(w, {3, 2})};
  ValueId c = p.addValue(DType::F32, {4, 2});
  Instruction empty;
  empty.kind = OpKind::Empty;
  empty.results = {c};
  ValueId m = p.addValue(DType::F32, {4, 2});
  Instruction mm;
  mm.kind = OpKind::Matmul;
  mm.operands = {x, w, c};
  mm.results = {m};
  auto g = std::make_shared<GenericSpec>();
  g->loopRanges = {4, 2};
  g->numInputs = 1;
  g->numOutputs = 1;
  AffineMapSpec id;
  id.numResults = 2;
  id.coeffs = {1, 0, 0, 1};
  id.consts = {0, 0};
  g->maps = {id, id};
  ScalarInst zero, cmp, sel;
  zero.op = ScalarOp::Const;
  zero.dst = 2;
  cmp.op = ScalarOp::CmpF;
  cmp.type = DType::I1;
  cmp.imm = 2; // ogt
  cmp.dst = 3;
  cmp.a = 0;
  cmp.b = 2;
  sel.op = ScalarOp::Select;
  sel.dst = 4;
  sel.a = 3;
  sel.b = 0;
  sel.c = 2;
  g->body = {zero, cmp, sel};
  g->numRegs = 5;
  g->yields = {4};
  ValueId r = p.addValue(DType::F32, {4, 2});
  Instruction relu;
  relu.kind = OpKind::Generic;
  relu.generic = g;
  relu.operands = {m, m}; // the init is also the input: it must be copied
  relu.results = {r};
  ValueId red = p.addValue(DType::F32, {4, 2});
  Instruction ar;
  ar.kind = OpKind::Collective;
  ar.collective.kind = CollectiveKind::AllReduce;
  ar.collective.axes = {0};
  ar.operands = {r};
  ar.results = {red};
  p.instructions = {empty, mm, relu, ar};
  p.outputs = {io(red, {4, 2}), io(c, {4, 2})};
  return p;
}
} // namespace

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
