//===- ProgramLoader.h - Partitioned MLIR module -> runtime Program -*- C++
//-*-//
//
// The only bridge between the compiler and the runtime: it walks the entry
// function of a module and builds the runtime's MLIR-free rt::Program.
//
// Accepted input (docs/design.md, "Contracts between the stages"):
//  - a partitioned module: local tensor types, `dist.layout` and
//    `dist.global_type` on arguments/results, the mesh from the module's
//    `dist.mesh` attribute (or the layouts), collectives as upstream `shard`
//    ops (all_reduce, all_gather, all_slice, reduce_scatter, all_to_all,
//    process_multi_index/process_linear_index) and `dist.permute` /
//    `dist.make_partial`;
//  - an unpartitioned (global) module: no `dist.global_type` anywhere; it
//    runs on a one-device mesh, annotations (`dist.annotate`, `dist.reshard`,
//    `shard.shard`) are identities.
// Ops: linalg structured ops (matmul/batch_matmul, and every other linalg
// op whose body is a multiply-accumulate over maps that describe a batched
// matrix product after a permutation of dims, reach BLAS/cuBLAS as one
// Matmul/BatchMatmul between storage-sharing Reshapes, plus one packed
// Transpose per operand whose dims do not group (lib/Lower/Contraction.h);
// the rest loop nests with an arith/math/linalg.index/tensor.extract body,
// interpreted by the runtime's evaluator or, with LowerOptions::kernels,
// compiled to native kernels (KernelCompiler.h)),
// linalg.softmax/transpose/fill, tensor.empty/expand_shape/collapse_shape/
// reshape/cast/extract_slice/insert_slice/concat/pad/gather/splat/extract,
// arith.constant (dense), arith/math on tensors and scalars. Anything else
// gets a located error naming the op.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LOWER_PROGRAMLOADER_H
#define AUTOSHARD_LOWER_PROGRAMLOADER_H

#include "autoshard/Lower/KernelCompiler.h"
#include "autoshard/Runtime/Program.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace autoshard {

struct LowerOptions {
  /// Contractions written as linalg.generic (or named ops other than plain
  /// matmul/batch_matmul) become GEMMs; false leaves them to the loop-nest
  /// evaluator, the reference tests compare against.
  bool gemmContractions = true;
  /// Loop nests (linalg ops with a body, arith/math on tensors): interpreted
  /// by the runtime's bytecode evaluator (the default, the reference), or
  /// compiled to native kernels (KernelCompiler.h). With kernels on and
  /// `kernels.fuse`, single-use elementwise producers are first fused into
  /// their consumers, on a copy of the module. The Program then names the
  /// shared library (Program::kernelLibrary) and every compiled loop nest its
  /// symbol (GenericSpec::kernel); the bytecode stays in the spec.
  KernelOptions kernels;
};

/// Lowers function `entry` (empty: `main`, else the only function with a
/// body) to a Program. Emits located diagnostics and fails on anything the
/// runtime cannot execute.
mlir::FailureOr<rt::Program> lowerToProgram(mlir::ModuleOp module,
                                            llvm::StringRef entry = "",
                                            const LowerOptions &options = {});

} // namespace autoshard

#endif // AUTOSHARD_LOWER_PROGRAMLOADER_H
