//===- NpyHeader.cpp - Parse the header dict of a .npy file ---------------===//

#include "autoshard/Support/NpyHeader.h"

#include <cctype>
#include <limits>
#include <optional>

using namespace autoshard;

namespace {
/// A recursive-descent reader of the Python literal subset .npy uses.
class DictReader {
public:
  explicit DictReader(std::string_view text) : text(text) {}

  std::string parse(NpyHeaderDict &out) {
    skipSpace();
    if (!eat('{'))
      return "header is not a dict";
    bool haveDescr = false, haveFortran = false, haveShape = false;
    while (true) {
      skipSpace();
      if (eat('}'))
        break;
      std::optional<std::string> key = readString();
      if (!key)
        return "expected a string key in the header dict";
      skipSpace();
      if (!eat(':'))
        return "expected ':' after '" + *key + "'";
      skipSpace();
      if (*key == "descr") {
        if (haveDescr)
          return "'descr' is given twice";
        std::optional<std::string> v = readString();
        if (!v)
          return "'descr' is not a string";
        out.descr = *v;
        haveDescr = true;
      } else if (*key == "fortran_order") {
        if (haveFortran)
          return "'fortran_order' is given twice";
        if (eatWord("True"))
          out.fortranOrder = true;
        else if (eatWord("False"))
          out.fortranOrder = false;
        else
          return "'fortran_order' is not True or False";
        haveFortran = true;
      } else if (*key == "shape") {
        if (haveShape)
          return "'shape' is given twice";
        std::string err = readShape(out);
        if (!err.empty())
          return err;
        haveShape = true;
      } else {
        return "unexpected key '" + *key +
               "' (a .npy header has exactly 'descr', 'fortran_order' and "
               "'shape')";
      }
      skipSpace();
      if (eat(','))
        continue;
      skipSpace();
      if (eat('}'))
        break;
      return "expected ',' or '}' in the header dict";
    }
    skipSpace();
    if (pos != text.size())
      return "text after the header dict";
    if (!haveDescr || !haveFortran || !haveShape)
      return std::string("the header lacks '") +
             (!haveDescr     ? "descr"
              : !haveFortran ? "fortran_order"
                             : "shape") +
             "'";
    return "";
  }

private:
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool eat(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool eatWord(std::string_view w) {
    if (text.substr(pos, w.size()) != w)
      return false;
    size_t end = pos + w.size();
    if (end < text.size() &&
        (isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
      return false;
    pos = end;
    return true;
  }
  /// A '...' or "..." literal; a backslash escapes the next character.
  std::optional<std::string> readString() {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return std::nullopt;
    char quote = text[pos++];
    std::string s;
    while (pos < text.size() && text[pos] != quote) {
      if (text[pos] == '\n')
        return std::nullopt;
      if (text[pos] == '\\' && pos + 1 < text.size())
        ++pos;
      s += text[pos++];
    }
    if (!eat(quote))
      return std::nullopt;
    return s;
  }
  /// A tuple of non-negative integers: (), (5,), (2, 3) or (2, 3,).
  std::string readShape(NpyHeaderDict &out) {
    if (!eat('('))
      return "'shape' is not a tuple";
    out.shape.clear();
    out.numElements = 1;
    bool sawComma = false;
    while (true) {
      skipSpace();
      if (eat(')'))
        break;
      size_t start = pos;
      int64_t v = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        int digit = text[pos++] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return "a 'shape' entry is too large";
        v = v * 10 + digit;
      }
      if (pos == start)
        return "'shape' holds something other than non-negative integers";
      if (v != 0 &&
          out.numElements > std::numeric_limits<int64_t>::max() / 8 / v)
        return "the element count of 'shape' is too large";
      out.numElements *= v;
      out.shape.push_back(v);
      skipSpace();
      if (eat(',')) {
        sawComma = true;
        continue;
      }
      skipSpace();
      if (eat(')'))
        break;
      return "expected ',' or ')' in 'shape'";
    }
    // "(5)" is the integer 5 in Python, not a tuple.
    if (out.shape.size() == 1 && !sawComma)
      return "'shape' is not a tuple";
    return "";
  }

  std::string_view text;
  size_t pos = 0;
};
} // namespace

std::string autoshard::parseNpyHeaderDict(std::string_view text,
                                          NpyHeaderDict &out) {
  return DictReader(text).parse(out);
}
