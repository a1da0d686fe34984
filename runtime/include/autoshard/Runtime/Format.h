//===- Format.h - printf into a std::string ---------------------*- C++ -*-===//
//
// The figures the runtime and its tools print (profile tables, step lines)
// are short printf formats; this keeps them one call without pulling LLVM's
// formatting into the MLIR-free runtime.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_FORMAT_H
#define AUTOSHARD_RUNTIME_FORMAT_H

#include <cstdarg>
#include <cstdio>
#include <string>

namespace autoshard::rt {

/// printf into a string (output longer than 255 bytes is cut).
inline std::string format(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
inline std::string format(const char *fmt, ...) {
  char buf[256];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  return buf;
}

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_FORMAT_H
