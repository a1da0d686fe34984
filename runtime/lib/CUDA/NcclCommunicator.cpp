//===- NcclCommunicator.cpp - Collectives over NCCL -----------------------===//
//
// One NCCL communicator per mesh-axis group, created in prepareGroup: the
// ranks of a group find each other with splitGroupComm (MpiGroups.h, the
// same split the MPI communicator uses), the group's member 0 makes an ncclUniqueId and broadcasts it over
// that MPI sub-communicator, and every member joins with its in-group index
// as NCCL rank. So NCCL rank k of a group is group member k of
// DeviceMesh::getGroup, and block k of a gathered buffer is member k's.
// A communicator over all axes (NCCL rank = mesh position) carries the
// point-to-point permutes.
//
// NCCL has no variable-size collectives; they are grouped calls
// (ncclGroupStart/End): allGatherV = one ncclBroadcast per member,
// reduceScatterV = one ncclReduce per member, allToAll(V) = ncclSend/ncclRecv
// per peer. Host-side services (gatherToRoot, barrier, abort) use MPI.
//
// Streams: by default every collective runs on a communication stream of
// its own, after an event recorded on the backend's (compute) stream, and
// recordCompletion() / waitFor() hand its end back to the compute stream, so
// the executor overlaps compute with it (Communicator::isAsynchronous).
// AUTOSHARD_NCCL_OVERLAP=0 (or createNcclCommunicator(..., false)) queues
// them on the compute stream instead, in order with its kernels.
//
//===----------------------------------------------------------------------===//

#include "CudaContext.h"
#include "autoshard/Runtime/CudaBackend.h"

#include <nccl.h>
#ifdef AUTOSHARD_HAVE_MPI
#include "../MpiGroups.h"
#endif

#include <cstdlib>
#include <map>
#include <numeric>

using namespace autoshard;
using namespace autoshard::rt;
using namespace autoshard::rt::cuda;

namespace {

void checkNccl(ncclResult_t status, const char *call, ncclComm_t comm) {
  if (status == ncclSuccess)
    return;
  std::string detail = comm ? ncclGetLastError(comm) : "";
  throw Error(std::string("NCCL error in ") + call + ": " +
              ncclGetErrorString(status) +
              (detail.empty() ? "" : " (" + detail + ")"));
}
#define AUTOSHARD_NCCL_CHECK(call, comm) checkNccl((call), #call, (comm))

ncclDataType_t getNcclType(DType type) {
  switch (type) {
  case DType::F32:
    return ncclFloat32;
  case DType::F64:
    return ncclFloat64;
  case DType::I32:
    return ncclInt32;
  case DType::I64:
    return ncclInt64;
  case DType::I1:
    return ncclUint8;
  case DType::BF16: // sums add in f32 and round per step
    return ncclBfloat16;
  case DType::F16:
    return ncclFloat16;
  }
  return ncclUint8;
}

ncclRedOp_t getNcclOp(ReductionKind kind, DType type) {
  // Booleans are 0/1 bytes: "or" is max, "and" is min.
  if (type == DType::I1)
    return (kind == ReductionKind::Sum || kind == ReductionKind::Max)
               ? ncclMax
               : ncclMin;
  switch (kind) {
  case ReductionKind::Sum:
    return ncclSum;
  case ReductionKind::Max:
    return ncclMax;
  case ReductionKind::Min:
    return ncclMin;
  case ReductionKind::Product:
    return ncclProd;
  }
  return ncclSum;
}

size_t toCount(int64_t n) {
  if (n < 0)
    throw Error("negative message size " + std::to_string(n));
  return static_cast<size_t>(n);
}

const char *at(const void *p, int64_t offset) {
  return static_cast<const char *>(p) + offset;
}
char *at(void *p, int64_t offset) { return static_cast<char *>(p) + offset; }

class NcclCommunicator final : public Communicator {
public:
  NcclCommunicator(const DeviceMesh &mesh, const StreamInfo &info,
                   bool overlap)
      : Communicator(mesh), info(info), useMpi(isMpiRunning()),
        host(useMpi ? createMpiCommunicator(mesh)
                    : createLocalCommunicator(mesh)) {
    AUTOSHARD_CUDA_CHECK(cudaSetDevice(info.device));
    if (overlap) {
      // The highest priority: a collective's kernels should not queue
      // behind the compute it overlaps.
      int least = 0, greatest = 0;
      AUTOSHARD_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      AUTOSHARD_CUDA_CHECK(cudaStreamCreateWithPriority(
          &commStream, cudaStreamNonBlocking, greatest));
      AUTOSHARD_CUDA_CHECK(
          cudaEventCreateWithFlags(&computeReady, cudaEventDisableTiming));
    }
    std::vector<int64_t> all(mesh.getNumAxes());
    std::iota(all.begin(), all.end(), 0);
    prepareGroup(all);
    world = groups.at(all);
  }

