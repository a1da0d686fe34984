//===- ParseGuard.cpp - Reject what crashes upstream parsers --------------===//
//
// Two bugs of LLVM 22's LinalgOps.cpp, both found by fuzz-propagate:
//  - parseDenseI64ArrayAttr (linalg.transpose `permutation`, linalg.broadcast
//    and linalg.reduce `dimensions`) stores the result of
//    DenseI64ArrayAttr::parse without checking it: on `permutation = ~[1, 0]`,
//    `[1.0, 0]` or `[[1], [0]]` it reports the error, then sets a null
//    attribute and segfaults in NamedAttrList::set.
//  - parseCommonStructuredOpParts (every structured op: matmul, fill,
//    conv_2d_*, ...) casts the properties of `linalg.op <ATTR> ...` to a
//    DictionaryAttr unchecked: `<1>` reads an IntegerAttr as a dictionary.
// The scan below cuts the text into tokens exactly as MLIR's lexer
// (mlir/lib/AsmParser/Lexer.cpp) does, so that it meets each op name where
// the parser does: a scan that merely skims can be led past one, e.g. by a
// NUL byte (the lexer skips it), a `\r` ending a comment, `1linalg.x`
// (a number, then a name) or a dialect attribute body `#d.a<... // >` (read
// raw, no comments). What is not one of these forms is left to the real
// parser, which reports it.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Dialect/Dist/IR/ParseGuard.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>

using namespace mlir;
using namespace autoshard;

namespace {

bool isAlpha(char c) { return llvm::isAlpha(c); }
bool isDigit(char c) { return llvm::isDigit(c); }

/// [a-zA-Z0-9_$.]: the rest of a bare identifier or `@` name.
bool isBareIdChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
}

/// [$._-]: the punctuation of a suffix-id (`%`, `#`, `^`, `!` names).
bool isIdPunct(char c) { return c == '$' || c == '.' || c == '_' || c == '-'; }

/// What the checks below need to tell apart; everything else is `Other`.
enum class TokenKind { Eof, BareId, Integer, Punct, Other };

struct Token {
  TokenKind kind;
  StringRef spelling;
  size_t offset;
  bool is(char c) const {
    return kind == TokenKind::Punct && spelling.size() == 1 &&
           spelling[0] == c;
  }
};

/// MLIR's lexer, reduced to token boundaries: no diagnostics (where it
/// errs the parser stops, so what the scan makes of the rest is moot).
class Lexer {
public:
  explicit Lexer(StringRef text) : text(text) {}

  Token next() {
    skipTrivia();
    size_t start = pos;
    if (pos >= text.size())
      return {TokenKind::Eof, StringRef(), pos};
    char c = text[pos++];
    TokenKind kind = TokenKind::Other;
    if (isAlpha(c) || c == '_') {
      while (isBareIdChar(peek()))
        ++pos;
      kind = TokenKind::BareId;
    } else if (isDigit(c)) {
      kind = lexNumber(c);
    } else if (c == '"') {
      lexString();
    } else if (c == '@') {
      if (peek() == '"') {
        ++pos;
        lexString();
      } else {
        while (isBareIdChar(peek()))
          ++pos;
      }
    } else if (c == '#' || c == '!' || c == '^' || c == '%') {
      lexSuffixId();
      // `#dialect.attr<...>`, `!dialect<...>`: the body, read raw.
      if ((c == '#' || c == '!') && pos > start + 1 && peek() == '<')
        skipDialectBody();
    } else if (c == '-' && peek() == '>') {
      ++pos; // `->`
    } else {
      kind = TokenKind::Punct;
    }
    return {kind, text.slice(start, pos), start};
  }

  /// Back to a token's start, to read it again.
  void reset(const Token &token) { pos = token.offset; }

