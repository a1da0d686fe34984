//===- ParseGuard.cpp - Reject what crashes upstream parsers --------------===//
//
// Two bugs of LLVM 22's LinalgOps.cpp, both found by fuzz-propagate:
//  - parseDenseI64ArrayAttr (linalg.transpose `permutation`, linalg.broadcast
//    and linalg.reduce `dimensions`) stores the result of
//    DenseI64ArrayAttr::parse without checking it: on `permutation = ~[1, 0]`
//    or `[1.0, 0]` it reports the error, then sets a null attribute and
//    segfaults in NamedAttrList::set.
//  - parseCommonStructuredOpParts (every structured op: matmul, fill,
//    conv_2d_*, ...) casts the properties of `linalg.op <ATTR> ...` to a
//    DictionaryAttr unchecked: `<1>` reads an IntegerAttr as a dictionary.
// The scan below knows just enough of MLIR's lexical syntax (strings,
// comments, sigils, nesting) to find these forms and leave everything else
// to the real parser, which reports it.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Dialect/Dist/IR/ParseGuard.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/SourceMgr.h"

#include <cctype>
#include <cstdint>

using namespace mlir;
using namespace autoshard;

namespace {

bool isNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '.' || c == '-';
}

/// Walks MLIR text token by token, deep enough to tell a bare op name from
/// the same letters in a string, a comment or a `%value` / `#alias` name.
class HazardScanner {
public:
  explicit HazardScanner(StringRef text) : text(text) {}

  std::optional<ParserHazard> run() {
    while (true) {
      skipTrivia();
      char c = peek();
      if (!c)
        return std::nullopt;
      if (c == '"') {
        skipString();
      } else if (StringRef("%^@#!").contains(c)) {
        ++pos;
        if (peek() == '"')
          skipString();
        else
          skipNameChars();
      } else if (isNameStart(c)) {
        StringRef name = lexName();
        if (name.starts_with("linalg."))
          if (std::optional<ParserHazard> hazard = checkLinalgOp(name))
            return hazard;
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        skipNameChars(); // 0x1f, 2x4xf32: not names
      } else {
        ++pos;
      }
    }
  }

private:
  char peek(size_t ahead = 0) const {
    return pos + ahead < text.size() ? text[pos + ahead] : '\0';
  }

  /// Whitespace and `//` comments.
  void skipTrivia() {
    while (pos < text.size()) {
      if (std::isspace(static_cast<unsigned char>(text[pos]))) {
        ++pos;
      } else if (peek() == '/' && peek(1) == '/') {
        size_t eol = text.find('\n', pos);
        pos = eol == StringRef::npos ? text.size() : eol;
      } else {
        return;
      }
    }
  }

  void skipString() {
    for (++pos; pos < text.size(); ++pos) {
      if (text[pos] == '\\')
        ++pos;
      else if (text[pos] == '"')
        break;
    }
    ++pos;
  }

  void skipNameChars() {
    while (pos < text.size() && isNameChar(text[pos]))
      ++pos;
  }

  StringRef lexName() {
    size_t start = pos;
    while (pos < text.size() &&
           (isNameChar(text[pos]) && text[pos] != '-'))
      ++pos;
    return text.slice(start, pos);
  }

  /// From an opener ( [ { < to just past its closer; false (position
  /// unspecified) when the nesting does not close: the parser reports that.
  bool skipGroup() {
    SmallVector<char> closers;
    while (true) {
      skipTrivia();
      char c = peek();
      if (!c)
        return false;
      if (c == '"') {
        skipString();
        continue;
      }
      if (StringRef("%^@#!").contains(c)) {
        ++pos;
        peek() == '"' ? skipString() : skipNameChars();
        continue;
      }
      // `->` in function and affine map types, `>=` in integer sets.
      if ((c == '-' && peek(1) == '>') || (c == '>' && peek(1) == '=')) {
        pos += 2;
        continue;
      }
      ++pos;
      if (char closer = llvm::StringSwitch<char>(StringRef(&c, 1))
                            .Case("(", ')')
                            .Case("[", ']')
                            .Case("{", '}')
                            .Case("<", '>')
                            .Default('\0')) {
        closers.push_back(closer);
      } else if (StringRef(")]}>").contains(c)) {
        if (closers.empty() || closers.back() != c)
          return false;
        closers.pop_back();
      }
      if (closers.empty())
        return true;
    }
  }

