//===- CommunicatorTest.cpp - MPI collectives over mesh-axis groups -------===//
//
// Runs on any number of ranks (mpirun -np 4 from test/Runtime, one process
// from test/Unit). The mesh is [x = 2, y = N/2] for even N, else [x = 1,
// y = N]; expected values follow DeviceMesh::getGroup.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/Communicator.h"
#include "autoshard/Runtime/Half.h"

#include "gtest/gtest.h"

#include <mpi.h>

#include <algorithm>

using namespace autoshard;
using namespace autoshard::rt;

namespace {
class CommunicatorTest : public ::testing::Test {
protected:
  void SetUp() override {
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t x = size % 2 == 0 ? 2 : 1;
    mesh = DeviceMesh({MeshAxis{"x", x}, MeshAxis{"y", size / x}});
    comm = createMpiCommunicator(mesh);
    pos = comm->getPosition();
    for (const AxisList &axes : allAxes)
      comm->prepareGroup(axes);
  }
  std::vector<int64_t> group(const AxisList &axes) {
    return mesh.getGroup(pos, axes);
  }

  DeviceMesh mesh;
  std::unique_ptr<Communicator> comm;
  int64_t pos = 0;
  const std::vector<AxisList> allAxes = {{0}, {1}, {0, 1}, {1, 0}};
};
} // namespace

TEST_F(CommunicatorTest, AllReduceSumAndMax) {
  for (const AxisList &axes : allAxes) {
    std::vector<float> send = {float(pos + 1), float(2 * pos), -float(pos)};
    std::vector<float> recv(3);
    comm->allReduce(send.data(), recv.data(), 3, DType::F32, ReductionKind::Sum,
                    axes);
    float sum = 0;
    for (int64_t p : group(axes))
      sum += p + 1;
    EXPECT_EQ(recv[0], sum);
    std::vector<int64_t> isend = {pos, -pos}, irecv(2);
    comm->allReduce(isend.data(), irecv.data(), 2, DType::I64,
                    ReductionKind::Max, axes);
    std::vector<int64_t> members = group(axes);
    EXPECT_EQ(irecv[0], *std::max_element(members.begin(), members.end()));
    EXPECT_EQ(irecv[1], -*std::min_element(members.begin(), members.end()));
  }
}

TEST_F(CommunicatorTest, AllGatherInGroupOrder) {
  for (const AxisList &axes : allAxes) {
    std::vector<int32_t> send = {int32_t(pos), int32_t(pos * 10)};
    std::vector<int64_t> members = group(axes);
    std::vector<int32_t> recv(2 * members.size());
    comm->allGather(send.data(), recv.data(), 8, axes);
    for (size_t k = 0; k < members.size(); ++k) {
      EXPECT_EQ(recv[2 * k], members[k]);
      EXPECT_EQ(recv[2 * k + 1], members[k] * 10);
    }
    // Uneven: member k sends k + 1 values.
    int64_t me = comm->getGroupIndex(axes);
    std::vector<int32_t> vsend(me + 1, int32_t(pos));
    std::vector<int64_t> bytes;
    size_t total = 0;
    for (size_t k = 0; k < members.size(); ++k) {
      bytes.push_back(4 * (k + 1));
      total += k + 1;
    }
    std::vector<int32_t> vrecv(total);
    comm->allGatherV(vsend.data(), vrecv.data(), bytes, axes);
    size_t at = 0;
    for (size_t k = 0; k < members.size(); ++k)
      for (size_t i = 0; i <= k; ++i)
        EXPECT_EQ(vrecv[at++], members[k]);
  }
}

TEST_F(CommunicatorTest, ReduceScatterAndAllToAll) {
  for (const AxisList &axes : allAxes) {
    std::vector<int64_t> members = group(axes);
    int64_t n = members.size(), me = comm->getGroupIndex(axes);
    std::vector<double> send(n);
    for (int64_t k = 0; k < n; ++k)
      send[k] = pos * 100 + k;
    double recv = -1;
    comm->reduceScatter(send.data(), &recv, 1, DType::F64, ReductionKind::Sum,
                        axes);
    double expected = 0;
    for (int64_t p : members)
      expected += p * 100 + me;
    EXPECT_EQ(recv, expected);

    std::vector<int64_t> counts(n, 1);
    double vrecv = -1;
    comm->reduceScatterV(send.data(), &vrecv, counts, DType::F64,
                         ReductionKind::Sum, axes);
    EXPECT_EQ(vrecv, expected);

    std::vector<int64_t> a2a(n), got(n);
    for (int64_t k = 0; k < n; ++k)
      a2a[k] = pos * 100 + k;
    comm->allToAll(a2a.data(), got.data(), 8, axes);
    for (int64_t j = 0; j < n; ++j)
      EXPECT_EQ(got[j], members[j] * 100 + me);
    std::vector<int64_t> vgot(n), bytes(n, 8);
    comm->allToAllV(a2a.data(), bytes, vgot.data(), bytes, axes);
    EXPECT_EQ(vgot, got);
  }
}

