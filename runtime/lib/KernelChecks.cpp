//===- KernelChecks.cpp - Argument checks shared by the backends ----------===//

#include "KernelChecks.h"

#include <string>

namespace autoshard::rt {

void checkRank(const Tensor &t, int64_t rank, const char *what) {
  if (t.getRank() != rank)
    throw Error(std::string(what) + ": expected a rank-" +
                std::to_string(rank) + " tensor, got " + t.getTypeString());
}

void checkSameType(const Tensor &a, const Tensor &b, const char *what) {
  if (a.getDType() != b.getDType())
    throw Error(std::string(what) + ": element types differ (" +
                a.getTypeString() + " vs " + b.getTypeString() + ")");
}

void checkBox(const Tensor &t, const std::vector<int64_t> &offsets,
              const std::vector<int64_t> &sizes,
              const std::vector<int64_t> &strides, const char *what) {
  int64_t rank = t.getRank();
  if (static_cast<int64_t>(offsets.size()) != rank ||
      static_cast<int64_t>(sizes.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    throw Error(std::string(what) + ": slice rank does not match " +
                t.getTypeString());
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0)
      continue;
    int64_t last = offsets[d] + (sizes[d] - 1) * strides[d];
    if (offsets[d] < 0 || last < 0 || offsets[d] >= t.getDim(d) ||
        last >= t.getDim(d) || sizes[d] < 0)
      throw Error(std::string(what) + ": slice [offset " +
                  std::to_string(offsets[d]) + ", size " +
                  std::to_string(sizes[d]) + ", stride " +
                  std::to_string(strides[d]) + "] out of bounds in dim " +
                  std::to_string(d) + " of " + t.getTypeString());
  }
}

} // namespace autoshard::rt
