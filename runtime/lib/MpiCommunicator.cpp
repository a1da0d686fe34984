//===- MpiCommunicator.cpp - Collectives over MPI -------------------------===//
//
// World rank r holds mesh device id r. Each axis list gets one communicator
// per group, made once by splitGroupComm (MpiGroups.h), so MPI ranks in the
// sub-communicator are the in-group indices of DeviceMesh::getGroup.
//
// Watchdog: every collective is started non-blocking and polled, so that a
// rank still waiting at the deadline can ask the other members which
// collective they are in. Each rank counts the collectives it entered per
// group; a member that answers with a lower count, or not at all (stopped,
// dead, or busy outside collectives), did not arrive. While polling, a rank
// answers such questions from others. The questions are point to point on
// MPI_COMM_WORLD with tags of their own (collectives use a separate MPI
// context), so no collective call is needed to set them up.
//
//===----------------------------------------------------------------------===//

#include "MpiGroups.h"
#include "ScalarEval.h"
#include "autoshard/Runtime/Half.h"
#include "autoshard/Runtime/Communicator.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <thread>

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
  case DType::BF16:
  case DType::F16:
    return MPI_UINT16_T; // moved as bytes; sums use an f32 user op
  }
  return MPI_BYTE;
}

/// The reduction of bf16/f16 elements: each pairwise step widened to f32,
/// combined and rounded back to nearest even, as NCCL reduces them.
template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float),
          ReductionKind Kind>
void reduceHalf(void *in, void *inout, int *len, MPI_Datatype *) {
  const auto *a = static_cast<const uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = Narrow(scalar::combine(Widen(a[i]), Widen(b[i]), Kind));
}

template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
MPI_Op getHalfOp(ReductionKind kind) {
  // Created on first use (after MPI_Init), one per kind, kept to the end.
  static MPI_Op ops[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL,
                          MPI_OP_NULL};
  static MPI_User_function *fns[4] = {
      reduceHalf<Widen, Narrow, ReductionKind::Sum>,
      reduceHalf<Widen, Narrow, ReductionKind::Product>,
      reduceHalf<Widen, Narrow, ReductionKind::Max>,
      reduceHalf<Widen, Narrow, ReductionKind::Min>};
  int k = kind == ReductionKind::Sum       ? 0
          : kind == ReductionKind::Product ? 1
          : kind == ReductionKind::Max     ? 2
                                           : 3;
  if (ops[k] == MPI_OP_NULL)
    MPI_Op_create(fns[k], /*commute=*/1, &ops[k]);
  return ops[k];
}

