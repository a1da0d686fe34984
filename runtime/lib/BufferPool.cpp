//===- BufferPool.cpp - Caching allocator of a backend --------------------===//

#include "BufferPool.h"

#include <algorithm>

using namespace autoshard::rt;

namespace autoshard::rt {
/// A pool block lent to tensors; the destructor hands it back.
class PooledBuffer final : public Buffer {
public:
  PooledBuffer(std::shared_ptr<BufferPool> pool, void *block, int64_t size,
               size_t capacity, MemorySpace where,
               std::weak_ptr<BufferPool::Reservation> reservation)
      : pool(std::move(pool)), capacity(capacity),
        reservation(std::move(reservation)) {
    data = block;
    bytes = size;
    space = where;
  }
  ~PooledBuffer() override {
    pool->release(data, capacity, reservation);
    data = nullptr; // Buffer's destructor must not free it
  }

private:
  std::shared_ptr<BufferPool> pool;
  size_t capacity;
  std::weak_ptr<BufferPool::Reservation> reservation; // lent while recording
};
} // namespace autoshard::rt

std::shared_ptr<BufferPool> BufferPool::create(MemorySpace space,
                                               RawAlloc alloc, RawFree free) {
  return std::shared_ptr<BufferPool>(
      new BufferPool(space, std::move(alloc), std::move(free)));
}

BufferPool::~BufferPool() {
  for (auto &[capacity, blocks] : freeLists)
    for (void *block : blocks)
      rawFree(block);
}

size_t BufferPool::getSizeClass(int64_t bytes) {
  size_t n = std::max<size_t>(64, (static_cast<size_t>(bytes) + 63) / 64 * 64);
  if (n <= 4096)
    return n;
  size_t step = size_t(1) << (63 - __builtin_clzll(n) - 3);
  return (n + step - 1) / step * step;
}

std::shared_ptr<Buffer> BufferPool::get(int64_t bytes) {
  if (bytes < 0)
    throw Error("negative buffer size");
  size_t capacity = getSizeClass(bytes);
  void *block = nullptr;
  std::shared_ptr<Reservation> recording;
  {
    std::lock_guard<std::mutex> lock(mutex);
    recording = reserving;
    auto it = freeLists.find(capacity);
    if (it != freeLists.end() && !it->second.empty()) {
      block = it->second.back();
      it->second.pop_back();
      ++stats.poolHits;
      stats.pooledBytes -= capacity;
      lend(capacity);
      if (recording)
        recording->blocks.emplace(block, capacity);
    }
  }
  if (!block) {
    if (recording)
      throw Error("cannot obtain " + std::to_string(bytes) +
                  " bytes from the system while a graph is recorded");
    block = rawAlloc(capacity);
    if (!block)
      throw Error("out of memory allocating " + std::to_string(bytes) +
                  " bytes");
    std::lock_guard<std::mutex> lock(mutex);
    ++stats.systemAllocations;
    stats.systemBytes += capacity;
    lend(capacity);
  }
  return std::make_shared<PooledBuffer>(shared_from_this(), block, bytes,
                                        capacity, space, recording);
}

void BufferPool::beginReserving() {
  auto r = std::shared_ptr<Reservation>(new Reservation());
  r->pool = shared_from_this();
  std::lock_guard<std::mutex> lock(mutex);
  if (reserving)
    throw Error("internal: the buffer pool is already reserving");
  reserving = std::move(r);
}

std::shared_ptr<BufferPool::Reservation> BufferPool::endReserving(bool keep) {
  // Declared before the lock: a dropped reservation dies (and locks the
  // mutex in its destructor) after the lock is released.
  std::shared_ptr<Reservation> r;
  std::lock_guard<std::mutex> lock(mutex);
  r = std::move(reserving);
  reserving = nullptr;
  if (!r || !keep)
    return nullptr; // its idle list is empty: it hands nothing back
  // Blocks the recording released sit in the free lists: take them out.
  for (auto &[block, capacity] : r->blocks) {
    std::vector<void *> &list = freeLists[capacity];
    auto it = std::find(list.begin(), list.end(), block);
    if (it == list.end())
      continue; // still lent: comes to `idle` when released
    list.erase(it);
    stats.pooledBytes -= capacity;
    lend(capacity);
    r->idle.emplace_back(block, capacity);
  }
  r->closed = true;
  return r;
}

BufferPool::Reservation::~Reservation() {
  std::lock_guard<std::mutex> lock(pool->mutex);
  for (auto &[block, capacity] : idle)
    pool->releaseLocked(block, capacity);
}

void BufferPool::lend(size_t capacity) {
  stats.bytesInUse += capacity;
  stats.peakBytesInUse = std::max(stats.peakBytesInUse, stats.bytesInUse);
}

void BufferPool::release(void *data, size_t capacity,
                         const std::weak_ptr<Reservation> &reservation) {
  std::shared_ptr<Reservation> r = reservation.lock();
  std::lock_guard<std::mutex> lock(mutex);
  if (r && r->closed && r->blocks.count(data)) { // the graph's block
    r->idle.emplace_back(data, capacity);
    return;
  }
  releaseLocked(data, capacity);
}

void BufferPool::releaseLocked(void *data, size_t capacity) {
  freeLists[capacity].push_back(data);
  stats.bytesInUse -= capacity;
  stats.pooledBytes += capacity;
}

MemoryStats BufferPool::getStats() const {
  std::lock_guard<std::mutex> lock(mutex);
  return stats;
}
