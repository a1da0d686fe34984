//===- GemmEpilogue.h - Elementwise ops a GEMM can apply itself -*- C++ -*-===//
//
// Internal to lib/Lower: recognises the elementwise linalg ops that
// cuBLASLt's epilogues compute on a GEMM's result before storing it -- a
// bias added along the rows, then ReLU or GELU (tanh or erf form; cuBLASLt
// has the tanh one, the runtime's FP32 epilogue kernels both) -- so
// Contraction.cpp can fold them into the GEMM instruction
// (rt::GemmEpilogue). This file knows the op bodies only; whether the
// bias's dims line up with the GEMM's columns is the contraction's
// business.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LIB_LOWER_GEMMEPILOGUE_H
#define AUTOSHARD_LIB_LOWER_GEMMEPILOGUE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace autoshard::lower {

enum class Activation { None, Relu, Gelu, GeluErf };

/// One elementwise op that reads a GEMM result `x`: act(x [+ bias]).
struct EpilogueStep {
  Activation activation = Activation::None;
  /// The bias as stored and its indexing map from the step's loops (which
  /// are x's dims); null without a bias. A bias read through a pure
  /// broadcast (`broadcast`, a single-input copy) is read from the
  /// broadcast's input, the maps composed.
  mlir::Value bias;
  mlir::AffineMap biasMap;
  /// That broadcast when only this step reads it (it need not run then).
  mlir::Operation *broadcast = nullptr;
};

/// `op` as an epilogue step on its input `x`: all loops parallel, one f32
/// result, x and the result indexed by the identity, at most one other
/// input (the bias, f32), a body computing x + bias (either order), max(.,
/// 0) / GELU (tanh or erf form) of x or of that sum, or both, and nothing
/// else read.
/// nullopt when it is none of these, or when it would do nothing (a copy).
std::optional<EpilogueStep> matchEpilogueStep(mlir::linalg::LinalgOp op,
                                              mlir::Value x);

/// Merges the chain of elementwise linalg.generic ops that reads the GEMM
/// result of every contraction in `func` (Contraction.h isGemm) into one
/// op when that op is an epilogue step (matchEpilogueStep): e.g. the ONNX
/// exporter's bias Add then Div/Erf/Add/Mul/Mul becomes one op computing
/// GELU-erf(x + bias), which the contraction then folds. The chain's ops
/// read only x, one other tensor (the first op: the bias) and each other,
/// and only its last op's result is read elsewhere; the longest such
/// prefix that matches is merged. Runs before kernel fusion (which would
/// mix the chain with its neighbours); nothing when epilogues are off.
void groupGemmEpilogues(mlir::Operation *func);

/// Whether GEMM epilogues are on: AUTOSHARD_GEMM_EPILOGUES=0 turns them
/// off, so tests can compare a fused program with the unfused one.
bool gemmEpiloguesEnabled();

} // namespace autoshard::lower

#endif // AUTOSHARD_LIB_LOWER_GEMMEPILOGUE_H
