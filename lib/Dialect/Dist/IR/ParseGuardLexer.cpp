//===- ParseGuardLexer.cpp - MLIR token boundaries for ParseGuard ---------===//
//
// Follows mlir/lib/AsmParser/Lexer.cpp (LLVM 22) rule for rule where a token
// ends; see ParseGuardLexer.h.
//
//===----------------------------------------------------------------------===//

#include "ParseGuardLexer.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace autoshard::parse_guard;
using llvm::SmallVector;
using llvm::StringRef;

namespace {

bool isAlpha(char c) { return llvm::isAlpha(c); }
bool isDigit(char c) { return llvm::isDigit(c); }

/// [a-zA-Z0-9_$.]: the rest of a bare identifier or `@` name.
bool isBareIdChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
}

/// [$._-]: the punctuation of a suffix-id (`%`, `#`, `^`, `!` names).
bool isIdPunct(char c) { return c == '$' || c == '.' || c == '_' || c == '-'; }

} // namespace

Token Lexer::next() {
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

void Lexer::skipTrivia() {
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

TokenKind Lexer::lexNumber(char first) {
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

void Lexer::lexString() {
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

void Lexer::lexSuffixId() {
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

void Lexer::skipDialectBody() {
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