MPI_Op getMpiOp(ReductionKind kind, DType type) {
  if (type == DType::BF16)
    return getHalfOp<bf16ToFloat, floatToBF16>(kind);
  if (type == DType::F16)
    return getHalfOp<f16ToFloat, floatToF16>(kind);
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

constexpr int kQueryTag = 7101, kReplyTag = 7102;
/// How long a timed-out rank waits for the members' answers.
constexpr auto kAnswerWait = std::chrono::seconds(1);

/// Counting keys of the collectives that are not over mesh axes.
const AxisList &worldKey() {
  static const AxisList key = {-1};
  return key;
}
const AxisList &pointToPointKey() {
  static const AxisList key = {-2};
  return key;
}

std::string joinRanks(const std::vector<int> &ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
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
    MPI_Request request;
    MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, toInt(count),
                   getMpiType(type), getMpiOp(kind, type), get(axes), &request);
    finish("all_reduce", axes, &request);
  }

  void allGather(const void *send, void *recv, int64_t bytes,
                 const AxisList &axes) override {
    MPI_Request request;
    MPI_Iallgather(send, toInt(bytes), MPI_BYTE, recv, toInt(bytes), MPI_BYTE,
                   get(axes), &request);
    finish("all_gather", axes, &request);
  }

  void allGatherV(const void *send, void *recv,
                  const std::vector<int64_t> &recvBytes,
                  const AxisList &axes) override {
    std::vector<int> counts = checkedCounts(recvBytes, axes);
    std::vector<int> displs = displacements(counts);
    int me = static_cast<int>(getGroupIndex(axes));
    MPI_Request request;
    MPI_Iallgatherv(send, counts[me], MPI_BYTE, recv, counts.data(),
                    displs.data(), MPI_BYTE, get(axes), &request);
    finish("all_gather", axes, &request);
  }

  void reduceScatter(const void *send, void *recv, int64_t countPerMember,
                     DType type, ReductionKind kind,
                     const AxisList &axes) override {
    MPI_Request request;
    MPI_Ireduce_scatter_block(send, recv, toInt(countPerMember),
                              getMpiType(type), getMpiOp(kind, type), get(axes),
                              &request);
    finish("reduce_scatter", axes, &request);
  }

  void reduceScatterV(const void *send, void *recv,
                      const std::vector<int64_t> &counts, DType type,
                      ReductionKind kind, const AxisList &axes) override {
    std::vector<int> c = checkedCounts(counts, axes);
    MPI_Request request;
    MPI_Ireduce_scatter(send, recv, c.data(), getMpiType(type),
                        getMpiOp(kind, type), get(axes), &request);
    finish("reduce_scatter", axes, &request);
  }

  void allToAll(const void *send, void *recv, int64_t bytesPerMember,
                const AxisList &axes) override {
    MPI_Request request;
    MPI_Ialltoall(send, toInt(bytesPerMember), MPI_BYTE, recv,
                  toInt(bytesPerMember), MPI_BYTE, get(axes), &request);
    finish("all_to_all", axes, &request);
  }

  void allToAllV(const void *send, const std::vector<int64_t> &sendBytes,
                 void *recv, const std::vector<int64_t> &recvBytes,
                 const AxisList &axes) override {
    std::vector<int> sc = checkedCounts(sendBytes, axes);
    std::vector<int> rc = checkedCounts(recvBytes, axes);
    std::vector<int> sd = displacements(sc), rd = displacements(rc);
    MPI_Request request;
    MPI_Ialltoallv(send, sc.data(), sd.data(), MPI_BYTE, recv, rc.data(),
                   rd.data(), MPI_BYTE, get(axes), &request);
    finish("all_to_all", axes, &request);
  }

  void sendRecv(const void *send, int64_t dstPos, void *recv, int64_t srcPos,
                int64_t bytes) override {
    int dst = dstPos >= 0 ? static_cast<int>(mesh.getDeviceId(dstPos))
                          : MPI_PROC_NULL;
    int src = srcPos >= 0 ? static_cast<int>(mesh.getDeviceId(srcPos))
                          : MPI_PROC_NULL;
    MPI_Request requests[2];
    MPI_Irecv(recv, toInt(bytes), MPI_BYTE, src, /*tag=*/17, MPI_COMM_WORLD,
              &requests[0]);
    MPI_Isend(send, toInt(bytes), MPI_BYTE, dst, 17, MPI_COMM_WORLD,
              &requests[1]);
    std::vector<int> peers;
    for (int peer : {src, dst})
      if (peer != MPI_PROC_NULL)
        peers.push_back(peer);
    finish("permute", pointToPointKey(), requests, 2, peers);
  }

  std::vector<std::vector<uint8_t>> gatherToRoot(const void *send,
                                                 int64_t bytes) override {
    int mine = toInt(bytes);
    std::vector<int> counts(rank == 0 ? size : 0);
    MPI_Request request;
    MPI_Igather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD,
                &request);
    finish("gather", worldKey(), &request);
    std::vector<int> displs = displacements(counts);
    std::vector<uint8_t> all;
    if (rank == 0)
      all.resize(displs.empty()
                     ? 0
                     : static_cast<size_t>(displs.back()) + counts.back());
    MPI_Igatherv(send, mine, MPI_BYTE, all.data(), counts.data(), displs.data(),
                 MPI_BYTE, 0, MPI_COMM_WORLD, &request);
    finish("gather", worldKey(), &request);
    std::vector<std::vector<uint8_t>> out;
    for (size_t r = 0; r < counts.size(); ++r)
      out.emplace_back(all.begin() + displs[r],
                       all.begin() + displs[r] + counts[r]);
    return out;
  }

  void barrier() override {
    MPI_Request request;
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    finish("barrier", worldKey(), &request);
  }

  void setDeadline(Deadline newDeadline) override { deadline = newDeadline; }

  [[noreturn]] void abort(const std::string &message, int code) override {
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

private:
  using Clock = std::chrono::steady_clock;

  /// Waits for `requests` of the collective `kind` over `key` (mesh axes,
  /// worldKey() or pointToPointKey() with its `peers`), answering the
  /// watchdog's questions, until the deadline.
  void finish(const char *kind, const AxisList &key, MPI_Request *requests,
              int count = 1, std::vector<int> peers = {}) {
    current = {kind, key, ++entered[key], std::move(peers)};
    int done = 0;
    // Checking the clock and probing for questions every few tests keeps
    // the loop as cheap as MPI's own blocking wait.
    for (unsigned spin = 0;; ++spin) {
      MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE);
      if (done)
        break;
      if (spin % 64 == 63) {
        answerQuestions();
        if (deadline != Deadline::max() && Clock::now() >= deadline)
          timedOut();
      }
    }
    current.kind = nullptr;
  }

  /// "all_reduce #3 over mesh axes [dp]": the collective and how many this
  /// rank had entered over the same axes.
  std::string describe(const char *kind, const AxisList &key,
                       int64_t seq) const {
    std::string where;
    if (key == worldKey()) {
      where = "all ranks";
    } else if (key == pointToPointKey()) {
      where = "a peer";
    } else {
      where = "mesh axes [";
      for (size_t i = 0; i < key.size(); ++i)
        where += (i ? ", " : "") + mesh.getAxis(key[i]).name;
      where += "]";
    }
    return std::string(kind) + " #" + std::to_string(seq) + " over " + where;
  }

  /// World ranks of the other members of the current collective.
  std::vector<int> currentPeers() const {
    if (current.key == pointToPointKey())
      return current.peers;
    std::vector<int> peers;
    if (current.key == worldKey()) {
      for (int r = 0; r < size; ++r)
        peers.push_back(r);
    } else {
      for (int64_t pos : mesh.getGroup(getPosition(), current.key))
        peers.push_back(static_cast<int>(mesh.getDeviceId(pos)));
    }
    peers.erase(std::remove(peers.begin(), peers.end(), rank), peers.end());
    return peers;
  }

  /// Answers every pending question "how many collectives over KEY have you
  /// entered?" with that count and what this rank waits in now.
  void answerQuestions() {
    for (;;) {
      int flag = 0, length = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kQueryTag, MPI_COMM_WORLD, &flag, &status);
      if (!flag)
        return;
      MPI_Get_count(&status, MPI_INT64_T, &length);
      AxisList key(std::max(length, 0));
      MPI_Recv(key.data(), length, MPI_INT64_T, status.MPI_SOURCE, kQueryTag,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      auto it = entered.find(key);
      std::string answer =
          std::to_string(it == entered.end() ? 0 : it->second) + " " +
          (current.kind ? "it waits in " +
                              describe(current.kind, current.key, current.seq)
                        : std::string("it is between collectives"));
      MPI_Send(answer.data(), static_cast<int>(answer.size()), MPI_CHAR,
               status.MPI_SOURCE, kReplyTag, MPI_COMM_WORLD);
    }
  }

  /// The deadline passed in the current collective: asks its other members
  /// how far they got and throws an Error naming those that did not arrive.
  [[noreturn]] void timedOut() {
    std::vector<int> peers = currentPeers();
    std::vector<MPI_Request> questions(peers.size());
    for (size_t i = 0; i < peers.size(); ++i)
      MPI_Isend(current.key.data(), static_cast<int>(current.key.size()),
                MPI_INT64_T, peers[i], kQueryTag, MPI_COMM_WORLD,
                &questions[i]);
    std::map<int, std::string> answers;
    Clock::time_point until = Clock::now() + kAnswerWait;
    while (answers.size() < peers.size() && Clock::now() < until) {
      answerQuestions();
      int flag = 0, length = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kReplyTag, MPI_COMM_WORLD, &flag, &status);
      if (!flag) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      MPI_Get_count(&status, MPI_CHAR, &length);
      std::string answer(std::max(length, 0), '\0');
      MPI_Recv(answer.data(), length, MPI_CHAR, status.MPI_SOURCE, kReplyTag,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      answers[status.MPI_SOURCE] = answer;
    }
    std::vector<int> arrived = {static_cast<int>(rank)}, silent;
    std::string late;
    for (int peer : peers) {
      auto it = answers.find(peer);
      if (it == answers.end()) {
        silent.push_back(peer);
        continue;
      }
      size_t space = it->second.find(' ');
      int64_t seq = std::atoll(it->second.substr(0, space).c_str());
      if (seq >= current.seq)
        arrived.push_back(peer);
      else
        late += "; rank " + std::to_string(peer) + " did not arrive (" +
                it->second.substr(space + 1) + ")";
    }
    std::sort(arrived.begin(), arrived.end());
    std::string message = "timed out (--timeout) in " +
                          describe(current.kind, current.key, current.seq) +
                          ": ";
    if (!silent.empty())
      message += joinRanks(silent) +
                 " did not arrive (no answer: stopped, dead or busy outside "
                 "collectives)";
    message += silent.empty() && !late.empty() ? late.substr(2) : late;
    if (silent.empty() && late.empty())
      message += "every member arrived (the collective itself is stuck)";
    throw Error(message + "; arrived: " + joinRanks(arrived));
  }

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
  /// The watchdog's state: the deadline, the number of collectives entered
  /// per group key, and the collective this rank waits in (kind == nullptr:
  /// none).
  Deadline deadline = Deadline::max();
  std::map<AxisList, int64_t> entered;
  struct Waiting {
    const char *kind = nullptr;
    AxisList key;
    int64_t seq = 0;
    std::vector<int> peers;
  } current;
};
} // namespace

std::unique_ptr<Communicator>
autoshard::rt::createMpiCommunicator(const DeviceMesh &mesh) {
  return std::make_unique<MpiCommunicator>(mesh);
}
