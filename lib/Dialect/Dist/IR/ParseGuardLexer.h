//===- ParseGuardLexer.h - MLIR token boundaries for ParseGuard -*- C++ -*-===//
//
// ParseGuard's first part: the text cut into tokens exactly as MLIR's lexer
// (mlir/lib/AsmParser/Lexer.cpp) cuts it, so that the hazard scanner meets
// each op name where the parser does. A scan that merely skims can be led
// past one, e.g. by a NUL byte (the lexer skips it), a `\r` ending a
// comment, `1linalg.x` (a number, then a name) or a dialect attribute body
// `#d.a<... // >` (read raw, no comments). Private to ParseGuard.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LIB_DIALECT_DIST_IR_PARSEGUARDLEXER_H
#define AUTOSHARD_LIB_DIALECT_DIST_IR_PARSEGUARDLEXER_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>

namespace autoshard::parse_guard {

/// What the hazard scanner needs to tell apart; everything else is `Other`.
enum class TokenKind { Eof, BareId, Integer, Punct, Other };

struct Token {
  TokenKind kind;
  llvm::StringRef spelling;
  size_t offset;
  bool is(char c) const {
    return kind == TokenKind::Punct && spelling.size() == 1 && spelling[0] == c;
  }
};

/// MLIR's lexer, reduced to token boundaries: no diagnostics (where it
/// errs the parser stops, so what the scan makes of the rest is moot).
class Lexer {
public:
  explicit Lexer(llvm::StringRef text) : text(text) {}

  Token next();

  /// Back to a token's start, to read it again.
  void reset(const Token &token) { pos = token.offset; }

  char peek(size_t ahead = 0) const {
    return pos + ahead < text.size() ? text[pos + ahead] : '\0';
  }

private:
  /// Blanks, NUL bytes inside the text (not the end: the lexer's EOF is the
  /// buffer's terminator) and `//` comments, which end at `\n` or `\r`.
  void skipTrivia();
  /// digit+ | `0x` hexdigit+ | digit+ `.` digit* ([eE][-+]?digit+)?
  TokenKind lexNumber(char first);
  /// After the opening quote, to just past the closing one; a newline, \v,
  /// \f or the end is the lexer's error (an embedded NUL is not).
  void lexString();
  /// digit+ | [a-zA-Z$._-][a-zA-Z0-9$._-]*
  void lexSuffixId();
  /// Parser::parseDialectSymbolBody: from `<` to its matching `>`, counting
  /// only brackets, `->` and strings (no comments, no tokens); a NUL or a
  /// mismatched closer is its error.
  void skipDialectBody();

  llvm::StringRef text;
  size_t pos = 0;
};

} // namespace autoshard::parse_guard

#endif // AUTOSHARD_LIB_DIALECT_DIST_IR_PARSEGUARDLEXER_H
