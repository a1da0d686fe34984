//===- CpuKernels.h - Internal CPU kernel entry points ----------*- C++ -*-===//
#ifndef AUTOSHARD_RUNTIME_LIB_CPUKERNELS_H
#define AUTOSHARD_RUNTIME_LIB_CPUKERNELS_H

#include "autoshard/Runtime/Program.h"
#include "autoshard/Runtime/Tensor.h"

#include <vector>

namespace autoshard::rt::cpu {

void runGeneric(const GenericSpec &spec,
                const std::vector<const Tensor *> &inputs,
                const std::vector<const Tensor *> &captures,
                const std::vector<Tensor *> &outputs);

/// 2-D NCHW f32 convolution and pooling through oneDNN (CpuConv.cpp); the
/// input is already padded. conv2d: out += conv(in, w). pool2d: out =
/// max(out, window max) or out += window sum.
bool haveWindowKernels();
void conv2d(const Tensor &in, const Tensor &w, Tensor &out,
            const std::vector<int64_t> &strides,
            const std::vector<int64_t> &dilations);
void pool2d(const Tensor &in, Tensor &out, const std::vector<int64_t> &kernel,
            const std::vector<int64_t> &strides,
            const std::vector<int64_t> &dilations, ReductionKind kind);

} // namespace autoshard::rt::cpu

#endif // AUTOSHARD_RUNTIME_LIB_CPUKERNELS_H
