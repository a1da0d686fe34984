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
// Two parts: ParseGuardLexer cuts the text into tokens exactly as MLIR's
// lexer does; the hazard scanner below walks those tokens for the two
// forms. What is not one of these forms is left to the real parser, which
// reports it.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Dialect/Dist/IR/ParseGuard.h"

#include "ParseGuardLexer.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>

using namespace mlir;
using namespace autoshard;

namespace {

using namespace autoshard::parse_guard;

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
