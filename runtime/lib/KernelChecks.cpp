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

void checkGemmEpilogue(const Tensor &c, const GemmOptions &options,
                       const char *what) {
  if (options.epilogue == GemmEpilogue::None && !options.bias)
    return; // the common case: no message to prepare
  std::string epilogue(stringifyGemmEpilogue(options.epilogue));
  if (options.epilogue != GemmEpilogue::None && c.getDType() == DType::F64)
    throw Error(std::string(what) + ": epilogue " + epilogue +
                " on an f64 result (epilogues take f32, bf16 or f16)");
  if (!hasBias(options.epilogue)) {
    if (options.bias)
      throw Error(std::string(what) + ": epilogue " + epilogue +
                  " takes no bias");
    return;
  }
  const Tensor *bias = options.bias;
  if (!bias || bias->isNull())
    throw Error(std::string(what) + ": epilogue " + epilogue +
                " needs a bias");
  if (bias->getRank() != 1 || bias->getDType() != c.getDType() ||
      c.getRank() == 0 || bias->getDim(0) != c.getDim(c.getRank() - 1))
    throw Error(std::string(what) + ": the bias " + bias->getTypeString() +
                " does not fit the result " + c.getTypeString() +
                " (a vector of its type and last dim)");
}

int64_t checkGemmOperands(const Tensor &a, const Tensor &b, const Tensor &c,
                          const GemmOptions &o) {
  const char *what = o.batched ? "batch_matmul" : "matmul";
  int64_t rank = o.batched ? 3 : 2;
  checkRank(a, rank, what);
  checkRank(b, rank, what);
  checkRank(c, rank, what);
  int64_t batch = o.batched ? c.getDim(0) : 1;
  if (o.batched && (a.getDim(0) != batch || b.getDim(0) != batch))
    throw Error("batch_matmul: batch sizes differ (" + a.getTypeString() +
                ", " + b.getTypeString() + ", " + c.getTypeString() + ")");
  checkGemmEpilogue(c, o, what);
  return batch;
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
