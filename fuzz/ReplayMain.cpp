//===- ReplayMain.cpp - Run a fuzz target over files, without libFuzzer ---===//
//
// `autoshard-fuzz-replay-TARGET FILE|DIR...` feeds every file (a directory:
// its files) to the target's LLVMFuzzerTestOneInput once and prints how many
// ran. A crash or hang is the test failure; built by every build so that CI
// replays the committed corpus and crash regressions.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

static bool runFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot open '%s'\n", path.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()),
                         bytes.size());
  return true;
}

int main(int argc, char **argv) {
  int ran = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path arg(argv[i]);
    std::vector<fs::path> files;
    if (fs::is_directory(arg)) {
      for (const auto &entry : fs::directory_iterator(arg))
        if (entry.is_regular_file())
          files.push_back(entry.path());
    } else {
      files.push_back(arg);
    }
    for (const fs::path &file : files) {
      if (!runFile(file))
        return 1;
      ++ran;
    }
  }
  std::printf("replayed %d inputs\n", ran);
  return 0;
}
