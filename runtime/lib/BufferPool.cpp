//===- BufferPool.cpp - Caching allocator of a backend --------------------===//

#include "BufferPool.h"

#include <algorithm>

using namespace autoshard::rt;

namespace autoshard::rt {
/// A pool block lent to tensors; the destructor hands it back.
class PooledBuffer final : public Buffer {
public:
  PooledBuffer(std::shared_ptr<BufferPool> pool, void *block, int64_t size,
               size_t capacity, MemorySpace where)
      : pool(std::move(pool)), capacity(capacity) {
    data = block;
    bytes = size;
    space = where;
  }
  ~PooledBuffer() override {
    pool->release(data, capacity);
    data = nullptr; // Buffer's destructor must not free it
  }

private:
  std::shared_ptr<BufferPool> pool;
  size_t capacity;
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
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = freeLists.find(capacity);
    if (it != freeLists.end() && !it->second.empty()) {
      block = it->second.back();
      it->second.pop_back();
      ++stats.poolHits;
      stats.pooledBytes -= capacity;
      lend(capacity);
    }
  }
  if (!block) {
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
                                        capacity, space);
}

void BufferPool::lend(size_t capacity) {
  stats.bytesInUse += capacity;
  stats.peakBytesInUse = std::max(stats.peakBytesInUse, stats.bytesInUse);
}

void BufferPool::release(void *data, size_t capacity) {
  std::lock_guard<std::mutex> lock(mutex);
  freeLists[capacity].push_back(data);
  stats.bytesInUse -= capacity;
  stats.pooledBytes += capacity;
}

MemoryStats BufferPool::getStats() const {
  std::lock_guard<std::mutex> lock(mutex);
  return stats;
}
