//===- ExecutorGraphTest.cpp - Runs replayed as CUDA graphs ---------------===//
//
// ExecutorOptions::cudaGraphs against the plain path on the same backend:
// "cuda" (skipped without a GPU) records the second run on the same inputs
// and replays it after, which must give the plain run's outputs bit for
// bit, and a device fault (a gather's bad index) recorded in a replay must
// end the run in the gather's error; "cpu" cannot record and must take the
// plain path every time. The reservation of pool blocks to a recording
// (BufferPool) is tested on host memory here too.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/lib/BufferPool.h"
#include "autoshard/Runtime/CudaBackend.h"
#include "autoshard/Runtime/Executor.h"
#include "autoshard/Runtime/HostIO.h"
#include "TestPrograms.h"

#include "gtest/gtest.h"

#include <cstdlib>

using namespace autoshard;
using namespace autoshard::rt;
using namespace autoshard::rt::test;

namespace {

/// mm = x @ w into a folded Empty; r = relu(mm) into fill(0): a GEMM, a
/// constant, a fill and a loop nest, outputs r and mm.
Program makeGemmRelu() {
  ProgramBuilder b;
  ValueId x = b.input(DType::F32, {64, 32}), w = b.input(DType::F32, {32, 48});
  ValueId zero = b.constant(0.0);
  ValueId empty = b.add(OpKind::Empty, {}, DType::F32, {64, 48}).results[0];
  ValueId mm =
      b.add(OpKind::Matmul, {x, w, empty}, DType::F32, {64, 48}).results[0];
  ValueId fill = b.add(OpKind::Fill, {zero}, DType::F32, {64, 48}).results[0];
  b.add(OpKind::Generic, {mm, fill}, DType::F32, {64, 48}).generic =
      makeReluSpec(64, 48);
  b.output(b.last());
  b.output(mm);
  return b.take();
}

/// out = source[indices] along dim 0: the CUDA gather checks its indices on
/// the device and leaves a fault for the run's end to raise.
Program makeGather() {
  ProgramBuilder b;
  ValueId src = b.input(DType::F32, {8, 4}), idx = b.input(DType::I64, {3, 1});
  b.add(OpKind::Gather, {src, idx}, DType::F32, {3, 1, 4}).perm = {0};
  b.output(b.last());
  return b.take();
}

/// t1 = relu(x), t2 = relu(t1), then a constant c of t1's size, and
/// slices of t2 and c: made where it stands, c takes t1's freed block, so
/// the second run (c held from its start) needs one block more than the
/// first obtained (Executor::makeInvariants).
Program makeLateConstant() {
  ProgramBuilder b;
  ValueId x = b.input(DType::F32, {8, 8});
  auto relu = [&](ValueId in) {
    ValueId init = b.add(OpKind::Empty, {}, DType::F32, {8, 8}).results[0];
    b.add(OpKind::Generic, {in, init}, DType::F32, {8, 8}).generic =
        makeReluSpec(8, 8);
    return b.last();
  };
  ValueId t2 = relu(relu(x));
  Instruction &c = b.add(OpKind::Constant, {}, DType::F32, {8, 8});
  c.constant = makeSeededTensor(DType::F32, {8, 8}, 9, 0);
  ValueId cst = c.results[0];
  for (ValueId v : {t2, cst}) {
    Instruction &slice = b.add(OpKind::ExtractSlice, {v}, DType::F32, {2, 8});
    slice.offsets = {3, 0};
    slice.sizes = {2, 8};
    slice.strides = {1, 1};
    b.output(b.last());
  }
  return b.take();
}

class ExecutorGraphTest : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    if (GetParam() == "cpu") {
      backend = createCpuBackend();
      return;
    }
    if (!isCudaAvailable())
      GTEST_SKIP() << "CUDA graphs not tested: " << getCudaUnavailableReason();
    backend = createCudaBackend(0);
  }
  bool records() const { return GetParam() != "cpu"; }

  std::vector<Tensor> upload(const std::vector<Tensor> &host) {
    std::vector<Tensor> out;
    for (const Tensor &t : host)
      out.push_back(backend->upload(t));
    return out;
  }
  /// `got` (device) equals `want` (host) bit for bit.
  void expectSame(const std::vector<Tensor> &got,
                  const std::vector<Tensor> &want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      double err = 0;
      EXPECT_EQ(compareTensors(backend->download(got[i]), want[i], 0, 0, err),
                "")
          << "output " << i;
    }
  }
  std::vector<Tensor> download(const std::vector<Tensor> &outs) {
    std::vector<Tensor> host;
    for (const Tensor &t : outs)
      host.push_back(backend->download(t));
    return host;
  }

  /// An Executor with ExecutorOptions::cudaGraphs on `p`, kept (with its
  /// communicator) by the fixture.
  Executor &makeGraphed(const Program &p) {
    comm = createLocalCommunicator(p.mesh);
    ExecutorOptions options;
    options.cudaGraphs = true;
    graphed = std::make_unique<Executor>(p, *backend, *comm, options);
    return *graphed;
  }

  std::unique_ptr<Backend> backend;
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<Executor> graphed;
};

