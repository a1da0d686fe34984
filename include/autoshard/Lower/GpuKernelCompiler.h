//===- GpuKernelCompiler.h - Loop nests -> CUDA kernels (PTX) ---*- C++ -*-===//
//
// The CUDA form of the loop nests KernelCompiler outlines (same selection,
// fusion and outlining: KernelCompiler::getKernelModule()). Each
// `func.func @autoshard_kernel_N` holding one linalg op on memrefs becomes
// one `gpu.func` kernel through MLIR's own pipelines:
//
//   linalg (dims interchanged so the parallel ones come first)
//     -> convert-linalg-to-parallel-loops: one scf.parallel over the
//        parallel dims around scf.for loops over the reduction dims
//     -> the scf.parallel becomes one thread per point: id = blockIdx.x *
//        blockDim.x + threadIdx.x, `if (id < points)`, the ivs delinearised
//        from id (last dim fastest, so neighbouring threads touch
//        neighbouring elements); reductions run sequentially in the thread,
//        in loop order, like the interpreter
//     -> convert-gpu-to-nvvm (bare-pointer memrefs: one pointer parameter
//        per operand; math functions as libdevice calls)
//     -> gpu-module-to-binary format=isa: LLVM's NVPTX backend, libdevice
//        linked from the CUDA toolkit, PTX text.
//
// Like the CPU kernels, results follow the interpreter's rounding: no FP
// contraction (the NVPTX backend fuses a*b+c only under fp-contract=fast),
// f32 math functions evaluated in double (libdevice) and rounded to f32.
// bf16/f16 nests arrive emulated (lib/Lower/HalfEmulation.h): i16 buffers,
// f32 math and integer round-to-nearest-even, so the PTX has no bf16/f16
// instructions and rounds exactly as the CPU kernels and the interpreter.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LOWER_GPUKERNELCOMPILER_H
#define AUTOSHARD_LOWER_GPUKERNELCOMPILER_H

#include "autoshard/Lower/KernelCompiler.h"

#include "llvm/ADT/StringMap.h"

namespace autoshard {

struct GpuKernels {
  struct Entry {
    /// The PTX entry (GenericSpec::gpuKernel): the CPU symbol plus a hash
    /// of the kernel module, unique across programs.
    std::string name;
    /// Threads to launch (GenericSpec::gpuThreads): the number of points
    /// of its parallel loops (1 for a full reduction).
    int64_t threads = 0;
  };
  /// One PTX module holding every kernel (Program::gpuModule).
  std::string ptx;
  /// By KernelCompiler symbol.
  llvm::StringMap<Entry> kernels;
};

/// libdevice.10.bc under `options.cudaPath` (or the environment's toolkit,
/// see KernelOptions::cudaPath); fails with a one-line `error` naming the
/// path it looked at.
mlir::FailureOr<std::string> findLibdevice(const KernelOptions &options,
                                           std::string &error);

/// Compiles every kernel of `kernels` (KernelCompiler::getKernelModule()) to
/// PTX for `options.gpuChip`. Works on a copy in a context of its own;
/// fails with a one-line `error`.
mlir::FailureOr<GpuKernels> compileGpuKernels(mlir::ModuleOp kernels,
                                              const KernelOptions &options,
                                              std::string &error);

} // namespace autoshard

#endif // AUTOSHARD_LOWER_GPUKERNELCOMPILER_H
