//===- Npy.cpp - Write weights as NumPy .npy files ------------------------===//

#include "autoshard/Import/Npy.h"
#include "autoshard/Support/NpyHeader.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace llvm;

static constexpr char kMagic[] = "\x93NUMPY";

/// Writes `bytes` (row-major, `shape`) as a .npy file of dtype `descr`.
static std::string writeNpy(StringRef path, StringRef descr,
                            ArrayRef<int64_t> shape, StringRef bytes) {
  // numpy's tuple spelling: "()", "(5,)", "(2, 3)".
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i)
    dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    dims += ",";
  std::string header =
      "{'descr': '" + descr.str() + "', 'fortran_order': False, 'shape': (" +
      dims;
  header += "), }";
  // magic(6) + version(2) + length(2) + header + '\n' is a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return "cannot write '" + path.str() + "': " + ec.message();
  os.write(kMagic, 6);
  os << '\x01' << '\x00';
  uint16_t len = static_cast<uint16_t>(header.size());
  os << static_cast<char>(len & 0xff) << static_cast<char>(len >> 8);
  os << header;
  os.write(bytes.data(), bytes.size());
  os.close();
  if (os.has_error()) {
    std::string msg = os.error().message();
    os.clear_error(); // else the destructor aborts
    return "cannot write '" + path.str() + "': " + msg;
  }
  return "";
}

std::string autoshard::writeNpyF32(StringRef path, ArrayRef<int64_t> shape,
                                   ArrayRef<float> data) {
  static_assert(sizeof(float) == 4, "f32 expected");
  return writeNpy(path, "<f4", shape,
                  StringRef(reinterpret_cast<const char *>(data.data()),
                            data.size() * 4));
}

std::string autoshard::writeNpyF16(StringRef path, ArrayRef<int64_t> shape,
                                   ArrayRef<uint16_t> bits) {
  return writeNpy(path, "<f2", shape,
                  StringRef(reinterpret_cast<const char *>(bits.data()),
                            bits.size() * 2));
}

std::string autoshard::readNpyF32(StringRef path, std::vector<int64_t> &shape,
                                  std::vector<float> &data) {
  auto buf = MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buf)
    return "cannot read '" + path.str() + "': " + buf.getError().message();
  StringRef bytes = (*buf)->getBuffer();
  if (bytes.size() < 10 || !bytes.starts_with(StringRef(kMagic, 6)))
    return "'" + path.str() + "' is not a .npy file";
  if (bytes[6] != 1)
    return "'" + path.str() + "': only .npy format 1.0 is supported";
  size_t len = static_cast<uint8_t>(bytes[8]) |
               (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
  if (bytes.size() < 10 + len)
    return "'" + path.str() + "': truncated header";
  StringRef header = bytes.substr(10, len);
  NpyHeaderDict dict;
  std::string err = parseNpyHeaderDict(std::string_view(header), dict);
  if (!err.empty())
    return "'" + path.str() + "': " + err;
  if (dict.descr != "<f4" || dict.fortranOrder)
    return "'" + path.str() + "': expected little-endian f32 in C order";
  shape = dict.shape;
  int64_t numel = dict.numElements;
  StringRef payload = bytes.substr(10 + len);
  if (payload.size() != static_cast<size_t>(numel) * 4)
    return "'" + path.str() + "': payload size does not match the shape";
  data.resize(numel);
  std::memcpy(data.data(), payload.data(), payload.size());
  return "";
}
