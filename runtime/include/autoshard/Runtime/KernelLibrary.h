//===- KernelLibrary.h - Compiled loop-nest kernels -------------*- C++ -*-===//
//
// The compiler (lib/Lower/KernelCompiler.cpp) turns loop nests into native
// kernels in one shared library per program (Program::kernelLibrary); each
// kernel `NAME` is exported as `void NAME_packed(void **args)`, args being
// the element pointers of the generic's inputs, outputs (holding the inits
// on entry) and captures, in that order: row-major, dense, of the static
// shapes the plan records. Nothing here knows MLIR or LLVM: the library is
// opened with dlopen.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_KERNELLIBRARY_H
#define AUTOSHARD_RUNTIME_KERNELLIBRARY_H

#include "autoshard/Runtime/Tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace autoshard::rt {

/// A compiled kernel: `args` = input, output (init), capture data pointers.
using KernelFn = void (*)(void **args);

class KernelLibrary {
public:
  /// Opens `path`; throws a one-line rt::Error when it cannot be loaded.
  static std::shared_ptr<KernelLibrary> open(const std::string &path);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary &) = delete;
  KernelLibrary &operator=(const KernelLibrary &) = delete;

  /// The entry point of kernel `name` (`name` + "_packed"); throws a
  /// one-line rt::Error when the library does not define it.
  KernelFn lookup(const std::string &name) const;
  const std::string &getPath() const { return path; }

private:
  KernelLibrary(void *handle, std::string path)
      : handle(handle), path(std::move(path)) {}
  void *handle;
  std::string path;
};

/// Calls `fn` on host tensors (the caller checked types and shapes against
/// the plan): inputs, outputs (holding the inits), captures.
void runKernel(KernelFn fn, const std::vector<const Tensor *> &inputs,
               const std::vector<Tensor *> &outputs,
               const std::vector<const Tensor *> &captures);

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_KERNELLIBRARY_H