  char peek(size_t ahead = 0) const {
    return pos + ahead < text.size() ? text[pos + ahead] : '\0';
  }

private:
  /// Blanks, NUL bytes inside the text (not the end: the lexer's EOF is the
  /// buffer's terminator) and `//` comments, which end at `\n` or `\r`.
  void skipTrivia() {
    while (pos < text.size()) {
      char c = text[pos];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0') {
        ++pos;
      } else if (c == '/' && peek(1) == '/') {
        while (pos < text.size() && text[pos] != '\n' && text[pos] != '\r')
          ++pos;
      } else {
        return;
      }
    }
  }

  /// digit+ | `0x` hexdigit+ | digit+ `.` digit* ([eE][-+]?digit+)?
  TokenKind lexNumber(char first) {
    if (first == '0' && peek() == 'x') {
      if (!llvm::isHexDigit(peek(1)))
        return TokenKind::Integer; // `0xi32`: 0, then `xi32`
      pos += 2;
      while (llvm::isHexDigit(peek()))
        ++pos;
      return TokenKind::Integer;
    }
    while (isDigit(peek()))
      ++pos;
    if (peek() != '.')
      return TokenKind::Integer;
    ++pos;
    while (isDigit(peek()))
      ++pos;
    if ((peek() == 'e' || peek() == 'E') &&
        (isDigit(peek(1)) ||
         ((peek(1) == '-' || peek(1) == '+') && isDigit(peek(2))))) {
      pos += 2;
      while (isDigit(peek()))
        ++pos;
    }
    return TokenKind::Other;
  }

  /// After the opening quote, to just past the closing one; a newline, \v,
  /// \f or the end is the lexer's error (an embedded NUL is not).
  void lexString() {
    while (pos < text.size()) {
      char c = text[pos++];
      if (c == '"')
        return;
      if (c == '\n' || c == '\v' || c == '\f')
        return;
      if (c == '\\' && pos < text.size())
        ++pos;
    }
  }

  /// digit+ | [a-zA-Z$._-][a-zA-Z0-9$._-]*
  void lexSuffixId() {
    if (isDigit(peek())) {
      while (isDigit(peek()))
        ++pos;
      return;
    }
    if (!isAlpha(peek()) && !isIdPunct(peek()))
      return;
    while (llvm::isAlnum(peek()) || isIdPunct(peek()))
      ++pos;
  }

  /// Parser::parseDialectSymbolBody: from `<` to its matching `>`, counting
  /// only brackets, `->` and strings (no comments, no tokens); a NUL or a
  /// mismatched closer is its error.
  void skipDialectBody() {
    SmallVector<char> open;
    do {
      if (pos >= text.size())
        return;
      char c = text[pos++];
      switch (c) {
      case '\0':
        return;
      case '<':
      case '[':
      case '(':
      case '{':
        open.push_back(c);
        break;
      case '-':
        if (peek() == '>')
          ++pos;
        break;
      case '>':
      case ']':
      case ')':
      case '}': {
        char opener = c == '>' ? '<' : c == ']' ? '[' : c == ')' ? '(' : '{';
        if (open.back() != opener)
          return;
        open.pop_back();
        break;
      }
      case '"':
        lexString();
        break;
      default:
        break;
      }
    } while (!open.empty());
  }

  StringRef text;
  size_t pos = 0;
};

/// Walks the tokens for the linalg forms the upstream parsers crash on.
class HazardScanner {
public:
  explicit HazardScanner(StringRef text) : lexer(text) {}

  std::optional<ParserHazard> run() {
    while (true) {
      Token token = lexer.next();
      if (token.kind == TokenKind::Eof)
        return std::nullopt;
      if (token.kind == TokenKind::BareId &&
          token.spelling.starts_with("linalg."))
        if (std::optional<ParserHazard> hazard = checkLinalgOp(token.spelling))
          return hazard;
    }
  }

private:
  /// From just past the opener `open` to just past its closer; false (at
  /// the offending token) when the nesting does not close: the parser
  /// reports that.
  bool skipGroup(const Token &open) {
    SmallVector<char> closers{closerOf(open)};
    while (!closers.empty()) {
      Token token = lexer.next();
      if (token.kind == TokenKind::Eof)
        return false;
      if (token.kind != TokenKind::Punct)
        continue;
      if (char closer = closerOf(token)) {
        closers.push_back(closer);
        continue;
      }
      char c = token.spelling[0];
      // `>=` in integer sets is not a closer.
      if (!StringRef(")]}>").contains(c) || (c == '>' && lexer.peek() == '='))
        continue;
      if (closers.back() != c) {
        lexer.reset(token);
        return false;
      }
      closers.pop_back();
    }
    return true;
  }

