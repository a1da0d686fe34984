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
