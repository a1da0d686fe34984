//===- ParseGuard.h - Reject what crashes upstream parsers ------*- C++ -*-===//
//
// LLVM 22's linalg parsers crash (null attribute, unchecked cast) on a few
// malformed custom forms instead of reporting them; mlir-opt-22 crashes the
// same way. autoshard reads its input with those parsers, so each tool
// scans the text first and turns these forms into a located error
// (docs/robustness.md, "Upstream parser crashes").
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_DIALECT_DIST_IR_PARSEGUARD_H
#define AUTOSHARD_DIALECT_DIST_IR_PARSEGUARD_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>
#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace autoshard {

/// A malformed construct that an upstream parser would crash on.
struct ParserHazard {
  size_t offset; // into the scanned text
  std::string message;
};

/// The first hazard in MLIR source `text`, if any: a linalg op whose
/// properties `<...>` are not a dictionary, or a linalg.transpose /
/// broadcast / reduce whose `permutation` / `dimensions` is not a list of
/// integers `[i, ...]`.
std::optional<ParserHazard> findParserHazard(llvm::StringRef text);

/// Scans `sourceMgr`'s main buffer and emits its first hazard as an error at
/// the hazard's file:line:col in `context`; failure if there was one.
mlir::LogicalResult checkParserHazards(const llvm::SourceMgr &sourceMgr,
                                       mlir::MLIRContext *context);

} // namespace autoshard

#endif // AUTOSHARD_DIALECT_DIST_IR_PARSEGUARD_H
