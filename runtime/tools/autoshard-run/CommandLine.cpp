//===- CommandLine.cpp - autoshard-run's flags without LLVM ---------------===//

#include "CommandLine.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace autoshard;

namespace {
std::vector<cl::Option *> &registry() {
  static std::vector<cl::Option *> options;
  return options;
}

template <typename T, typename Parse>
bool parseNumber(const std::string &text, T &out, Parse parse) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  auto v = parse(text.c_str(), &end);
  if (errno == ERANGE || *end != '\0')
    return false;
  out = static_cast<T>(v);
  return static_cast<decltype(v)>(out) == v;
}
} // namespace

cl::Option::Option(const char *name) : name(name) {
  registry().push_back(this);
}
cl::Option::~Option() = default;

bool cl::parseValue(const std::string &text, std::string &out) {
  out = text;
  return true;
}
bool cl::parseValue(const std::string &text, bool &out) {
  if (text == "true" || text == "TRUE" || text == "True" || text == "1") {
    out = true;
    return true;
  }
  if (text == "false" || text == "FALSE" || text == "False" || text == "0") {
    out = false;
    return true;
  }
  return false;
}
bool cl::parseValue(const std::string &text, int &out) {
  return parseNumber(text, out, [](const char *s, char **e) {
    return std::strtoll(s, e, 0);
  });
}
bool cl::parseValue(const std::string &text, int64_t &out) {
  return parseNumber(text, out, [](const char *s, char **e) {
    return std::strtoll(s, e, 0);
  });
}
bool cl::parseValue(const std::string &text, uint64_t &out) {
  return text[0] != '-' &&
         parseNumber(text, out, [](const char *s, char **e) {
           return std::strtoull(s, e, 0);
         });
}
bool cl::parseValue(const std::string &text, double &out) {
  // strtod accepts inf, nan and overflowing values (as inf), like llvm::cl.
  if (text.empty())
    return false;
  char *end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return *end == '\0';
}

namespace autoshard::cl {
void printHelp(const char *argv0, const char *overview) {
  std::printf("OVERVIEW: %s\nUSAGE: %s [options]\n\nOPTIONS:\n\n", overview,
              argv0);
  std::printf("autoshard-run options:\n\n");
  for (Option *o : registry()) {
    if (o->hidden || o->positional)
      continue;
    std::string flag = "--" + o->name;
    if (!o->isFlag())
      flag += std::string("=<") +
              (o->valueName ? o->valueName : o->getTypeName()) + ">";
    std::printf("  %-32s - %s\n", flag.c_str(), o->help);
  }
  std::printf("\nGeneric Options:\n\n  %-32s - %s\n", "--help",
              "Display available options");
}

void ParseCommandLineOptions(int argc, char **argv, const char *overview) {
  auto fail = [&](const std::string &message) {
    std::fprintf(stderr, "%s: %s\n", argv[0], message.c_str());
    std::exit(1);
  };
  Option *positional = nullptr;
  for (Option *o : registry())
    if (o->positional)
      positional = o;
  bool onlyPositional = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (onlyPositional || arg.size() < 2 || arg[0] != '-') {
      if (!positional)
        fail("too many positional arguments: '" + arg + "'");
      (void)positional->parse(arg);
      ++positional->occurrences;
      continue;
    }
    if (arg == "--") {
      onlyPositional = true;
      continue;
    }
    std::string name = arg.substr(arg[1] == '-' ? 2 : 1), value;
    size_t eq = name.find('=');
    bool hasValue = eq != std::string::npos;
    if (hasValue) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (name == "help" || name == "help-hidden") {
      printHelp(argv[0], overview);
      std::exit(0);
    }
    Option *option = nullptr;
    for (Option *o : registry())
      if (!o->positional && o->name == name)
        option = o;
    if (!option)
      fail("Unknown command line argument '" + arg + "'.  Try: '" +
           std::string(argv[0]) + " --help'");
    if (!hasValue && option->isFlag())
      value = "true";
    else if (!hasValue && i + 1 < argc)
      value = argv[++i];
    else if (!hasValue)
      fail("option '" + name + "' requires a value");
    if (std::string error = option->parse(value); !error.empty())
      fail(error);
    ++option->occurrences;
  }
}
} // namespace autoshard::cl
