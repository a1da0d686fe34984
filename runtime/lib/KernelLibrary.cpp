//===- KernelLibrary.cpp - Loading compiled loop-nest kernels -------------===//

#include "autoshard/Runtime/KernelLibrary.h"

#include <dlfcn.h>

using namespace autoshard::rt;

/// dlerror() text without the path it repeats, on one line.
static std::string lastDlError() {
  const char *e = dlerror();
  std::string s = e ? e : "unknown error";
  for (char &c : s)
    if (c == '\n')
      c = ' ';
  return s;
}

std::shared_ptr<KernelLibrary> KernelLibrary::open(const std::string &path) {
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw Error("cannot load compiled kernels '" + path +
                "': " + lastDlError() +
                " (rerun the compiler, or use --kernels=interpreted)");
  return std::shared_ptr<KernelLibrary>(new KernelLibrary(handle, path));
}

KernelLibrary::~KernelLibrary() { dlclose(handle); }

KernelFn KernelLibrary::lookup(const std::string &name) const {
  dlerror();
  void *sym = dlsym(handle, (name + "_packed").c_str());
  if (!sym)
    throw Error("compiled kernels '" + path + "' define no kernel '" + name +
                "' (a stale or foreign library; rerun the compiler)");
  return reinterpret_cast<KernelFn>(sym);
}

void autoshard::rt::runKernel(KernelFn fn,
                              const std::vector<const Tensor *> &inputs,
                              const std::vector<Tensor *> &outputs,
                              const std::vector<const Tensor *> &captures) {
  std::vector<void *> args;
  args.reserve(inputs.size() + outputs.size() + captures.size());
  for (const Tensor *t : inputs)
    args.push_back(t->getRawData());
  for (Tensor *t : outputs)
    args.push_back(t->getRawData());
  for (const Tensor *t : captures)
    args.push_back(t->getRawData());
  fn(args.data());
}
