//===- BufferPool.h - Caching allocator of a backend ------------*- C++ -*-===//
//
// The buffers a backend hands out for tensors come from a BufferPool: a
// freed buffer goes back to a free list keyed by its size class and the
// next allocation of that class takes it, so a program run twice on the
// same shapes (a training step, --repeat) gets every buffer of its second
// run from the pool. Memory goes back to the system only when the pool dies
// (the backend and every buffer it handed out). The raw allocator is the
// backend's (aligned host memory, cudaMalloc); a device pool is safe to
// reuse without synchronising as long as every kernel runs on one stream.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_LIB_BUFFERPOOL_H
#define AUTOSHARD_RUNTIME_LIB_BUFFERPOOL_H

#include "autoshard/Runtime/Backend.h"

#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace autoshard::rt {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
public:
  using RawAlloc = std::function<void *(size_t bytes)>;
  using RawFree = std::function<void(void *)>;

  /// `alloc` returns null or throws on failure; blocks come back to `free`.
  static std::shared_ptr<BufferPool> create(MemorySpace space, RawAlloc alloc,
                                            RawFree free);
  ~BufferPool();
  BufferPool(const BufferPool &) = delete;
  BufferPool &operator=(const BufferPool &) = delete;

  /// A buffer of at least `bytes` bytes (contents undefined) that returns
  /// to this pool when its last tensor lets go of it.
  std::shared_ptr<Buffer> get(int64_t bytes);
  MemoryStats getStats() const;

  /// The capacity `bytes` is served from: a multiple of 64 bytes, with at
  /// most 1/8 more than asked above 4 KiB (eight classes per doubling).
  static size_t getSizeClass(int64_t bytes);

private:
  friend class PooledBuffer;
  BufferPool(MemorySpace space, RawAlloc alloc, RawFree free)
      : space(space), rawAlloc(std::move(alloc)), rawFree(std::move(free)) {}
  void release(void *data, size_t capacity);
  /// Counts `capacity` bytes as in use (the mutex is held).
  void lend(size_t capacity);

  MemorySpace space;
  RawAlloc rawAlloc;
  RawFree rawFree;
  mutable std::mutex mutex;
  std::unordered_map<size_t, std::vector<void *>> freeLists;
  MemoryStats stats;
};

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_LIB_BUFFERPOOL_H