  ~NcclCommunicator() override {
    cudaSetDevice(info.device);
    cudaStreamSynchronize(info.stream);
    if (commStream)
      cudaStreamSynchronize(commStream);
    for (auto &entry : groups)
      ncclCommDestroy(entry.second);
    if (computeReady)
      cudaEventDestroy(computeReady);
    if (commStream)
      cudaStreamDestroy(commStream);
  }

  bool isAsynchronous() const override { return commStream != nullptr; }

  std::shared_ptr<Completion> recordCompletion() override {
    if (!commStream)
      return nullptr;
    auto done = std::make_shared<EventCompletion>();
    AUTOSHARD_CUDA_CHECK(
        cudaEventCreateWithFlags(&done->event, cudaEventDisableTiming));
    AUTOSHARD_CUDA_CHECK(cudaEventRecord(done->event, commStream));
    return done;
  }

  void waitFor(const Completion &done) override {
    auto *event = dynamic_cast<const EventCompletion *>(&done);
    if (event && event->event)
      AUTOSHARD_CUDA_CHECK(cudaStreamWaitEvent(info.stream, event->event, 0));
  }

  int64_t getRank() const override { return host->getRank(); }
  int64_t getSize() const override { return host->getSize(); }

  void prepareGroup(const AxisList &axes) override {
    if (groups.count(axes))
      return;
    checkAxes(axes);
    int64_t pos = getPosition();
    std::vector<int64_t> group = mesh.getGroup(pos, axes);
    int nranks = static_cast<int>(group.size());
    int me = static_cast<int>(mesh.getIndexInGroup(pos, axes));
    ncclUniqueId id;
#ifdef AUTOSHARD_HAVE_MPI
    if (!useMpi) {
      // A single process (no MPI job): every group is this rank alone.
      if (nranks != 1)
        throw Error("NCCL groups of more than one rank need an MPI job to "
                    "exchange the ncclUniqueId");
      AUTOSHARD_NCCL_CHECK(ncclGetUniqueId(&id), nullptr);
    } else {
      MPI_Comm sub = splitGroupComm(mesh, pos, axes);
      if (me == 0)
        AUTOSHARD_NCCL_CHECK(ncclGetUniqueId(&id), nullptr);
      MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, sub);
      MPI_Comm_free(&sub);
    }
#else
    if (nranks != 1)
      throw Error("NCCL groups of more than one rank need MPI to exchange "
                  "the ncclUniqueId; this runtime was built without MPI");
    AUTOSHARD_NCCL_CHECK(ncclGetUniqueId(&id), nullptr);
#endif
    ncclComm_t comm;
    AUTOSHARD_CUDA_CHECK(cudaSetDevice(info.device));
    AUTOSHARD_NCCL_CHECK(ncclCommInitRank(&comm, nranks, id, me), nullptr);
    groups[axes] = comm;
  }

  void allReduce(const void *send, void *recv, int64_t count, DType type,
                 ReductionKind kind, const AxisList &axes) override {
    cudaStream_t stream = begin();
    ncclComm_t comm = get(axes);
    AUTOSHARD_NCCL_CHECK(ncclAllReduce(send, recv, toCount(count),
                                       getNcclType(type),
                                       getNcclOp(kind, type), comm,
                                       stream),
                         comm);
  }

  void allGather(const void *send, void *recv, int64_t bytes,
                 const AxisList &axes) override {
    cudaStream_t stream = begin();
    ncclComm_t comm = get(axes);
    AUTOSHARD_NCCL_CHECK(ncclAllGather(send, recv, toCount(bytes), ncclUint8,
                                       comm, stream),
                         comm);
  }

