//===- NpyFuzzer.cpp - Fuzz the .npy header parser and reader -------------===//
//
// The input is a whole .npy file: its header text goes to
// parseNpyHeaderDict, and the file (written to a private temporary path)
// to readNpyF32. Either must return an error or a consistent result.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Import/Npy.h"
#include "autoshard/Support/NpyHeader.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  autoshard::NpyHeaderDict dict;
  if (autoshard::parseNpyHeaderDict(bytes, dict).empty() &&
      dict.numElements < 0)
    std::abort();

  static const std::string path =
      "/tmp/autoshard-fuzz-npy-" + std::to_string(getpid()) + ".npy";
  if (FILE *f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    std::vector<int64_t> shape;
    std::vector<float> values;
    if (autoshard::readNpyF32(path, shape, values).empty()) {
      int64_t n = 1;
      for (int64_t d : shape)
        n *= d;
      if (static_cast<size_t>(n) != values.size())
        std::abort(); // a shape that does not match the data read
    }
  }
  return 0;
}
