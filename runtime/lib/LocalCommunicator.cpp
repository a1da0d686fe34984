//===- LocalCommunicator.cpp - A one-process communicator -----------------===//
//
// Runs a one-device mesh without MPI: every group has one member, so every
// collective is a copy. Used for unpartitioned programs and builds without
// MPI.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/Communicator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace autoshard;
using namespace autoshard::rt;

Communicator::~Communicator() = default;

int64_t Communicator::getPosition() const {
  std::optional<int64_t> pos = mesh.getPositionOfDevice(getRank());
  if (!pos)
    throw Error("rank " + std::to_string(getRank()) +
                " holds no position of mesh " + mesh.str());
  return *pos;
}

void Communicator::checkAxes(const AxisList &axes) const {
  for (int64_t a : axes)
    if (a < 0 || a >= mesh.getNumAxes())
      throw Error("collective over mesh axis " + std::to_string(a) + " of a " +
                  std::to_string(mesh.getNumAxes()) + "-axis mesh");
}

void Communicator::checkGroupCounts(const std::vector<int64_t> &counts,
                                    const AxisList &axes) const {
  if (static_cast<int64_t>(counts.size()) != getGroupSize(axes))
    throw Error("uneven collective: " + std::to_string(counts.size()) +
                " sizes for a group of " + std::to_string(getGroupSize(axes)));
}

namespace {
class LocalCommunicator final : public Communicator {
public:
  using Communicator::Communicator;
  int64_t getRank() const override { return mesh.getDeviceId(0); }
  int64_t getSize() const override { return 1; }
  void prepareGroup(const AxisList &) override {}
  void allReduce(const void *send, void *recv, int64_t count, DType type,
                 ReductionKind, const AxisList &) override {
    copy(send, recv, count * getDTypeSize(type));
  }
  void allGather(const void *send, void *recv, int64_t bytes,
                 const AxisList &) override {
    copy(send, recv, bytes);
  }
  void allGatherV(const void *send, void *recv,
                  const std::vector<int64_t> &recvBytes,
                  const AxisList &) override {
    copy(send, recv, recvBytes.at(0));
  }
  void reduceScatter(const void *send, void *recv, int64_t count, DType type,
                     ReductionKind, const AxisList &) override {
    copy(send, recv, count * getDTypeSize(type));
  }
  void reduceScatterV(const void *send, void *recv,
                      const std::vector<int64_t> &counts, DType type,
                      ReductionKind, const AxisList &) override {
    copy(send, recv, counts.at(0) * getDTypeSize(type));
  }
  void allToAll(const void *send, void *recv, int64_t bytes,
                const AxisList &) override {
    copy(send, recv, bytes);
  }
  void allToAllV(const void *send, const std::vector<int64_t> &sendBytes,
                 void *recv, const std::vector<int64_t> &,
                 const AxisList &) override {
    copy(send, recv, sendBytes.at(0));
  }
  void sendRecv(const void *send, int64_t dstPos, void *recv, int64_t srcPos,
                int64_t bytes) override {
    if ((dstPos >= 0) != (srcPos >= 0))
      throw Error("permute: unmatched send or receive on a one-device mesh");
    if (dstPos >= 0)
      copy(send, recv, bytes);
  }
  std::vector<std::vector<uint8_t>> gatherToRoot(const void *send,
                                                 int64_t bytes) override {
    const auto *p = static_cast<const uint8_t *>(send);
    return {std::vector<uint8_t>(p, p + bytes)};
  }
  void barrier() override {}
  [[noreturn]] void abort(const std::string &message, int code) override {
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    std::_Exit(code);
  }

private:
  static void copy(const void *src, void *dst, int64_t bytes) {
    if (src != dst && bytes > 0)
      std::memmove(dst, src, bytes);
  }
};
} // namespace

std::unique_ptr<Communicator>
autoshard::rt::createLocalCommunicator(const DeviceMesh &mesh) {
  if (mesh.getNumDevices() != 1)
    throw Error("a single process cannot run mesh " + mesh.str() + " of " +
                std::to_string(mesh.getNumDevices()) + " devices");
  return std::make_unique<LocalCommunicator>(mesh);
}