  void allGatherV(const void *send, void *recv,
                  const std::vector<int64_t> &recvBytes,
                  const AxisList &axes) override {
    cudaStream_t stream = begin();
    ncclComm_t comm = get(axes);
    checkGroupCounts(recvBytes, axes);
    int64_t me = getGroupIndex(axes), offset = 0;
    AUTOSHARD_NCCL_CHECK(ncclGroupStart(), comm);
    for (size_t k = 0; k < recvBytes.size(); ++k) {
      if (recvBytes[k] > 0)
        AUTOSHARD_NCCL_CHECK(
            ncclBroadcast(static_cast<int64_t>(k) == me ? send : nullptr,
                          at(recv, offset), toCount(recvBytes[k]), ncclUint8,
                          static_cast<int>(k), comm, stream),
            comm);
      offset += recvBytes[k];
    }
    AUTOSHARD_NCCL_CHECK(ncclGroupEnd(), comm);
  }

  void reduceScatter(const void *send, void *recv, int64_t countPerMember,
                     DType type, ReductionKind kind,
                     const AxisList &axes) override {
    cudaStream_t stream = begin();
    ncclComm_t comm = get(axes);
    AUTOSHARD_NCCL_CHECK(ncclReduceScatter(send, recv, toCount(countPerMember),
                                           getNcclType(type),
                                           getNcclOp(kind, type), comm,
                                           stream),
                         comm);
  }

  void reduceScatterV(const void *send, void *recv,
                      const std::vector<int64_t> &counts, DType type,
                      ReductionKind kind, const AxisList &axes) override {
    cudaStream_t stream = begin();
    ncclComm_t comm = get(axes);
    checkGroupCounts(counts, axes);
    int64_t me = getGroupIndex(axes), offset = 0,
            elem = getDTypeSize(type);
    AUTOSHARD_NCCL_CHECK(ncclGroupStart(), comm);
    for (size_t k = 0; k < counts.size(); ++k) {
      if (counts[k] > 0)
        AUTOSHARD_NCCL_CHECK(
            ncclReduce(at(send, offset * elem),
                       static_cast<int64_t>(k) == me ? recv : nullptr,
                       toCount(counts[k]), getNcclType(type),
                       getNcclOp(kind, type), static_cast<int>(k), comm,
                       stream),
            comm);
      offset += counts[k];
    }
    AUTOSHARD_NCCL_CHECK(ncclGroupEnd(), comm);
  }

  void allToAll(const void *send, void *recv, int64_t bytesPerMember,
                const AxisList &axes) override {
    int64_t n = getGroupSize(axes);
    std::vector<int64_t> sizes(n, bytesPerMember);
    allToAllV(send, sizes, recv, sizes, axes);
  }

  void allToAllV(const void *send, const std::vector<int64_t> &sendBytes,
                 void *recv, const std::vector<int64_t> &recvBytes,
                 const AxisList &axes) override {
    cudaStream_t stream = begin();
    ncclComm_t comm = get(axes);
    checkGroupCounts(sendBytes, axes);
    checkGroupCounts(recvBytes, axes);
    int64_t sendOff = 0, recvOff = 0;
    AUTOSHARD_NCCL_CHECK(ncclGroupStart(), comm);
    for (size_t k = 0; k < sendBytes.size(); ++k) {
      int peer = static_cast<int>(k);
      if (sendBytes[k] > 0)
        AUTOSHARD_NCCL_CHECK(ncclSend(at(send, sendOff),
                                      toCount(sendBytes[k]), ncclUint8, peer,
                                      comm, stream),
                             comm);
      if (recvBytes[k] > 0)
        AUTOSHARD_NCCL_CHECK(ncclRecv(at(recv, recvOff),
                                      toCount(recvBytes[k]), ncclUint8, peer,
                                      comm, stream),
                             comm);
      sendOff += sendBytes[k];
      recvOff += recvBytes[k];
    }
    AUTOSHARD_NCCL_CHECK(ncclGroupEnd(), comm);
  }

