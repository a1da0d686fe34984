//===- CudaNcclTest.cpp - NCCL collectives against the MPI communicator ---===//
//
// Runs under `mpirun -np N` with one GPU per rank (test/Runtime/cuda). Every
// collective runs on the same seeded data through the MPI communicator (host
// buffers, the reference) and through the NCCL communicator (device buffers
// of the CUDA backend), over every axis list of a 2-D mesh, and the results
// must agree: exactly for integers and max/min, to rounding for float sums
// (NCCL and MPI may add in different orders).
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/CudaBackend.h"
#include "autoshard/Runtime/HostIO.h"

#include "gtest/gtest.h"

#include <mpi.h>

#include <cmath>

using namespace autoshard;
using namespace autoshard::rt;

namespace {
class NcclVsMpiTest : public ::testing::Test {
protected:
  void SetUp() override {
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    // Every rank must agree to skip, or the collective setup would hang.
    int ok = isCudaAvailable() && getCudaDeviceCount() >= 1;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok)
      GTEST_SKIP() << "NCCL not tested: a rank has no GPU ("
                   << getCudaUnavailableReason() << ")";
    int64_t x = size % 2 == 0 ? 2 : 1;
    mesh = DeviceMesh({MeshAxis{"x", x}, MeshAxis{"y", size / x}});
    gpu = createCudaBackend(pickCudaDevice(rank));
    mpi = createMpiCommunicator(mesh);
    nccl = createNcclCommunicator(mesh, *gpu);
    for (const AxisList &axes : allAxes) {
      mpi->prepareGroup(axes);
      nccl->prepareGroup(axes);
    }
    pos = mpi->getPosition();
  }

  /// A result of a collective called directly: NCCL runs on its own
  /// stream, so the compute stream waits for it before the download.
  Tensor fetch(const Tensor &t) {
    if (std::shared_ptr<Communicator::Completion> done =
            nccl->recordCompletion())
      nccl->waitFor(*done);
    return gpu->download(t);
  }

  Tensor data(DType t, int64_t n, uint64_t key) {
    return makeSeededTensor(t, {n}, 11 + pos, key);
  }

  void expectSame(const Tensor &got, const Tensor &want, bool exact) {
    ASSERT_EQ(got.getNumElements(), want.getNumElements());
    for (int64_t i = 0; i < want.getNumElements(); ++i) {
      if (exact)
        ASSERT_EQ(got.getAsDouble(i), want.getAsDouble(i)) << "element " << i;
      else
        ASSERT_NEAR(got.getAsDouble(i), want.getAsDouble(i),
                    1e-5 * std::max(1.0, std::fabs(want.getAsDouble(i))))
            << "element " << i;
    }
  }

  DeviceMesh mesh;
  std::unique_ptr<Backend> gpu;
  std::unique_ptr<Communicator> mpi, nccl;
  int64_t pos = 0;
  const std::vector<AxisList> allAxes = {{0}, {1}, {0, 1}, {1, 0}};
};
} // namespace

TEST_F(NcclVsMpiTest, AllReduceEveryKindAndType) {
  for (const AxisList &axes : allAxes)
    for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64, DType::I1})
      for (ReductionKind kind : {ReductionKind::Sum, ReductionKind::Max,
                                 ReductionKind::Min, ReductionKind::Product}) {
        Tensor send = data(t, 37, 1), want(t, {37});
        mpi->allReduce(send.getRawData(), want.getRawData(), 37, t, kind, axes);
        Tensor dsend = gpu->upload(send), got = gpu->allocate(t, {37});
        nccl->allReduce(dsend.getRawData(), got.getRawData(), 37, t, kind,
                        axes);
        expectSame(fetch(got), want,
                   !isFloatDType(t) || kind == ReductionKind::Max ||
                       kind == ReductionKind::Min);
      }
}

TEST_F(NcclVsMpiTest, GathersEvenAndUneven) {
  for (const AxisList &axes : allAxes) {
    int64_t n = mpi->getGroupSize(axes), me = mpi->getGroupIndex(axes);
    Tensor send = data(DType::I32, 5, 2), want(DType::I32, {5 * n});
    mpi->allGather(send.getRawData(), want.getRawData(), 20, axes);
    Tensor dsend = gpu->upload(send), got = gpu->allocate(DType::I32, {5 * n});
    nccl->allGather(dsend.getRawData(), got.getRawData(), 20, axes);
    expectSame(fetch(got), want, true);

    // Member k contributes 4 * (k + 1) bytes (k + 1 values), one empty.
    std::vector<int64_t> bytes;
    int64_t total = 0;
    for (int64_t k = 0; k < n; ++k) {
      bytes.push_back(k == 1 ? 0 : 4 * (k + 1));
      total += bytes.back() / 4;
    }
    Tensor vsend = data(DType::F32, std::max<int64_t>(1, bytes[me] / 4), 3);
    Tensor vwant(DType::F32, {total});
    mpi->allGatherV(vsend.getRawData(), vwant.getRawData(), bytes, axes);
    Tensor dv = gpu->upload(vsend), vgot = gpu->allocate(DType::F32, {total});
    nccl->allGatherV(dv.getRawData(), vgot.getRawData(), bytes, axes);
    expectSame(fetch(vgot), vwant, true);
  }
}

