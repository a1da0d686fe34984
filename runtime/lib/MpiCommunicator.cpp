//===- MpiCommunicator.cpp - Collectives over MPI -------------------------===//
//
// World rank r holds mesh device id r. Each axis list gets one communicator
// per group, made once by splitGroupComm (MpiGroups.h), so MPI ranks in the
// sub-communicator are the in-group indices of DeviceMesh::getGroup.
//
//===----------------------------------------------------------------------===//

#include "MpiGroups.h"
#include "autoshard/Runtime/Communicator.h"

#include <mpi.h>

#include <climits>
#include <cstdio>
#include <map>

using namespace autoshard;
using namespace autoshard::rt;

bool autoshard::rt::isMpiAvailable() { return true; }

namespace {
MPI_Datatype getMpiType(DType type) {
  switch (type) {
  case DType::F32:
    return MPI_FLOAT;
  case DType::F64:
    return MPI_DOUBLE;
  case DType::I32:
    return MPI_INT32_T;
  case DType::I64:
    return MPI_INT64_T;
  case DType::I1:
    return MPI_UINT8_T;
  }
  return MPI_BYTE;
}

MPI_Op getMpiOp(ReductionKind kind, DType type) {
  if (type == DType::I1)
    return (kind == ReductionKind::Sum || kind == ReductionKind::Max)
               ? MPI_BOR
               : MPI_BAND;
  switch (kind) {
  case ReductionKind::Sum:
    return MPI_SUM;
  case ReductionKind::Max:
    return MPI_MAX;
  case ReductionKind::Min:
    return MPI_MIN;
  case ReductionKind::Product:
    return MPI_PROD;
  }
  return MPI_SUM;
}

int toInt(int64_t n) {
  if (n < 0 || n > INT_MAX)
    throw Error("message of " + std::to_string(n) +
                " elements exceeds MPI's int count");
  return static_cast<int>(n);
}

std::vector<int> toInts(const std::vector<int64_t> &v) {
  std::vector<int> out;
  for (int64_t x : v)
    out.push_back(toInt(x));
  return out;
}

std::vector<int> displacements(const std::vector<int> &counts) {
  std::vector<int> displs(counts.size(), 0);
  for (size_t i = 1; i < counts.size(); ++i)
    displs[i] = displs[i - 1] + counts[i - 1];
  return displs;
}

class MpiCommunicator final : public Communicator {
public:
  explicit MpiCommunicator(const DeviceMesh &mesh) : Communicator(mesh) {
    int r, s;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    rank = r;
    size = s;
    if (size != mesh.getNumDevices())
      throw Error("the program's mesh " + mesh.str() + " has " +
                  std::to_string(mesh.getNumDevices()) +
                  " devices but the job has " + std::to_string(size) +
                  " ranks");
    if (!mesh.getPositionOfDevice(rank))
      throw Error("rank " + std::to_string(rank) + " holds no device of mesh " +
                  mesh.str());
  }

  ~MpiCommunicator() override {
    for (auto &entry : groups)
      MPI_Comm_free(&entry.second);
  }

  int64_t getRank() const override { return rank; }
  int64_t getSize() const override { return size; }

  void prepareGroup(const AxisList &axes) override {
    if (groups.count(axes))
      return;
    checkAxes(axes);
    groups[axes] = splitGroupComm(mesh, getPosition(), axes);
  }

  void allReduce(const void *send, void *recv, int64_t count, DType type,
                 ReductionKind kind, const AxisList &axes) override {
    MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, toInt(count),
                  getMpiType(type), getMpiOp(kind, type), get(axes));
  }

  void allGather(const void *send, void *recv, int64_t bytes,
                 const AxisList &axes) override {
    MPI_Allgather(send, toInt(bytes), MPI_BYTE, recv, toInt(bytes), MPI_BYTE,
                  get(axes));
  }

