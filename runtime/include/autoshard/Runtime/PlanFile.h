//===- PlanFile.h - .asplan files: compile here, run there ------*- C++ -*-===//
//
// A plan file holds the lowered Program of every rank of a compiled model in
// a versioned binary format (runtime/proto/plan.proto), so autoshard-run can
// execute it without MLIR or LLVM: `autoshard compile ... -o model.asplan`
// writes one, `mpirun -np N autoshard-run model.asplan` runs it. Weights stay
// in their .npy files, referenced by path (absolute, or relative to the plan)
// and checksum; the compiled CPU kernel library is embedded and written back
// into the kernel cache when the plan is read; generated CUDA kernels (PTX)
// are embedded as text. Identical programs, loop nests and blobs are stored
// once.
//
// Reading checks the magic, the format version and a checksum of the
// payload: a truncated, corrupt or other-version file is an rt::Error of one
// line, "PATH: ...".
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_PLANFILE_H
#define AUTOSHARD_RUNTIME_PLANFILE_H

#include "autoshard/Runtime/Program.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace autoshard::rt {

/// Bumped on every change that an older reader would misread (2: GEMM
/// epilogues).
constexpr uint32_t kPlanFormatVersion = 2;

struct Plan {
  /// Distinct programs; `rankProgram[r]` is rank r's (empty: programs[0]
  /// for every rank: the loader's programs find their mesh position at run
  /// time, so one serves all ranks).
  std::vector<Program> programs;
  std::vector<uint32_t> rankProgram;

  /// Rank `rank`'s program; throws when the plan has none for it.
  const Program &getProgram(int64_t rank) const;
};

/// The bytes of a plan file (header and payload). Reads the kernel library
/// each program names (Program::kernelLibrary) to embed it; throws an
/// rt::Error when it cannot.
std::string encodePlan(const Plan &plan);

/// Decodes the bytes of a plan file; `name` prefixes the errors (the file's
/// path). Embedded kernel libraries are written to `kernelCacheDir` (""
/// for the default: $AUTOSHARD_KERNEL_CACHE, else $XDG_CACHE_HOME or
/// ~/.cache, /autoshard/kernels) under their recorded names, unless a file
/// with the same bytes is there, and Program::kernelLibrary names them.
Plan decodePlan(std::string_view bytes, const std::string &name,
                const std::string &kernelCacheDir = "");

/// encodePlan written to `path` (atomically: a temporary file renamed).
void writePlanFile(const std::string &path, const Plan &plan);
/// decodePlan of the file at `path`.
Plan readPlanFile(const std::string &path,
                  const std::string &kernelCacheDir = "");

/// The whole file at `path`; throws "cannot open 'PATH'".
std::string readFileBytes(const std::string &path);

/// xxh3-64 of `bytes`, the checksum of plan payloads and weight files (the
/// compiler's dist.weight_checksum is the same function, as 16 hex digits).
uint64_t hashBytes(const void *data, size_t size);
/// hashBytes as 16 lower-case hex digits.
std::string formatHash(uint64_t hash);

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_PLANFILE_H
