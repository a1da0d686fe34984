//===- Communicator.h - Collectives over mesh-axis groups -------*- C++ -*-===//
//
// A Communicator moves contiguous buffers between the ranks of one mesh.
// Every collective runs within the groups of a list of mesh axes: the ranks
// that share the caller's coordinate on every other axis, ordered row-major
// over the listed axes (first listed = most major), exactly as
// DeviceMesh::getGroup. Block k of a gathered/scattered buffer belongs to
// group member k. Shape-aware packing (which dim is split) is the executor's
// job; a communicator only sees bytes and element counts.
//
// prepareGroup() must be called for every axis list the program uses, in the
// same order on every rank, before the first collective (MPI_Comm_split is
// collective); the executor does this once at construction.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_COMMUNICATOR_H
#define AUTOSHARD_RUNTIME_COMMUNICATOR_H

#include "autoshard/Runtime/Tensor.h"
#include "autoshard/Support/DeviceMesh.h"
#include "autoshard/Support/TensorLayout.h"

#include <chrono>
#include <memory>
#include <vector>

namespace autoshard::rt {

using AxisList = std::vector<int64_t>;

class Communicator {
public:
  explicit Communicator(DeviceMesh mesh) : mesh(std::move(mesh)) {}
  virtual ~Communicator();

  const DeviceMesh &getMesh() const { return mesh; }
  /// This process's rank among all processes and their number.
  virtual int64_t getRank() const = 0;
  virtual int64_t getSize() const = 0;
  /// This rank's mesh position (the position holding device id == rank).
  int64_t getPosition() const;
  /// Size of / this rank's index in its group over `axes`.
  int64_t getGroupSize(const AxisList &axes) const {
    return mesh.getGroupSize(axes);
  }
  int64_t getGroupIndex(const AxisList &axes) const {
    return mesh.getIndexInGroup(getPosition(), axes);
  }

  virtual void prepareGroup(const AxisList &axes) = 0;

  /// recv = reduction over the group of send (`count` elements).
  virtual void allReduce(const void *send, void *recv, int64_t count,
                         DType type, ReductionKind kind,
                         const AxisList &axes) = 0;
  /// recv = the group's send buffers (`bytes` each) one after the other.
  virtual void allGather(const void *send, void *recv, int64_t bytes,
                         const AxisList &axes) = 0;
  /// Member k contributes recvBytes[k] bytes (send holds this rank's).
  virtual void allGatherV(const void *send, void *recv,
                          const std::vector<int64_t> &recvBytes,
                          const AxisList &axes) = 0;
  /// send holds one block of `countPerMember` elements per member; recv =
  /// the reduction over the group of this rank's block.
  virtual void reduceScatter(const void *send, void *recv,
                             int64_t countPerMember, DType type,
                             ReductionKind kind, const AxisList &axes) = 0;
  /// Blocks of counts[k] elements.
  virtual void reduceScatterV(const void *send, void *recv,
                              const std::vector<int64_t> &counts, DType type,
                              ReductionKind kind, const AxisList &axes) = 0;
  /// Block k of send (`bytesPerMember`) goes to member k; recv block k
  /// comes from member k.
  virtual void allToAll(const void *send, void *recv, int64_t bytesPerMember,
                        const AxisList &axes) = 0;
  virtual void allToAllV(const void *send,
                         const std::vector<int64_t> &sendBytes, void *recv,
                         const std::vector<int64_t> &recvBytes,
                         const AxisList &axes) = 0;
  /// Point to point by mesh position: send `bytes` to dstPos and receive
  /// into recv from srcPos (either may be -1: nothing).
  virtual void sendRecv(const void *send, int64_t dstPos, void *recv,
                        int64_t srcPos, int64_t bytes) = 0;
  /// Rank 0 receives every rank's buffer (sizes may differ), in rank order;
  /// other ranks get an empty list.
  virtual std::vector<std::vector<uint8_t>> gatherToRoot(const void *send,
                                                         int64_t bytes) = 0;
  virtual void barrier() = 0;
  /// Ends the whole job with `code` after printing `message` to stderr.
  [[noreturn]] virtual void abort(const std::string &message, int code) = 0;

  /// Compute-communication overlap. An asynchronous communicator (NCCL on a
  /// CUDA stream of its own) only queues each collective, after the compute
  /// work queued so far; its buffers must stay alive, and compute work that
  /// reads the result or reuses the buffers must be queued after
  /// waitFor(*recordCompletion()). A synchronous one (MPI, local) has
  /// finished when the call returns, and the other two do nothing.
  class Completion {
  public:
    virtual ~Completion() = default;
  };
  virtual bool isAsynchronous() const { return false; }
  /// Marks the end of the collectives queued so far.
  virtual std::shared_ptr<Completion> recordCompletion() { return nullptr; }
  /// Compute work queued from now on runs after `done` (a device-side
  /// wait: the host does not block).
  virtual void waitFor(const Completion &done) {}

  /// Watchdog: a collective still waiting at `deadline` throws an Error that
  /// names the group members that did not arrive (the MPI communicator asks
  /// them; others ignore the deadline). time_point::max(): wait forever.
  /// Set from the thread that runs the collectives.
  using Deadline = std::chrono::steady_clock::time_point;
  virtual void setDeadline(Deadline deadline) {}

protected:
  /// For prepareGroup implementations: throws unless every axis is one of
  /// the mesh's.
  void checkAxes(const AxisList &axes) const;
  /// For the uneven collectives: throws unless `counts` has one entry per
  /// member of the group over `axes`.
  void checkGroupCounts(const std::vector<int64_t> &counts,
                        const AxisList &axes) const;

  DeviceMesh mesh;
};

/// One process running the whole mesh alone (a one-device mesh).
std::unique_ptr<Communicator> createLocalCommunicator(const DeviceMesh &mesh);

/// True when the runtime was built with MPI.
bool isMpiAvailable();
/// MPI_COMM_WORLD over `mesh` (MPI must be initialised; the world size must
/// equal the mesh size: throws otherwise).
std::unique_ptr<Communicator> createMpiCommunicator(const DeviceMesh &mesh);

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_COMMUNICATOR_H
