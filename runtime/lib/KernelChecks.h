//===- KernelChecks.h - Argument checks shared by the backends --*- C++ -*-===//
//
// Every backend validates kernel arguments the same way and reports one
// rt::Error line; CPU and CUDA share these so their messages agree.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_LIB_KERNELCHECKS_H
#define AUTOSHARD_RUNTIME_LIB_KERNELCHECKS_H

#include "autoshard/Runtime/Backend.h"
#include "autoshard/Runtime/Tensor.h"

#include <vector>

namespace autoshard::rt {

/// `t` has rank `rank`.
void checkRank(const Tensor &t, int64_t rank, const char *what);
/// `a` and `b` have the same element type.
void checkSameType(const Tensor &a, const Tensor &b, const char *what);
/// offsets/sizes/strides describe an in-bounds box of `t`.
void checkBox(const Tensor &t, const std::vector<int64_t> &offsets,
              const std::vector<int64_t> &sizes,
              const std::vector<int64_t> &strides, const char *what);
/// A GEMM's operands have the ranks of options.batched (3, else 2) and one
/// batch size, and its epilogue fits (checkGemmEpilogue); returns the batch
/// size (1 unbatched).
int64_t checkGemmOperands(const Tensor &a, const Tensor &b, const Tensor &c,
                          const GemmOptions &options);
/// A GEMM epilogue (GemmOptions) fits c: an f32, bf16 or f16 c (cuBLASLt
/// has no f64 epilogues); a bias present exactly when the epilogue has one,
/// rank 1, c's element type, length c's last dim.
void checkGemmEpilogue(const Tensor &c, const GemmOptions &options,
                       const char *what);

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_LIB_KERNELCHECKS_H
