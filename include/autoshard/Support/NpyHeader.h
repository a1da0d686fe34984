//===- NpyHeader.h - Parse the header dict of a .npy file -------*- C++ -*-===//
//
// A .npy header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (8, 16), }
// numpy reads it with ast.literal_eval and requires exactly these three keys.
// This parser accepts the same literals (strings, True/False, tuples of
// non-negative integers) and rejects what numpy rejects, so a value hidden in
// another entry's string is never taken for the real one. Shared by the
// runtime and the importer's reader (MLIR-free).
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_SUPPORT_NPYHEADER_H
#define AUTOSHARD_SUPPORT_NPYHEADER_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace autoshard {

struct NpyHeaderDict {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  /// The product of `shape`; parsing fails when it (or its size in bytes at
  /// 8 bytes an element) does not fit in int64.
  int64_t numElements = 1;
};

/// Parses `text`, the header after the magic, version and length fields.
/// Returns "" on success, else why the header is invalid.
std::string parseNpyHeaderDict(std::string_view text, NpyHeaderDict &out);

} // namespace autoshard

#endif // AUTOSHARD_SUPPORT_NPYHEADER_H
