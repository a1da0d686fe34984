//===- RoundStats.h - Ratios of interleaved timing rounds -------*- C++ -*-===//
//
// autoshard-bench-gpu-gemm times each side (program, backend, cuBLASLt, ...)
// once per round, the sides in turn, for several rounds. A clock ramp or a
// burst of other work slows both sides of one round alike, so the ratio
// within a round is steadier than the ratio of two best times taken at
// different moments; the bench reports the median of those ratios. Kept
// free of CUDA so that `--self-test` checks it on any machine.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_BENCH_RUNTIME_GPU_GEMM_ROUNDSTATS_H
#define AUTOSHARD_BENCH_RUNTIME_GPU_GEMM_ROUNDSTATS_H

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace bench {

/// The median (the mean of the two middle values for an even count); NaN
/// for none.
inline double median(std::vector<double> v) {
  if (v.empty())
    return std::nan("");
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

/// The smallest time (the best round); NaN for none.
inline double best(const std::vector<double> &seconds) {
  return seconds.empty() ? std::nan("")
                         : *std::min_element(seconds.begin(), seconds.end());
}

/// The median over rounds r of side / reference throughput, i.e.
/// reference[r] / side[r] for per-call times (1.0: as fast; below: slower).
inline double medianSpeedRatio(const std::vector<double> &side,
                               const std::vector<double> &reference) {
  std::vector<double> ratios;
  for (size_t r = 0; r < std::min(side.size(), reference.size()); ++r)
    ratios.push_back(reference[r] / side[r]);
  return median(ratios);
}

/// Checks the statistics on fixed rounds; prints and returns the verdict.
inline bool selfTest() {
  bool ok = median({3, 1, 2}) == 2 && median({4, 1, 3, 2}) == 2.5 &&
            std::isnan(median({})) && best({3e-6, 2e-6, 5e-6}) == 2e-6;
  // A side 5% slower in every round, one round disturbed for both (a clock
  // ramp), one round disturbed for the side alone: the median keeps 1/1.05.
  std::vector<double> ref = {10e-6, 20e-6, 10e-6, 10e-6, 10e-6};
  std::vector<double> side = {10.5e-6, 21e-6, 10.5e-6, 30e-6, 10.5e-6};
  ok = ok && std::abs(medianSpeedRatio(side, ref) - 1 / 1.05) < 1e-12;
  std::printf("gpu_gemm: self-test %s\n", ok ? "passed" : "FAILED");
  return ok;
}

} // namespace bench

#endif // AUTOSHARD_BENCH_RUNTIME_GPU_GEMM_ROUNDSTATS_H
