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
// A recorded CUDA graph writes the same buffers on every replay, so the
// blocks lent while it was recorded are reserved to it (a Reservation)
// until it dies: they do not go back to the free lists meanwhile.
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
  /// The blocks lent between beginReserving and endReserving: kept out of
  /// the free lists while it lives, back in them when it dies.
  class Reservation {
  public:
    ~Reservation();

  private:
    friend class BufferPool;
    std::shared_ptr<BufferPool> pool;
    std::unordered_map<void *, size_t> blocks; // block -> capacity
    std::vector<std::pair<void *, size_t>> idle; // reserved, not lent now
    bool closed = false; // recording ended: releases go to `idle`
  };

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

  /// Starts recording the blocks lent from now on; a get() that would need
  /// a block from the system throws rt::Error meanwhile (a graph being
  /// recorded must not allocate). Blocks released meanwhile are reused as
  /// usual, so the recorded run needs no more blocks than a plain one.
  void beginReserving();
  /// Stops recording. `keep`: the blocks lent meanwhile are reserved to the
  /// returned Reservation (those in the free lists now leave them); else
  /// they are ordinary blocks again and the result is null.
  std::shared_ptr<Reservation> endReserving(bool keep);

  /// The capacity `bytes` is served from: a multiple of 64 bytes, with at
  /// most 1/8 more than asked above 4 KiB (eight classes per doubling).
  static size_t getSizeClass(int64_t bytes);

private:
  friend class PooledBuffer;
  BufferPool(MemorySpace space, RawAlloc alloc, RawFree free)
      : space(space), rawAlloc(std::move(alloc)), rawFree(std::move(free)) {}
  void release(void *data, size_t capacity,
               const std::weak_ptr<Reservation> &reservation = {});
  /// Back to the free list (the mutex is held).
  void releaseLocked(void *data, size_t capacity);
  /// Counts `capacity` bytes as in use (the mutex is held).
  void lend(size_t capacity);

  MemorySpace space;
  RawAlloc rawAlloc;
  RawFree rawFree;
  mutable std::mutex mutex;
  std::unordered_map<size_t, std::vector<void *>> freeLists;
  MemoryStats stats;
  std::shared_ptr<Reservation> reserving; // between begin/endReserving
};

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_LIB_BUFFERPOOL_H