  /// At the text following the op name `name` (linalg.*).
  std::optional<ParserHazard> checkLinalgOp(StringRef name) {
    skipTrivia();
    if (peek() == '<') {
      size_t at = pos;
      ++pos;
      skipTrivia();
      if (peek() != '{')
        return ParserHazard{at, ("custom op '" + name +
                                 "': properties must be a dictionary, "
                                 "<{name = value, ...}>")
                                    .str()};
      pos = at;
      if (!skipGroup())
        return std::nullopt;
    }
    StringRef keyword = llvm::StringSwitch<StringRef>(name)
                            .Case("linalg.transpose", "permutation")
                            .Case("linalg.broadcast", "dimensions")
                            .Case("linalg.reduce", "dimensions")
                            .Default("");
    if (keyword.empty())
      return std::nullopt;
    // [{ payload }] [attr-dict] [ins(...)] [outs(...)] KEYWORD = [...]
    while (true) {
      skipTrivia();
      char c = peek();
      if (StringRef("({[<").contains(c)) {
        if (!skipGroup())
          return std::nullopt;
        continue;
      }
      if (!isNameStart(c))
        return std::nullopt;
      StringRef word = lexName();
      if (word == "ins" || word == "outs")
        continue;
      if (word != keyword)
        return std::nullopt;
      skipTrivia();
      if (peek() != '=')
        return std::nullopt;
      ++pos;
      return checkIntegerList(name, keyword);
    }
  }

  /// `[` (integer (`,` integer)*)? `]`, each integer of magnitude at most
  /// 2^62 (so surely an int64: DenseI64ArrayAttr::parse's own rule).
  std::optional<ParserHazard> checkIntegerList(StringRef name,
                                               StringRef keyword) {
    auto bad = [&] {
      return ParserHazard{pos, ("custom op '" + name + "': '" + keyword +
                                "' must be a list of integers, e.g. [1, 0]")
                                   .str()};
    };
    skipTrivia();
    if (peek() != '[')
      return bad();
    ++pos;
    skipTrivia();
    if (peek() == ']')
      return std::nullopt;
    while (true) {
      skipTrivia();
      if (peek() == '-') {
        ++pos;
        skipTrivia();
      }
      if (!lexSmallInteger())
        return bad();
      skipTrivia();
      if (peek() == ']')
        return std::nullopt;
      if (peek() != ',')
        return bad();
      ++pos;
    }
  }

  /// A decimal or 0x integer of at most 2^62, not followed by more of a
  /// token (`1.0`, `1e3`, `2x`).
  bool lexSmallInteger() {
    const uint64_t limit = uint64_t(1) << 62;
    unsigned base = 10;
    if (peek() == '0' && peek(1) == 'x' &&
        std::isxdigit(static_cast<unsigned char>(peek(2)))) {
      base = 16;
      pos += 2;
    }
    size_t start = pos;
    uint64_t value = 0;
    for (; pos < text.size(); ++pos) {
      char c = text[pos];
      unsigned digit;
      if (std::isdigit(static_cast<unsigned char>(c)))
        digit = c - '0';
      else if (base == 16 && std::isxdigit(static_cast<unsigned char>(c)))
        digit = std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
      else
        break;
      if (value > (limit - digit) / base)
        return false;
      value = value * base + digit;
    }
    return pos > start && !isNameChar(peek());
  }

  StringRef text;
  size_t pos = 0;
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
