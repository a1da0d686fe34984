//===- KernelCompiler.h - Loop nests -> native CPU kernels ------*- C++ -*-===//
//
// The loader (ProgramLoader.cpp) hands every loop nest it turns into an
// rt::GenericSpec to a KernelCompiler as well. Loop nests with static shapes,
// f32/f64/bf16/f16/i32/i64/i1/index operands and an arith/math/linalg.index
// body (bf16/f16 as i16 storage and f32 math, lib/Lower/HalfEmulation.h) are
// outlined into one kernel module (`func.func @autoshard_kernel_N` holding the
// same linalg.generic on memrefs with identity layouts); identical kernels are
// shared. finish() lowers that module with MLIR's pipelines (linalg to loops,
// math to libm/LLVM, everything to the LLVM dialect with bare-pointer
// memrefs), optimises it at O3 for the host CPU and emits an object file,
// linked with the system C compiler driver into a shared library the
// runtime dlopens (KernelLibrary.h). Results are bit-exact with the
// interpreter: IEEE semantics (no fast-math, no FP contraction, reductions
// in loop order) and f32 math functions evaluated by libm in double and
// rounded to f32, as the interpreter does.
//
// Libraries are cached by a hash of the kernel module text, the LLVM version
// and the host CPU, in $AUTOSHARD_KERNEL_CACHE, else
// $XDG_CACHE_HOME/autoshard/kernels, else ~/.cache/autoshard/kernels. The
// entry is built under a lock file, into a temporary name renamed into
// place, so MPI ranks loading the same program compile it once; a cached
// library that does not load or lacks a kernel is rebuilt.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LOWER_KERNELCOMPILER_H
#define AUTOSHARD_LOWER_KERNELCOMPILER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <optional>
#include <string>

namespace autoshard {

enum class KernelMode {
  /// Compile loop nests of at least KernelOptions::compileThreshold points.
  Auto,
  /// Compile every loop nest that can be compiled.
  Compiled,
  /// Interpret every loop nest (the reference).
  Interpreted,
};

/// "auto", "compiled" or "interpreted".
std::optional<KernelMode> parseKernelMode(llvm::StringRef text);

struct KernelOptions {
  KernelMode mode = KernelMode::Interpreted;
  /// Auto: the least iteration count (product of loop ranges) compiled.
  /// 1 compiles every loop nest: even a small nest runs several times
  /// faster compiled, and a program compiles once per host (cached).
  int64_t compileThreshold = 1;
  /// Fuse single-use elementwise producers into their consumers first
  /// (fuseElementwiseOps), so chains become one kernel.
  bool fuse = true;
  /// The cache directory; "" = the environment's (see above).
  std::string cacheDir;
  /// Generate CUDA kernels (GpuKernelCompiler.h) for the same loop nests
  /// instead of the CPU library: for programs the CUDA backend runs.
  bool gpu = false;
  /// The architecture the PTX targets ("" = $AUTOSHARD_CUDA_ARCH, else
  /// sm_90); the driver JIT-compiles it for newer GPUs.
  std::string gpuChip;
  /// The CUDA toolkit holding nvvm/libdevice; "" = $CUDA_HOME, $CUDA_PATH,
  /// $CUDA_ROOT, else /usr/local/cuda.
  std::string cudaPath;
};

/// The cache directory `options` select.
std::string getKernelCacheDir(const KernelOptions &options);

/// Upstream linalg elementwise fusion on `func`: single-use, all-parallel
/// producers fuse into their consumer when that consumer is all-parallel or
/// a one-input reduction (a contraction keeps its shape for BLAS), and
/// transcendental producers only when the consumer reads them at every
/// point once (no recomputation under a broadcast).
mlir::LogicalResult fuseElementwiseOps(mlir::Operation *func);

/// Rewrites every f32 math function in `module` to its f64 form between an
/// extf and a truncf: the interpreter evaluates them in double, so compiled
/// kernels (libm on the CPU, libdevice on CUDA) round the same way.
void promoteF32MathToF64(mlir::ModuleOp module);

/// A kernel compiler's failure: an error at `loc` in Compiled mode; in Auto
/// mode a warning (every loop nest is then interpreted) and "".
mlir::FailureOr<std::string> reportKernelFailure(mlir::Location loc,
                                                 bool autoMode,
                                                 const std::string &msg);

/// The first line of `text`, trimmed (tool logs, diagnostics).
std::string getFirstLine(llvm::StringRef text);

/// While alive, keeps the first error `context` reports, as one line, in
/// `error` (the kernel compilers' pipelines run in contexts of their own).
class FirstErrorHandler : public mlir::ScopedDiagnosticHandler {
public:
  FirstErrorHandler(mlir::MLIRContext *context, std::string &error);
};

/// Parses a printed kernel module (KernelCompiler::getKernelModule()) into
/// `context` with its f32 math promoted (promoteF32MathToF64); null on a
/// parse error (reported to `context`).
mlir::OwningOpRef<mlir::ModuleOp> parseKernelModule(llvm::StringRef text,
                                                    mlir::MLIRContext *context);

class KernelCompiler {
public:
  KernelCompiler(mlir::MLIRContext *context, KernelOptions options);
  ~KernelCompiler();

  /// Whether a loop nest of `iterations` points should be compiled.
  bool wants(int64_t iterations) const;

  /// Outlines a linalg op with a body (generic, map, reduce, elementwise
  /// named ops). `captures` lists the values the body uses from outside
  /// with their capture index (the kernel's argument after inputs and
  /// outputs). Returns the kernel's symbol, or "" when it cannot be
  /// compiled (it is then interpreted).
  std::string addLinalg(mlir::linalg::LinalgOp op,
                        llvm::ArrayRef<std::pair<mlir::Value, int>> captures,
                        int numCaptures);
  /// Outlines an arith/math op on tensors (rank-0 operands broadcast), as
  /// the loader's elementwise loop nest. Returns the symbol or "".
  std::string addElementwise(mlir::Operation *op);

  /// Compiles the outlined kernels into a shared library (or finds it in
  /// the cache) and returns its path; "" when there are no kernels. Fails
  /// with an error at `loc`; in Auto mode a failure (no C compiler, an
  /// unwritable cache, ...) is a warning and returns "": the caller then
  /// interprets every loop nest.
  mlir::FailureOr<std::string> finish(mlir::Location loc);

  int64_t getNumKernels() const;
  /// The outlined kernels (`func.func @autoshard_kernel_N`, one linalg op on
  /// memrefs each), for the GPU compiler; null in Interpreted mode.
  mlir::ModuleOp getKernelModule() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace autoshard

#endif // AUTOSHARD_LOWER_KERNELCOMPILER_H
