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

} // namespace autoshard::rt::cpu

#endif // AUTOSHARD_RUNTIME_LIB_CPUKERNELS_H