  void sendRecv(const void *send, int64_t dstPos, void *recv, int64_t srcPos,
                int64_t bytes) override {
    if (bytes == 0 || (dstPos < 0 && srcPos < 0))
      return;
    cudaStream_t stream = begin();
    // In the all-axes communicator the NCCL rank is the mesh position.
    AUTOSHARD_NCCL_CHECK(ncclGroupStart(), world);
    if (dstPos >= 0)
      AUTOSHARD_NCCL_CHECK(ncclSend(send, toCount(bytes), ncclUint8,
                                    static_cast<int>(dstPos), world,
                                    stream),
                           world);
    if (srcPos >= 0)
      AUTOSHARD_NCCL_CHECK(ncclRecv(recv, toCount(bytes), ncclUint8,
                                    static_cast<int>(srcPos), world,
                                    stream),
                           world);
    AUTOSHARD_NCCL_CHECK(ncclGroupEnd(), world);
  }

  std::vector<std::vector<uint8_t>> gatherToRoot(const void *send,
                                                 int64_t bytes) override {
    // Accept device buffers too: stage them through host memory.
    cudaPointerAttributes attrs;
    if (bytes > 0 && cudaPointerGetAttributes(&attrs, send) == cudaSuccess &&
        attrs.type == cudaMemoryTypeDevice) {
      std::vector<uint8_t> staged(toCount(bytes));
      AUTOSHARD_CUDA_CHECK(cudaMemcpyAsync(staged.data(), send, staged.size(),
                                           cudaMemcpyDeviceToHost,
                                           info.stream));
      AUTOSHARD_CUDA_CHECK(cudaStreamSynchronize(info.stream));
      return host->gatherToRoot(staged.data(), bytes);
    }
    (void)cudaGetLastError(); // host pointers leave no error behind
    return host->gatherToRoot(send, bytes);
  }

  void barrier() override {
    AUTOSHARD_CUDA_CHECK(cudaStreamSynchronize(info.stream));
    if (commStream)
      AUTOSHARD_CUDA_CHECK(cudaStreamSynchronize(commStream));
    host->barrier();
  }

  [[noreturn]] void abort(const std::string &message, int code) override {
    // Unblock collectives stuck on a dead peer before ending the job.
    for (auto &entry : groups)
      ncclCommAbort(entry.second);
    groups.clear();
    host->abort(message, code);
    std::_Exit(code); // not reached: the host communicator ends the job
  }

private:
  struct EventCompletion : Completion {
    cudaEvent_t event = nullptr;
    ~EventCompletion() override {
      if (event)
        cudaEventDestroy(event); // released once it has happened
    }
  };

  /// The stream the next collective goes on: the compute stream, or the
  /// communication stream made to wait for the compute queued so far (it
  /// wrote the send buffer; the receive buffer's last readers are there).
  cudaStream_t begin() {
    if (!commStream)
      return info.stream;
    AUTOSHARD_CUDA_CHECK(cudaEventRecord(computeReady, info.stream));
    AUTOSHARD_CUDA_CHECK(cudaStreamWaitEvent(commStream, computeReady, 0));
    return commStream;
  }

  ncclComm_t get(const AxisList &axes) {
    auto it = groups.find(axes);
    if (it == groups.end())
      throw Error("internal: collective over axes not prepared with "
                  "prepareGroup");
    return it->second;
  }

  static bool isMpiRunning() {
#ifdef AUTOSHARD_HAVE_MPI
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    return initialized && !finalized;
#else
    return false;
#endif
  }

  StreamInfo info;
  cudaStream_t commStream = nullptr; // null: collectives on info.stream
  cudaEvent_t computeReady = nullptr;
  bool useMpi;
  std::unique_ptr<Communicator> host;
  std::map<AxisList, ncclComm_t> groups;
  ncclComm_t world = nullptr;
};
} // namespace

std::unique_ptr<Communicator>
autoshard::rt::createNcclCommunicator(const DeviceMesh &mesh,
                                      Backend &cudaBackend, bool overlap) {
  const StreamInfo *info = getStreamInfo(cudaBackend);
  if (!info)
    throw Error("the NCCL communicator needs the CUDA backend, got backend '" +
                cudaBackend.getName() + "'");
  return std::make_unique<NcclCommunicator>(mesh, *info, overlap);
}

std::unique_ptr<Communicator>
autoshard::rt::createNcclCommunicator(const DeviceMesh &mesh,
                                      Backend &cudaBackend) {
  const char *env = std::getenv("AUTOSHARD_NCCL_OVERLAP");
  bool overlap = !env || std::string(env) != "0";
  return createNcclCommunicator(mesh, cudaBackend, overlap);
}