  void allGatherV(const void *send, void *recv,
                  const std::vector<int64_t> &recvBytes,
                  const AxisList &axes) override {
    std::vector<int> counts = checkedCounts(recvBytes, axes);
    std::vector<int> displs = displacements(counts);
    int me = static_cast<int>(getGroupIndex(axes));
    MPI_Allgatherv(send, counts[me], MPI_BYTE, recv, counts.data(),
                   displs.data(), MPI_BYTE, get(axes));
  }

  void reduceScatter(const void *send, void *recv, int64_t countPerMember,
                     DType type, ReductionKind kind,
                     const AxisList &axes) override {
    MPI_Reduce_scatter_block(send, recv, toInt(countPerMember),
                             getMpiType(type), getMpiOp(kind, type), get(axes));
  }

  void reduceScatterV(const void *send, void *recv,
                      const std::vector<int64_t> &counts, DType type,
                      ReductionKind kind, const AxisList &axes) override {
    std::vector<int> c = checkedCounts(counts, axes);
    MPI_Reduce_scatter(send, recv, c.data(), getMpiType(type),
                       getMpiOp(kind, type), get(axes));
  }

  void allToAll(const void *send, void *recv, int64_t bytesPerMember,
                const AxisList &axes) override {
    MPI_Alltoall(send, toInt(bytesPerMember), MPI_BYTE, recv,
                 toInt(bytesPerMember), MPI_BYTE, get(axes));
  }

  void allToAllV(const void *send, const std::vector<int64_t> &sendBytes,
                 void *recv, const std::vector<int64_t> &recvBytes,
                 const AxisList &axes) override {
    std::vector<int> sc = checkedCounts(sendBytes, axes);
    std::vector<int> rc = checkedCounts(recvBytes, axes);
    std::vector<int> sd = displacements(sc), rd = displacements(rc);
    MPI_Alltoallv(send, sc.data(), sd.data(), MPI_BYTE, recv, rc.data(),
                  rd.data(), MPI_BYTE, get(axes));
  }

  void sendRecv(const void *send, int64_t dstPos, void *recv, int64_t srcPos,
                int64_t bytes) override {
    int dst = dstPos >= 0 ? static_cast<int>(mesh.getDeviceId(dstPos))
                          : MPI_PROC_NULL;
    int src = srcPos >= 0 ? static_cast<int>(mesh.getDeviceId(srcPos))
                          : MPI_PROC_NULL;
    MPI_Sendrecv(send, toInt(bytes), MPI_BYTE, dst, /*tag=*/17, recv,
                 toInt(bytes), MPI_BYTE, src, 17, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  }

  std::vector<std::vector<uint8_t>> gatherToRoot(const void *send,
                                                 int64_t bytes) override {
    int mine = toInt(bytes);
    std::vector<int> counts(rank == 0 ? size : 0);
    MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> displs = displacements(counts);
    std::vector<uint8_t> all;
    if (rank == 0)
      all.resize(displs.empty()
                     ? 0
                     : static_cast<size_t>(displs.back()) + counts.back());
    MPI_Gatherv(send, mine, MPI_BYTE, all.data(), counts.data(), displs.data(),
                MPI_BYTE, 0, MPI_COMM_WORLD);
    std::vector<std::vector<uint8_t>> out;
    for (size_t r = 0; r < counts.size(); ++r)
      out.emplace_back(all.begin() + displs[r],
                       all.begin() + displs[r] + counts[r]);
    return out;
  }

  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

  [[noreturn]] void abort(const std::string &message, int code) override {
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

private:
  MPI_Comm get(const AxisList &axes) {
    auto it = groups.find(axes);
    if (it == groups.end())
      throw Error("internal: collective over axes not prepared with "
                  "prepareGroup");
    return it->second;
  }

  std::vector<int> checkedCounts(const std::vector<int64_t> &counts,
                                 const AxisList &axes) {
    checkGroupCounts(counts, axes);
    return toInts(counts);
  }

  int64_t rank = 0, size = 1;
  std::map<AxisList, MPI_Comm> groups;
};
} // namespace

std::unique_ptr<Communicator>
autoshard::rt::createMpiCommunicator(const DeviceMesh &mesh) {
  return std::make_unique<MpiCommunicator>(mesh);
}