TEST_P(ExecutorGraphTest, ReplayEqualsEnqueue) {
  Program p = makeGemmRelu();
  ASSERT_EQ(p.verify(), "");
  std::unique_ptr<Communicator> comm = createLocalCommunicator(p.mesh);
  Executor plain(p, *backend, *comm);
  ExecutorOptions options;
  options.cudaGraphs = true;
  Executor graphed(p, *backend, *comm, options);
  std::vector<Tensor> inputs = upload(
      {makeSeededTensor(DType::F32, {64, 32}, 3, 0),
       makeSeededTensor(DType::F32, {32, 48}, 3, 1)});
  std::vector<Tensor> want = download(plain.run(inputs));
  for (int run = 0; run < 4; ++run) {
    expectSame(graphed.run(inputs), want);
    // The first run is plain, the second records and replays.
    EXPECT_EQ(graphed.lastRunReplayed(), records() && run > 0) << run;
  }
  EXPECT_EQ(graphed.getGraphFailure().empty(), records())
      << graphed.getGraphFailure();
  // New data in the same buffers: a replay reads it.
  Tensor x2 = makeSeededTensor(DType::F32, {64, 32}, 4, 0);
  Tensor x2d = backend->upload(x2);
  backend->copy(x2d, inputs[0]);
  want = download(plain.run(inputs));
  std::vector<Tensor> got = graphed.enqueue(inputs);
  EXPECT_EQ(graphed.lastRunReplayed(), records());
  expectSame(got, want);
  // Other buffers: the plain path, the same values.
  std::vector<Tensor> other = {x2d, backend->upload(makeSeededTensor(
                                        DType::F32, {32, 48}, 3, 1))};
  expectSame(graphed.run(other), download(plain.run(other)));
  EXPECT_FALSE(graphed.lastRunReplayed());
  // Back on the recorded buffers: replayed again.
  expectSame(graphed.run(inputs), want);
  EXPECT_EQ(graphed.lastRunReplayed(), records());
}

TEST_P(ExecutorGraphTest, GatherReplaysAndFaultsAfterTheRun) {
  Program p = makeGather();
  Executor &graphed = makeGraphed(p);
  Tensor idx(DType::I64, {3, 1});
  for (int64_t i = 0; i < 3; ++i)
    idx.setFromInt(i, (i * 3 + 1) % 8);
  Tensor src = makeSeededTensor(DType::F32, {8, 4}, 5, 0);
  // (The CPU's upload shares host memory: keep the indices apart.)
  std::vector<Tensor> inputs = upload({src, idx.clone()});
  auto expectGathered = [&](const std::vector<Tensor> &got) {
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 4; ++c)
        ASSERT_EQ(backend->download(got[0]).getAsDouble(r * 4 + c),
                  src.getAsDouble(((r * 3 + 1) % 8) * 4 + c));
  };
  // The bounds check waits for nothing: the second run records, the rest
  // replay.
  for (int run = 0; run < 3; ++run) {
    expectGathered(graphed.run(inputs));
    EXPECT_EQ(graphed.lastRunReplayed(), records() && run > 0) << run;
  }
  // A bad index in the recorded buffers: the replay ends in the gather's
  // error (at the run's synchronisation), not in a wrong output.
  Tensor bad = idx.clone();
  bad.setFromInt(1, 8);
  backend->copy(backend->upload(bad), inputs[1]);
  try {
    graphed.run(inputs);
    ADD_FAILURE() << "an out-of-bounds index ran";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "gather: index 8 out of bounds for dim 0 of f32[8x4]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(graphed.lastRunReplayed(), records());
  // The fault was reported once: good indices replay cleanly again.
  backend->copy(backend->upload(idx), inputs[1]);
  expectGathered(graphed.run(inputs));
  EXPECT_EQ(graphed.lastRunReplayed(), records());
  // On other buffers (the plain path) too, and then again.
  EXPECT_THROW(graphed.run(upload({src, bad})), Error);
  EXPECT_THROW(graphed.run(upload({src, bad})), Error);
  expectGathered(graphed.run(inputs));
}

/// out = source[off : off + 2] along dim 0 with `off` a program input: its
/// value is read on the host (a download), which a recording cannot do.
Program makeDynamicSlice() {
  ProgramBuilder b;
  ValueId src = b.input(DType::F32, {8, 4}), off = b.input(DType::I64, {});
  Instruction &slice =
      b.add(OpKind::ExtractSlice, {src, off}, DType::F32, {2, 4});
  slice.offsets = {kDynamic, 0};
  slice.sizes = {2, 4};
  slice.strides = {1, 1};
  b.output(b.last());
  return b.take();
}