// bf16/f16 reductions combine in f32 and round each pairwise step to
// nearest even (as NCCL does), through a user MPI_Op: the bit patterns are
// not summed as integers, and max/min order negative values right.
TEST_F(CommunicatorTest, HalfPrecisionReductions) {
  for (DType type : {DType::BF16, DType::F16}) {
    bool bf16 = type == DType::BF16;
    auto widen = bf16 ? bf16ToFloat : f16ToFloat;
    auto narrow = bf16 ? floatToBF16 : floatToF16;
    for (const AxisList &axes : allAxes) {
      std::vector<int64_t> members = group(axes);
      int64_t n = members.size(), me = comm->getGroupIndex(axes);
      // Halves of small integers: every order of summing them is exact.
      const int count = 1000;
      auto value = [](int64_t i, int64_t p) {
        return 0.5f * static_cast<float>(i % 7 - 3 + p);
      };
      std::vector<uint16_t> send(count), sum(count), mx(count), mn(count);
      for (int i = 0; i < count; ++i)
        send[i] = narrow(value(i, pos));
      comm->allReduce(send.data(), sum.data(), count, type, ReductionKind::Sum,
                      axes);
      comm->allReduce(send.data(), mx.data(), count, type, ReductionKind::Max,
                      axes);
      comm->allReduce(send.data(), mn.data(), count, type, ReductionKind::Min,
                      axes);
      for (int i = 0; i < count; ++i) {
        float s = 0, hi = -1e9f, lo = 1e9f;
        for (int64_t p : members) {
          s += value(i, p);
          hi = std::max(hi, value(i, p));
          lo = std::min(lo, value(i, p));
        }
        ASSERT_EQ(widen(sum[i]), s) << i << " " << stringifyDType(type);
        ASSERT_EQ(widen(mx[i]), hi) << i;
        ASSERT_EQ(widen(mn[i]), lo) << i;
      }
      // Reduce-scatter: member k gets the sum of everyone's element k.
      std::vector<uint16_t> rs(n);
      for (int64_t k = 0; k < n; ++k)
        rs[k] = narrow(value(k, pos));
      uint16_t got = 0;
      comm->reduceScatter(rs.data(), &got, 1, type, ReductionKind::Sum, axes);
      float want = 0;
      for (int64_t p : members)
        want += value(me, p);
      EXPECT_EQ(widen(got), want);
      if (n != 2)
        continue;
      // Two members: the sum is rounded once, ties to even. eps is half an
      // ulp at 1: 1 + eps ties down to 1, 1 + 3 eps up to 1 + 4 eps.
      float eps = bf16 ? 0x1p-8f : 0x1p-11f;
      std::vector<uint16_t> tie = {narrow(me == 0 ? 1.0f : eps),
                                   narrow(me == 0 ? 1.0f + 2 * eps : eps)},
                            out(2);
      comm->allReduce(tie.data(), out.data(), 2, type, ReductionKind::Sum,
                      axes);
      EXPECT_EQ(widen(out[0]), 1.0f);
      EXPECT_EQ(widen(out[1]), 1.0f + 4 * eps);
    }
  }
}

TEST_F(CommunicatorTest, SendRecvRingAndGatherToRoot) {
  int64_t n = mesh.getNumDevices();
  int64_t send = pos, recv = -1;
  comm->sendRecv(&send, (pos + 1) % n, &recv, (pos + n - 1) % n, 8);
  EXPECT_EQ(recv, (pos + n - 1) % n);
  std::vector<uint8_t> mine(comm->getRank() + 1, uint8_t(comm->getRank()));
  auto all = comm->gatherToRoot(mine.data(), mine.size());
  if (comm->getRank() == 0) {
    ASSERT_EQ(static_cast<int64_t>(all.size()), n);
    for (int64_t r = 0; r < n; ++r)
      EXPECT_EQ(all[r], std::vector<uint8_t>(r + 1, uint8_t(r)));
  } else {
    EXPECT_TRUE(all.empty());
  }
}

TEST_F(CommunicatorTest, RejectsAWrongSizedMesh) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_THROW(createMpiCommunicator(DeviceMesh({MeshAxis{"x", size + 1}})),
               Error);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints, so a 4-rank run reads like one.
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int result = RUN_ALL_TESTS();
  // Any rank failing fails the job.
  MPI_Allreduce(MPI_IN_PLACE, &result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return result;
}