  static char closerOf(const Token &token) {
    if (token.kind != TokenKind::Punct)
      return '\0';
    return llvm::StringSwitch<char>(token.spelling)
        .Case("(", ')')
        .Case("[", ']')
        .Case("{", '}')
        .Case("<", '>')
        .Default('\0');
  }

  /// At the tokens following the op name `name` (linalg.*). Whatever ends
  /// the check is left for run() to read again (it may be the next op).
  std::optional<ParserHazard> checkLinalgOp(StringRef name) {
    Token token = lexer.next();
    if (token.is('<')) {
      Token inner = lexer.next();
      if (!inner.is('{'))
        return ParserHazard{token.offset,
                            ("custom op '" + name +
                             "': properties must be a dictionary, "
                             "<{name = value, ...}>")
                                .str()};
      lexer.reset(inner);
      if (!skipGroup(token))
        return std::nullopt;
      token = lexer.next();
    }
    StringRef keyword = llvm::StringSwitch<StringRef>(name)
                            .Case("linalg.transpose", "permutation")
                            .Case("linalg.broadcast", "dimensions")
                            .Case("linalg.reduce", "dimensions")
                            .Default("");
    // [{ payload }] [attr-dict] [ins(...)] [outs(...)] KEYWORD = [...]
    while (!keyword.empty()) {
      if (closerOf(token)) {
        if (!skipGroup(token))
          return std::nullopt;
      } else if (token.kind == TokenKind::BareId &&
                 token.spelling == keyword) {
        if (!lexer.next().is('='))
          break;
        return checkIntegerList(name, keyword);
      } else if (token.kind != TokenKind::BareId ||
                 (token.spelling != "ins" && token.spelling != "outs")) {
        break;
      }
      token = lexer.next();
    }
    lexer.reset(token);
    return std::nullopt;
  }

  /// DenseI64ArrayAttr::parse's form: `[` (element (`,` element)*)? `]`, an
  /// element `true`, `false` or `-`? integer; each integer of magnitude at
  /// most 2^62 (so surely an int64).
  std::optional<ParserHazard> checkIntegerList(StringRef name,
                                               StringRef keyword) {
    auto bad = [&](const Token &at) {
      return ParserHazard{at.offset,
                          ("custom op '" + name + "': '" + keyword +
                           "' must be a list of integers, e.g. [1, 0]")
                              .str()};
    };
    Token token = lexer.next();
    if (!token.is('['))
      return bad(token);
    token = lexer.next();
    if (token.is(']'))
      return std::nullopt;
    while (true) {
      bool isBool = token.kind == TokenKind::BareId &&
                    (token.spelling == "true" || token.spelling == "false");
      if (!isBool) {
        if (token.is('-'))
          token = lexer.next();
        if (token.kind != TokenKind::Integer || !isSmallInteger(token))
          return bad(token);
      }
      token = lexer.next();
      if (token.is(']'))
        return std::nullopt;
      if (!token.is(','))
        return bad(token);
      token = lexer.next();
    }
  }

  static bool isSmallInteger(const Token &token) {
    StringRef digits = token.spelling;
    unsigned radix = digits.consume_front("0x") ? 16 : 10; // `010` is ten
    uint64_t value;
    return !digits.getAsInteger(radix, value) && value <= (uint64_t(1) << 62);
  }

  Lexer lexer;
};

} // namespace

std::optional<ParserHazard> autoshard::findParserHazard(StringRef text) {
  return HazardScanner(text).run();
}

LogicalResult autoshard::checkParserHazards(const llvm::SourceMgr &sourceMgr,
                                            MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  std::optional<ParserHazard> hazard = findParserHazard(buffer->getBuffer());
  if (!hazard)
    return success();
  auto [line, column] = sourceMgr.getLineAndColumn(
      llvm::SMLoc::getFromPointer(buffer->getBufferStart() + hazard->offset));
  emitError(FileLineColLoc::get(context, buffer->getBufferIdentifier(), line,
                                column))
      << hazard->message;
  return failure();
}