TEST_P(ExecutorGraphTest, FallsBackWhenRecordingFails) {
  Program p = makeDynamicSlice();
  Executor &graphed = makeGraphed(p);
  Tensor off(DType::I64, {});
  off.setFromInt(0, 3);
  Tensor src = makeSeededTensor(DType::F32, {8, 4}, 5, 0);
  std::vector<Tensor> inputs = upload({src, off});
  for (int run = 0; run < 3; ++run) {
    Tensor got = backend->download(graphed.run(inputs)[0]);
    EXPECT_FALSE(graphed.lastRunReplayed());
    for (int64_t i = 0; i < 8; ++i)
      ASSERT_EQ(got.getAsDouble(i), src.getAsDouble(12 + i));
  }
  // The reason autoshard-run prints: the CPU never records; on CUDA the
  // offset's read-back (a copy to the host and a wait) ended the
  // recording, named with the CUDA call that refused.
  const std::string &why = graphed.getGraphFailure();
  if (GetParam() == std::string("cpu")) {
    EXPECT_EQ(why, "the cpu backend cannot record");
  } else {
    EXPECT_EQ(why.rfind("recording failed: ", 0), 0u) << why;
    EXPECT_NE(why.find("cuda"), std::string::npos) << why;
    std::cout << "[ reason   ] " << why << "\n";
  }
}

TEST_P(ExecutorGraphTest, RecordsAProgramWithALateConstant) {
  Program p = makeLateConstant();
  ASSERT_EQ(p.verify(), "");
  std::unique_ptr<Communicator> plainComm = createLocalCommunicator(p.mesh);
  Executor plain(p, *backend, *plainComm);
  std::vector<Tensor> inputs =
      upload({makeSeededTensor(DType::F32, {8, 8}, 7, 0)});
  std::vector<Tensor> want = download(plain.run(inputs));
  Executor &graphed = makeGraphed(p);
  for (int run = 0; run < 3; ++run) {
    expectSame(graphed.run(inputs), want);
    EXPECT_EQ(graphed.lastRunReplayed(), records() && run > 0)
        << run << ": " << graphed.getGraphFailure();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ExecutorGraphTest,
                         ::testing::Values("cuda", "cpu"),
                         [](const auto &info) { return info.param; });

/// Host blocks standing in for device memory.
std::shared_ptr<BufferPool> makeHostPool() {
  return BufferPool::create(
      MemorySpace::Host, [](size_t bytes) { return std::malloc(bytes); },
      [](void *block) { std::free(block); });
}

TEST(BufferPoolReserveTest, RecordedBlocksStayWithTheRecording) {
  std::shared_ptr<BufferPool> pool = makeHostPool();
  void *first, *second;
  {
    std::shared_ptr<Buffer> a = pool->get(100), b = pool->get(100);
    first = a->getData();
    second = b->getData();
  } // two blocks of the 128-byte class in the free list
  pool->beginReserving();
  std::shared_ptr<Buffer> out;
  void *scratch;
  {
    std::shared_ptr<Buffer> t = pool->get(100); // freed within the recording
    scratch = t->getData();
  }
  out = pool->get(100); // reuses the block just freed, as a plain run does
  EXPECT_EQ(out->getData(), scratch);
  void *untouched = scratch == first ? second : first;
  // Nothing more from the system while recording.
  EXPECT_THROW(pool->get(100000), Error);
  std::shared_ptr<BufferPool::Reservation> r = pool->endReserving(true);
  ASSERT_TRUE(r);
  EXPECT_EQ(pool->getStats().systemAllocations, 2);
  // The recording's block, even once released, is not lent to others; the
  // block it never touched is.
  void *outBlock = out->getData();
  out.reset();
  std::shared_ptr<Buffer> c = pool->get(100);
  EXPECT_NE(c->getData(), outBlock);
  EXPECT_EQ(c->getData(), untouched);
  std::shared_ptr<Buffer> d = pool->get(100);
  EXPECT_NE(d->getData(), outBlock);
  EXPECT_EQ(pool->getStats().systemAllocations, 3);
  // Once the recording dies, its block serves the pool again.
  r.reset();
  std::shared_ptr<Buffer> e = pool->get(100);
  EXPECT_EQ(e->getData(), outBlock);
  EXPECT_EQ(pool->getStats().systemAllocations, 3);
}

TEST(BufferPoolReserveTest, AFailedRecordingReservesNothing) {
  std::shared_ptr<BufferPool> pool = makeHostPool();
  { std::shared_ptr<Buffer> a = pool->get(64); }
  pool->beginReserving();
  std::shared_ptr<Buffer> t = pool->get(64);
  void *block = t->getData();
  EXPECT_FALSE(pool->endReserving(false));
  t.reset();
  EXPECT_EQ(pool->get(64)->getData(), block);
  EXPECT_EQ(pool->getStats().systemAllocations, 1);
}

} // namespace
