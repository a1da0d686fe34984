//===- Profiler.h - Time per kernel kind ------------------------*- C++ -*-===//
//
// What an Executor spends its time on, summed over runs: calls and seconds
// per kernel kind (matmul, generic (interpreted), generic (compiled),
// transpose, collective all_reduce, ...; "init copy" for the copies of
// inits that stay live, "allocation" for allocating and freeing values).
// The executor measures an instruction as a whole and charges the
// allocations and copies inside it to their own kinds, so the kinds add up
// to the time spent in instructions. Without a profiler (the default) the
// executor reads no clock.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_PROFILER_H
#define AUTOSHARD_RUNTIME_PROFILER_H

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace autoshard::rt {

class Profiler {
public:
  struct Entry {
    std::string kind;
    int64_t calls = 0;
    double seconds = 0;
  };

  /// Seconds on a monotonic clock.
  static double now();

  /// The slot of `kind`, made on first use.
  size_t getSlot(const std::string &kind);
  void add(size_t slot, double seconds, int64_t calls = 1) {
    entries[slot].calls += calls;
    entries[slot].seconds += seconds;
  }
  /// One run of the program (its wall time, outside the kinds included).
  void addRun(double seconds) {
    ++runs;
    wallSeconds += seconds;
  }

  /// The kinds that were called, the most time first.
  std::vector<Entry> getEntries() const;
  int64_t getRuns() const { return runs; }
  double getWallSeconds() const { return wallSeconds; }

  /// A text table: kind, calls, total ms, ms and calls per run, share.
  std::string formatTable() const;
  /// {"runs": N, "wall_ms": T, "kinds": [{"kind", "calls", "ms"}, ...]}.
  std::string formatJson() const;

private:
  std::vector<Entry> entries;
  std::unordered_map<std::string, size_t> slots;
  int64_t runs = 0;
  double wallSeconds = 0;
};

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_PROFILER_H
