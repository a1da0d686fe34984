//===- ExecutorTest.cpp - Hand-built plans on one process -----------------===//

#include "autoshard/Runtime/Executor.h"
#include "TestPrograms.h"
#include "autoshard/Runtime/HostIO.h"

#include "gtest/gtest.h"

#include <cstring>
#include <functional>

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
  ProgramBuilder b;
  ValueId x = b.input(DType::F32, {4, 3}), w = b.input(DType::F32, {3, 2});
  ValueId value = b.constant(zero);
  ValueId fill = b.add(OpKind::Fill, {value}, DType::F32, {4, 2}).results[0];
  b.add(OpKind::Matmul, {x, w, fill}, DType::F32, {4, 2});
  b.output(b.last());
  if (keepInit)
    b.output(fill);
  return b.take();
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

namespace {
/// A one-device communicator that behaves like NCCL on a stream of its own:
/// each collective is only queued, and runs when the executor waits for a
/// completion recorded after it. An executor that read a result, or reused a
/// buffer of the exchange, before waiting would see stale data.
class DeferredCommunicator final : public Communicator {
public:
  explicit DeferredCommunicator(DeviceMesh mesh)
      : Communicator(std::move(mesh)) {}
  int64_t getRank() const override { return 0; }
  int64_t getSize() const override { return 1; }
  void prepareGroup(const AxisList &) override {}
  void allReduce(const void *send, void *recv, int64_t count, DType type,
                 ReductionKind, const AxisList &) override {
    later(send, recv, count * getDTypeSize(type));
  }
  void allGather(const void *send, void *recv, int64_t bytes,
                 const AxisList &) override {
    later(send, recv, bytes);
  }
  void allGatherV(const void *send, void *recv,
                  const std::vector<int64_t> &bytes,
                  const AxisList &) override {
    later(send, recv, bytes[0]);
  }
  void reduceScatter(const void *send, void *recv, int64_t count, DType type,
                     ReductionKind, const AxisList &) override {
    later(send, recv, count * getDTypeSize(type));
  }
  void reduceScatterV(const void *send, void *recv,
                      const std::vector<int64_t> &counts, DType type,
                      ReductionKind, const AxisList &) override {
    later(send, recv, counts[0] * getDTypeSize(type));
  }
  void allToAll(const void *send, void *recv, int64_t bytes,
                const AxisList &) override {
    later(send, recv, bytes);
  }
  void allToAllV(const void *send, const std::vector<int64_t> &bytes,
                 void *recv, const std::vector<int64_t> &,
                 const AxisList &) override {
    later(send, recv, bytes[0]);
  }
  void sendRecv(const void *send, int64_t dst, void *recv, int64_t src,
                int64_t bytes) override {
    if (dst >= 0 && src >= 0)
      later(send, recv, bytes);
  }
  std::vector<std::vector<uint8_t>> gatherToRoot(const void *send,
                                                 int64_t bytes) override {
    auto *p = static_cast<const uint8_t *>(send);
    return {std::vector<uint8_t>(p, p + bytes)};
  }
  void barrier() override {}
  [[noreturn]] void abort(const std::string &message, int code) override {
    throw Error(message);
  }

  bool isAsynchronous() const override { return true; }
  struct Mark : Completion {
    size_t upTo;
  };
  std::shared_ptr<Completion> recordCompletion() override {
    auto mark = std::make_shared<Mark>();
    mark->upTo = queue.size();
    return mark;
  }
  void waitFor(const Completion &done) override {
    size_t upTo = static_cast<const Mark &>(done).upTo;
    for (; ran < upTo; ++ran)
      queue[ran]();
  }

  size_t mostInFlight = 0; // the most exchanges queued and not yet run

private:
  void later(const void *send, void *recv, int64_t bytes) {
    // The send buffer is read when the exchange runs, as NCCL would.
    queue.push_back([=] { std::memmove(recv, send, bytes); });
    mostInFlight = std::max(mostInFlight, queue.size() - ran);
  }
  std::vector<std::function<void()>> queue;
  size_t ran = 0;
};

} // namespace

// Overlap: with an asynchronous communicator the executor leaves exchanges
// in flight and waits only where a result is first read; the results equal
// those with the synchronous local communicator, run after run.
TEST(ExecutorTest, AsynchronousExchangesAreAwaitedWhereRead) {
  Program p = makeOverlapProgram(16);
  ASSERT_EQ(p.verify(), "");
  Tensor x = makeSeededTensor(DType::F32, {16, 16}, 3, 0);
  std::unique_ptr<Backend> cpu = createCpuBackend();
  std::unique_ptr<Communicator> local = createLocalCommunicator(p.mesh);
  std::vector<Tensor> want = Executor(p, *cpu, *local).run({x});
  DeferredCommunicator deferred(p.mesh);
  Executor exec(p, *cpu, deferred);
  for (int run = 0; run < 3; ++run) {
    std::vector<Tensor> got = exec.run({x});
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k)
      for (int64_t i = 0; i < want[k].getNumElements(); ++i)
        ASSERT_EQ(got[k].getAsDouble(i), want[k].getAsDouble(i))
            << "output " << k << " element " << i << " run " << run;
  }
  // All three exchanges were in flight at once before the matmul read two.
  EXPECT_EQ(deferred.mostInFlight, 3u);
}

// enqueue() is run() without the closing synchronize: the same outputs, and
// chained runs reuse the pool's buffers (the previous outputs released).
TEST(ExecutorTest, EnqueueEqualsRun) {
  Program p = makeReluMatmul();
  std::unique_ptr<Backend> cpu = createCpuBackend();
  std::unique_ptr<Communicator> comm = createLocalCommunicator(p.mesh);
  Executor exec(p, *cpu, *comm);
  Tensor x = makeSeededTensor(DType::F32, {4, 3}, 1, 0);
  Tensor w = makeSeededTensor(DType::F32, {3, 2}, 1, 1);
  std::vector<Tensor> want = exec.run({x, w});
  for (int run = 0; run < 3; ++run) {
    std::vector<Tensor> got = exec.enqueue({x, w});
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      double err = 0;
      EXPECT_EQ(compareTensors(cpu->download(got[i]), want[i], 0, 0, err), "");
    }
  }
  int64_t before = cpu->getMemoryStats().systemAllocations;
  exec.enqueue({x, w});
  EXPECT_EQ(cpu->getMemoryStats().systemAllocations, before);
}
