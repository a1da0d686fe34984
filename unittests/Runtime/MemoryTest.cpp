//===- MemoryTest.cpp - Buffer pool and profiler of the runtime -----------===//

#include "../../runtime/lib/BufferPool.h"
#include "TestPrograms.h"
#include "autoshard/Runtime/Executor.h"
#include "autoshard/Runtime/HostIO.h"

#include "gtest/gtest.h"

#include <cstring>
#include <map>

using namespace autoshard;
using namespace autoshard::rt;
using namespace autoshard::rt::test;

TEST(BufferPoolTest, SizeClasses) {
  EXPECT_EQ(BufferPool::getSizeClass(0), 64u);
  EXPECT_EQ(BufferPool::getSizeClass(1), 64u);
  EXPECT_EQ(BufferPool::getSizeClass(65), 128u);
  EXPECT_EQ(BufferPool::getSizeClass(4096), 4096u);
  EXPECT_EQ(BufferPool::getSizeClass(4097), 4608u); // 4096 + 4096/8
  EXPECT_EQ(BufferPool::getSizeClass(1 << 20), size_t(1) << 20);
  EXPECT_EQ(BufferPool::getSizeClass((1 << 20) + 1), size_t(9) << 17);
  for (int64_t n : {100, 5000, 70000, 123456789})
    EXPECT_LE(BufferPool::getSizeClass(n), static_cast<size_t>(n + n / 8 + 64));
}

TEST(BufferPoolTest, FreedBuffersAreReusedAndZeroed) {
  std::unique_ptr<Backend> cpu = createCpuBackend();
  const void *first;
  {
    Tensor a = cpu->allocate(DType::F32, {1000});
    first = a.getRawData();
    std::memset(a.getRawData(), 0xff, a.getBytes());
    MemoryStats s = cpu->getMemoryStats();
    EXPECT_EQ(s.systemAllocations, 1);
    EXPECT_EQ(s.systemBytes, 4032); // 4000 bytes in 64-byte units
    EXPECT_EQ(s.bytesInUse, 4032);
  }
  EXPECT_EQ(cpu->getMemoryStats().bytesInUse, 0);
  EXPECT_EQ(cpu->getMemoryStats().pooledBytes, 4032);
  // Another shape of the same size class gets the same block, zeroed.
  Tensor b = cpu->allocate(DType::I32, {8, 125});
  EXPECT_EQ(b.getRawData(), first);
  for (int64_t i = 0; i < b.getNumElements(); ++i)
    ASSERT_EQ(b.getData<int32_t>()[i], 0);
  Tensor c = cpu->allocateUninitialized(DType::F32, {1000});
  MemoryStats s = cpu->getMemoryStats();
  EXPECT_EQ(s.systemAllocations, 2);
  EXPECT_EQ(s.poolHits, 1);
  EXPECT_EQ(s.peakBytesInUse, 2 * 4032);
  EXPECT_EQ(s.pooledBytes, 0);
  // Buffers outlive the backend.
  cpu.reset();
  b.getData<int32_t>()[0] = 1;
}

TEST(BufferPoolTest, SecondRunAllocatesNothing) {
  Program p = makeReluMatmul();
  ASSERT_EQ(p.verify(), "");
  std::unique_ptr<Backend> cpu = createCpuBackend();
  std::unique_ptr<Communicator> comm = createLocalCommunicator(p.mesh);
  Executor exec(p, *cpu, *comm);
  Tensor x = makeSeededTensor(DType::F32, {4, 3}, 1, 0);
  Tensor w = makeSeededTensor(DType::F32, {3, 2}, 1, 1);
  std::vector<Tensor> out = exec.run({x, w});
  MemoryStats first = cpu->getMemoryStats();
  EXPECT_GT(first.systemAllocations, 0);
  out.clear();
  for (int run = 0; run < 3; ++run) {
    out = exec.run({x, w});
    out.clear();
  }
  MemoryStats later = cpu->getMemoryStats();
  EXPECT_EQ(later.systemAllocations, first.systemAllocations);
  EXPECT_EQ(later.poolHits - first.poolHits,
            3 * (first.systemAllocations + first.poolHits));
  EXPECT_EQ(later.peakBytesInUse, first.peakBytesInUse);
}

TEST(ProfilerTest, CountsEveryKernelKind) {
  Program p = makeReluMatmul();
  std::unique_ptr<Backend> cpu = createCpuBackend();
  std::unique_ptr<Communicator> comm = createLocalCommunicator(p.mesh);
  Executor exec(p, *cpu, *comm);
  Profiler profiler;
  exec.setProfiler(&profiler);
  Tensor x = makeSeededTensor(DType::F32, {4, 3}, 1, 0);
  Tensor w = makeSeededTensor(DType::F32, {3, 2}, 1, 1);
  exec.run({x, w});
  std::vector<Tensor> out = exec.run({x, w});
  EXPECT_NEAR(out[0].getAsDouble(0), 0, 100); // ran
  EXPECT_EQ(profiler.getRuns(), 2);
  std::map<std::string, Profiler::Entry> byKind;
  double sum = 0;
  for (const Profiler::Entry &e : profiler.getEntries()) {
    byKind[e.kind] = e;
    sum += e.seconds;
  }
  EXPECT_EQ(byKind["empty"].calls, 2);
  EXPECT_EQ(byKind["matmul"].calls, 2);
  EXPECT_EQ(byKind["generic (interpreted)"].calls, 2);
  EXPECT_EQ(byKind["collective all_reduce"].calls, 2);
  // Both inits stay live (the matmul's is returned, the generic's is also
  // its input), so both are copied.
  EXPECT_EQ(byKind["init copy"].calls, 4);
  // The empty, the two copies and the all-reduce's result; twice.
  EXPECT_EQ(byKind["allocation"].calls, 8);
  EXPECT_LE(sum, profiler.getWallSeconds() * 1.01 + 1e-4);
  std::string json = profiler.formatJson();
  EXPECT_NE(json.find("{\"runs\": 2, \"wall_ms\": "), std::string::npos);
  EXPECT_NE(json.find("{\"kind\": \"generic (interpreted)\", \"calls\": 2, "),
            std::string::npos)
      << json;
  std::string table = profiler.formatTable();
  EXPECT_NE(table.find("profile: 2 runs"), std::string::npos) << table;
  // Off again: nothing more is counted.
  exec.setProfiler(nullptr);
  exec.run({x, w});
  EXPECT_EQ(profiler.getRuns(), 2);
}
