//===- Npy.h - Write weights as NumPy .npy files ----------------*- C++ -*-===//
//
// The importer keeps weight values out of the IR: each initializer is written
// as one .npy file (format 1.0, little-endian, C order) that the runtime and
// numpy read back.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_IMPORT_NPY_H
#define AUTOSHARD_IMPORT_NPY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace autoshard {

/// Writes `data` (row-major, `shape`) as a '<f4' .npy file. Returns an error
/// message, or "" on success.
std::string writeNpyF32(llvm::StringRef path, llvm::ArrayRef<int64_t> shape,
                        llvm::ArrayRef<float> data);

/// Writes IEEE float16 bit patterns as a '<f2' .npy file (numpy's float16).
std::string writeNpyF16(llvm::StringRef path, llvm::ArrayRef<int64_t> shape,
                        llvm::ArrayRef<uint16_t> bits);

/// Reads a '<f4' .npy file written in C order (used by tests and tools that
/// check what the importer wrote). Returns an error message or "".
std::string readNpyF32(llvm::StringRef path, std::vector<int64_t> &shape,
                       std::vector<float> &data);

} // namespace autoshard

#endif // AUTOSHARD_IMPORT_NPY_H
