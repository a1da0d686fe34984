//===- Contraction.h - Multiply-accumulate linalg ops as GEMMs --*- C++ -*-===//
//
// Internal to lib/Lower: recognises linalg ops (linalg.generic and named
// ones alike) that compute C += A * B over projected-permutation maps, i.e.
// a (batched) matrix product after some permutation of the loops, and emits
// them as one Matmul / BatchMatmul (BLAS or cuBLAS) between Reshapes (no
// copy) and, only where an operand's dims cannot be grouped as
// [batch][M][K] / [batch][K][M] (and likewise for B and C), one packed
// Transpose of that operand.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LIB_LOWER_CONTRACTION_H
#define AUTOSHARD_LIB_LOWER_CONTRACTION_H

#include "autoshard/Runtime/Program.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Support/LLVM.h"

#include <functional>

namespace autoshard::lower {

/// The pieces of the loader the contraction lowering builds with.
struct PlanBuilder {
  rt::Program &program;
  /// The plan value of an SSA value (a located error if it has none).
  std::function<mlir::FailureOr<rt::ValueId>(mlir::Value, mlir::Operation *)>
      lookup;
  /// A new plan value for an SSA value (a located error for bad types).
  std::function<mlir::FailureOr<rt::ValueId>(mlir::Value)> define;
  /// Appends an instruction located at `op`.
  std::function<rt::Instruction &(rt::OpKind, mlir::Operation *)> emit;
};

/// The runtime's element type of an MLIR scalar type (nullopt: none).
std::optional<rt::DType> toDType(mlir::Type type);

/// Lowers `op` as a GEMM when it is one: two inputs and one init of one
/// element type (f32 or f64), or bf16/f16 inputs with an f32 init (the body
/// extends them: --dist-mixed-precision), a body that yields init + in0 *
/// in1 (either operand order), static shapes, and maps that are projected permutations
/// (a constant 0 only on a size-1 dim) under which every loop of size > 1
/// is a batch loop (in all three operands), an M loop (in0 and the init), an
/// N loop (in1 and the init) or a K loop (both inputs), with K loops or
/// both M and N loops present, and M or N loops where there are batch loops
/// (elementwise multiply-adds and batched dot products are left to the loop
/// nests). A `dist.tf32` op sets the GEMM's tf32. An f32 contraction whose
/// result only a bias add along its columns and/or a ReLU / GELU reads
/// (GemmEpilogue.h; AUTOSHARD_GEMM_EPILOGUES=0 turns this off) becomes one
/// GEMM with that epilogue, emitted when the loader reaches the last of
/// those ops and defining its result; the contraction and the other ops
/// emit nothing. Returns true when `op` is lowered or folded so, false
/// (nothing emitted) when it is neither, failure after a diagnostic.
mlir::FailureOr<bool> tryLowerContraction(mlir::linalg::LinalgOp op,
                                          PlanBuilder &builder);

/// Whether tryLowerContraction lowers `op` as a GEMM.
bool isGemm(mlir::linalg::LinalgOp op);

/// The elementwise ops (and the bias broadcast) tryLowerContraction folds
/// into `op`'s GEMM as its epilogue; empty when it folds none. Kernel
/// fusion leaves these ops as they are.
llvm::SmallVector<mlir::Operation *> getGemmEpilogueOps(
    mlir::linalg::LinalgOp op);

/// Whether the linalg.transpose need not run: every use of its result is an
/// input of a contraction that tryLowerContraction lowers, which then reads
/// the transpose's input instead (the permutation folds into transA/transB
/// or, where the dims do not group, into the one packing copy it makes).
/// With several uses, each must read the input in place (no copy).
bool isFoldedIntoContractions(mlir::linalg::TransposeOp transpose);

/// Whether the linalg.fill need not run: every use of its result is the
/// init of a contraction that tryLowerContraction lowers and that makes its
/// own fill (in its packed order, or because the init is shared and would
/// be copied).
bool isRemadeByContractions(mlir::linalg::FillOp fill);

} // namespace autoshard::lower

#endif // AUTOSHARD_LIB_LOWER_CONTRACTION_H
