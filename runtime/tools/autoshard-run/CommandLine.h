//===- CommandLine.h - autoshard-run's flags without LLVM -------*- C++ -*-===//
//
// The subset of llvm::cl that autoshard-run uses (opt, list, desc, init,
// value_desc, cat, Positional, Hidden), with the same spellings on the
// command line (--name=value, --name value, -name, --flag, --flag=false), so
// the runtime links no LLVM library and its flags stay as they were.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUN_COMMANDLINE_H
#define AUTOSHARD_RUN_COMMANDLINE_H

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace autoshard::cl {

struct OptionCategory {
  explicit OptionCategory(const char *name) : name(name) {}
  const char *name;
};

// Modifiers.
struct desc {
  explicit desc(const char *text) : text(text) {}
  const char *text;
};
struct value_desc {
  explicit value_desc(const char *text) : text(text) {}
  const char *text;
};
struct cat {
  explicit cat(OptionCategory &category) : category(&category) {}
  OptionCategory *category;
};
template <typename T> struct initializer {
  T value;
};
template <typename T> initializer<T> init(T value) { return {value}; }
enum FormattingFlags { Positional };
enum OptionHidden { Hidden };

/// One flag: its name, help and how it parses a value.
class Option {
public:
  virtual ~Option();
  int getNumOccurrences() const { return occurrences; }

protected:
  explicit Option(const char *name);
  const std::string &getName() const { return name; }
  void apply(const desc &d) { help = d.text; }
  void apply(const value_desc &d) { valueName = d.text; }
  void apply(const cat &) {}
  void apply(FormattingFlags) { positional = true; }
  void apply(OptionHidden) { hidden = true; }

  /// Takes `value` (the text after '=' or the next argument); returns an
  /// error message or "".
  virtual std::string parse(const std::string &value) = 0;
  virtual bool isFlag() const { return false; }
  virtual const char *getTypeName() const = 0;

private:
  friend void ParseCommandLineOptions(int argc, char **argv,
                                      const char *overview);
  friend void printHelp(const char *argv0, const char *overview);
  std::string name;
  const char *help = "";
  const char *valueName = nullptr;
  bool positional = false, hidden = false;
  int occurrences = 0;
};

/// Parses `text` as a T; returns false when it is not one.
bool parseValue(const std::string &text, std::string &out);
bool parseValue(const std::string &text, bool &out);
bool parseValue(const std::string &text, int &out);
bool parseValue(const std::string &text, int64_t &out);
bool parseValue(const std::string &text, uint64_t &out);
bool parseValue(const std::string &text, double &out);
inline const char *typeName(std::string *) { return "string"; }
inline const char *typeName(bool *) { return "bool"; }
inline const char *typeName(int *) { return "int"; }
inline const char *typeName(int64_t *) { return "int"; }
inline const char *typeName(uint64_t *) { return "uint"; }
inline const char *typeName(double *) { return "number"; }

/// A scalar flag, usable as its value.
template <typename T> class opt : public Option {
public:
  template <typename... Mods>
  explicit opt(const char *name, const Mods &...mods) : Option(name) {
    (applyMod(mods), ...);
  }
  operator T() const { return value; }
  T getValue() const { return value; }

private:
  template <typename M> void applyMod(const M &m) { apply(m); }
  void applyMod(const initializer<T> &i) { value = i.value; }
  template <typename U> void applyMod(const initializer<U> &i) {
    value = static_cast<T>(i.value);
  }
  std::string parse(const std::string &text) override {
    return parseValue(text, value) ? ""
                                   : "invalid value '" + text + "' for --" +
                                         getName() + " (expected " +
                                         getTypeName() + ")";
  }
  bool isFlag() const override { return std::is_same_v<T, bool>; }
  const char *getTypeName() const override {
    return typeName(static_cast<T *>(nullptr));
  }
  T value{};
};

/// A string flag is a string (like llvm::cl::opt<std::string>).
template <> class opt<std::string> : public Option, public std::string {
public:
  template <typename... Mods>
  explicit opt(const char *name, const Mods &...mods) : Option(name) {
    (applyMod(mods), ...);
  }
  const std::string &getValue() const { return *this; }

private:
  template <typename M> void applyMod(const M &m) { apply(m); }
  template <typename U> void applyMod(const initializer<U> &i) {
    assign(i.value);
  }
  std::string parse(const std::string &text) override {
    assign(text);
    return "";
  }
  const char *getTypeName() const override { return "string"; }
};

/// A repeatable string flag, or the positional arguments.
template <typename T> class list;
template <>
class list<std::string> : public Option, public std::vector<std::string> {
public:
  template <typename... Mods>
  explicit list(Mods... mods) : Option(nameOf(mods...)) {
    (applyMod(mods), ...);
  }

private:
  static const char *nameOf() { return ""; }
  template <typename M, typename... Rest>
  static const char *nameOf(M first, Rest... rest) {
    if constexpr (std::is_same_v<M, const char *>)
      return first;
    else
      return nameOf(rest...);
  }
  void applyMod(const char *) {}
  template <typename M> void applyMod(const M &m) { apply(m); }
  std::string parse(const std::string &text) override {
    push_back(text);
    return "";
  }
  const char *getTypeName() const override { return "string"; }
};

/// Parses argv into the registered options; --help prints them and exits 0,
/// a bad flag prints one error line and exits 1.
void ParseCommandLineOptions(int argc, char **argv, const char *overview);
/// Kept for llvm::cl's spelling: only autoshard-run's options exist here.
inline void HideUnrelatedOptions(OptionCategory &) {}

} // namespace autoshard::cl

#endif // AUTOSHARD_RUN_COMMANDLINE_H
