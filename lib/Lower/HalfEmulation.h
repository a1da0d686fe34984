//===- HalfEmulation.h - bf16/f16 loop nests as f32 code --------*- C++ -*-===//
//
// Compiled kernels (CPU library and CUDA) keep bf16 and f16 tensors as the
// runtime stores them, 16-bit patterns, and compute in f32, rounding the
// way the interpreter does (runtime/lib/ScalarEval.h), so a compiled loop
// nest equals the interpreted one bit for bit:
//   - a load widens the pattern to f32 (exact);
//   - + - * / sqrt rem on bf16/f16 run in f32 and round to nearest even to
//     the type: f32 carries >= 2p + 2 bits for p = 8 and 11, so this equals
//     the interpreter's double op rounded once;
//   - negf, absf, max/min, select, compares and constants are
//     exact in f32;
//   - math functions and int -> bf16/f16 conversions run in f64 and round
//     from double with f32 round-to-odd first (Half.h's doubleToBF16 /
//     doubleToF16), exactly as the interpreter;
//   - extf/truncf between bf16/f16 and f32/f64 are the widening and the
//     roundings above; a store narrows.
// The conversions are integer arithmetic on the bit patterns (the same
// steps as Half.h): no bf16/f16 type reaches LLVM, so neither the host's
// F16C/AVX512-BF16 nor libgcc's __truncsfbf2 matters, and the NVPTX and
// x86 kernels round identically.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LIB_LOWER_HALFEMULATION_H
#define AUTOSHARD_LIB_LOWER_HALFEMULATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"

namespace autoshard {

/// bf16 or f16.
bool isHalfType(mlir::Type type);

/// Whether emulateHalfTypes handles `op` (a loop-nest body op, or an
/// arith/math op on tensors, by element type): true for ops without
/// bf16/f16 operands or results.
bool canEmulateHalf(mlir::Operation *op);

/// Rewrites kernel `fn` (memref arguments, constants and capture loads in
/// its entry block, linalg.generic bodies) so bf16/f16 memrefs become i16
/// memrefs and every bf16/f16 value is computed in f32 as described above.
/// Fails, leaving `fn` half rewritten, on an op canEmulateHalf rejects.
mlir::LogicalResult emulateHalfTypes(mlir::func::FuncOp fn);

} // namespace autoshard

#endif // AUTOSHARD_LIB_LOWER_HALFEMULATION_H