TEST_F(NcclVsMpiTest, ReduceScattersEvenAndUneven) {
  for (const AxisList &axes : allAxes) {
    int64_t n = mpi->getGroupSize(axes), me = mpi->getGroupIndex(axes);
    Tensor send = data(DType::I64, 3 * n, 4), want(DType::I64, {3});
    mpi->reduceScatter(send.getRawData(), want.getRawData(), 3, DType::I64,
                       ReductionKind::Sum, axes);
    Tensor dsend = gpu->upload(send), got = gpu->allocate(DType::I64, {3});
    nccl->reduceScatter(dsend.getRawData(), got.getRawData(), 3, DType::I64,
                        ReductionKind::Sum, axes);
    expectSame(fetch(got), want, true);

    std::vector<int64_t> counts;
    int64_t total = 0;
    for (int64_t k = 0; k < n; ++k) {
      counts.push_back(k + 2);
      total += k + 2;
    }
    Tensor vsend = data(DType::F32, total, 5), vwant(DType::F32, {me + 2});
    mpi->reduceScatterV(vsend.getRawData(), vwant.getRawData(), counts,
                        DType::F32, ReductionKind::Max, axes);
    Tensor dv = gpu->upload(vsend), vgot = gpu->allocate(DType::F32, {me + 2});
    nccl->reduceScatterV(dv.getRawData(), vgot.getRawData(), counts, DType::F32,
                         ReductionKind::Max, axes);
    expectSame(fetch(vgot), vwant, true);
  }
}

TEST_F(NcclVsMpiTest, AllToAllEvenAndUneven) {
  for (const AxisList &axes : allAxes) {
    int64_t n = mpi->getGroupSize(axes), me = mpi->getGroupIndex(axes);
    Tensor send = data(DType::I32, 4 * n, 6), want(DType::I32, {4 * n});
    mpi->allToAll(send.getRawData(), want.getRawData(), 16, axes);
    Tensor dsend = gpu->upload(send), got = gpu->allocate(DType::I32, {4 * n});
    nccl->allToAll(dsend.getRawData(), got.getRawData(), 16, axes);
    expectSame(fetch(got), want, true);

    // Member i sends (i + k + 1) values to member k.
    std::vector<int64_t> sendBytes, recvBytes;
    int64_t sendTotal = 0, recvTotal = 0;
    for (int64_t k = 0; k < n; ++k) {
      sendBytes.push_back(4 * (me + k + 1));
      recvBytes.push_back(4 * (k + me + 1));
      sendTotal += me + k + 1;
      recvTotal += k + me + 1;
    }
    Tensor vsend = data(DType::I32, sendTotal, 7);
    Tensor vwant(DType::I32, {recvTotal});
    mpi->allToAllV(vsend.getRawData(), sendBytes, vwant.getRawData(), recvBytes,
                   axes);
    Tensor dv = gpu->upload(vsend);
    Tensor vgot = gpu->allocate(DType::I32, {recvTotal});
    nccl->allToAllV(dv.getRawData(), sendBytes, vgot.getRawData(), recvBytes,
                    axes);
    expectSame(fetch(vgot), vwant, true);
  }
}

TEST_F(NcclVsMpiTest, SendRecvRingAndGatherToRoot) {
  int64_t size = mesh.getNumDevices();
  int64_t dst = (pos + 1) % size, src = (pos + size - 1) % size;
  Tensor send = data(DType::F64, 9, 8), want(DType::F64, {9});
  mpi->sendRecv(send.getRawData(), dst, want.getRawData(), src, 72);
  Tensor dsend = gpu->upload(send), got = gpu->allocate(DType::F64, {9});
  nccl->sendRecv(dsend.getRawData(), dst, got.getRawData(), src, 72);
  expectSame(fetch(got), want, true);
  // Position 0 only sends: its receive buffer keeps its contents.
  Tensor keep = gpu->allocate(DType::F64, {9});
  nccl->sendRecv(dsend.getRawData(), pos == size - 1 ? -1 : pos + 1,
                 keep.getRawData(), pos == 0 ? -1 : pos - 1, 72);
  if (pos == 0)
    expectSame(fetch(keep), Tensor(DType::F64, {9}), true);
  // gatherToRoot accepts device buffers.
  auto fromDevice = nccl->gatherToRoot(dsend.getRawData(), 72);
  auto fromHost = mpi->gatherToRoot(send.getRawData(), 72);
  EXPECT_EQ(fromDevice, fromHost);
  nccl->barrier();
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Only rank 0 prints, so FileCheck sees one summary.
  if (rank != 0)
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()
            ->listeners()
            .default_result_printer());
  int status = RUN_ALL_TESTS();
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  // Communicators (NCCL ones included) are gone before MPI_Finalize.
  MPI_Finalize();
  return status;
}
