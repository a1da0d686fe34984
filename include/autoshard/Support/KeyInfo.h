//===- KeyInfo.h - DenseMap key info for packed integer keys ----*- C++ -*-===//
//
// llvm::DenseMapInfo<uint64_t> hashes as (unsigned)(key * 37): only the low
// 32 bits of the key reach the hash. Keys packed as (a << 32) | b, which the
// propagation pass and the reshard planner use for (shape, layout) pairs,
// then collide on every `a`, and lookups degrade to long probe chains (the
// planner's cost table holds ~10^5 such keys on 3-axis meshes). These infos
// mix all 64 bits.
//
//===----------------------------------------------------------------------===//

#ifndef AUTOSHARD_SUPPORT_KEYINFO_H
#define AUTOSHARD_SUPPORT_KEYINFO_H

#include "llvm/ADT/DenseMapInfo.h"

#include <cstdint>
#include <utility>

namespace autoshard {

/// splitmix64's finaliser: every input bit affects every output bit.
inline uint64_t mixBits(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

/// For llvm::DenseMap<uint64_t, V, PackedKeyInfo>. ~0 and ~0 - 1 are
/// reserved (empty and tombstone), as in DenseMapInfo<uint64_t>.
struct PackedKeyInfo {
  static inline uint64_t getEmptyKey() { return ~uint64_t(0); }
  static inline uint64_t getTombstoneKey() { return ~uint64_t(0) - 1; }
  static unsigned getHashValue(uint64_t key) {
    return static_cast<unsigned>(mixBits(key));
  }
  static bool isEqual(uint64_t a, uint64_t b) { return a == b; }
};

/// For llvm::DenseMap<std::pair<uint64_t, uint64_t>, V, PackedPairKeyInfo>.
struct PackedPairKeyInfo {
  using Key = std::pair<uint64_t, uint64_t>;
  static inline Key getEmptyKey() { return {~uint64_t(0), ~uint64_t(0)}; }
  static inline Key getTombstoneKey() {
    return {~uint64_t(0) - 1, ~uint64_t(0) - 1};
  }
  static unsigned getHashValue(const Key &key) {
    return static_cast<unsigned>(
        mixBits(mixBits(key.first) ^ (key.second + 0x9e3779b97f4a7c15ull)));
  }
  static bool isEqual(const Key &a, const Key &b) { return a == b; }
};

} // namespace autoshard

#endif // AUTOSHARD_SUPPORT_KEYINFO_H
