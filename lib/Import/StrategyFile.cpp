//===- StrategyFile.cpp - User sharding strategies for imported models ----===//
//
// Parsed with LLVM's YAMLParser rather than yaml::IO so that every node keeps
// its source range: each error names file:line:col of the offending entry.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Import/StrategyFile.h"
#include "autoshard/Support/SplitTuples.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"

using namespace mlir;
using namespace autoshard;
namespace yaml = llvm::yaml;

TensorLayout LayoutSpec::resolve(const DeviceMesh &mesh,
                                 ArrayRef<int64_t> shape,
                                 std::string &error) const {
  error.clear();
  if (getRank() != static_cast<int64_t>(shape.size())) {
    error = "has rank " + std::to_string(getRank()) + " but the tensor has rank " +
            std::to_string(shape.size());
    return {};
  }
  TensorLayout layout;
  if (isSplits) {
    layout = layoutFromSplitCounts(mesh, splits, error);
    if (!error.empty())
      return {};
  } else {
    layout = TensorLayout::replicated(getRank());
    for (auto [dim, names] : llvm::enumerate(axes)) {
      for (const std::string &name : names) {
        std::optional<int64_t> axis = mesh.getAxisIndex(name);
        if (!axis) {
          error = "names unknown mesh axis '" + name + "'";
          return {};
        }
        layout.dimAxes[dim].push_back(*axis);
      }
    }
  }
  std::vector<int64_t> global(shape.begin(), shape.end());
  error = layout.validate(mesh, &global);
  return layout;
}

std::string LayoutSpec::str() const {
  std::string s;
  if (isSplits) {
    s = "(";
    for (auto [i, c] : llvm::enumerate(splits))
      s += (i ? ", " : "") + std::to_string(c);
    return s + ")";
  }
  s = "[";
  for (auto [i, names] : llvm::enumerate(axes)) {
    s += i ? ", [" : "[";
    for (auto [j, n] : llvm::enumerate(names))
      s += (j ? ", " : "") + n;
    s += "]";
  }
  return s + "]";
}

namespace {
class StrategyParser {
public:
  StrategyParser(StringRef name, MLIRContext *ctx) : name(name), ctx(ctx) {}

  FailureOr<StrategySpec> parse(StringRef text);

private:
  Location locOf(yaml::Node *node) {
    auto [line, col] = sm.getLineAndColumn(node->getSourceRange().Start);
    return FileLineColLoc::get(ctx, name, line, col);
  }
  InFlightDiagnostic error(yaml::Node *node) {
    failed = true;
    return emitError(locOf(node));
  }
  std::optional<std::string> scalar(yaml::Node *node, StringRef what);
  std::optional<int64_t> integer(yaml::Node *node, StringRef what);
  static bool isNull(yaml::Node *node);
  std::optional<LayoutSpec> layout(yaml::Node *node);
  void parseMesh(yaml::Node *node, StrategySpec &spec);
  void parseStrategies(yaml::Node *node, StrategySpec &spec);
  void parseStages(yaml::Node *node, StrategySpec &spec);

  std::string name;
  MLIRContext *ctx;
  llvm::SourceMgr sm;
  bool failed = false;
};
} // namespace

bool StrategyParser::isNull(yaml::Node *node) {
  if (isa<yaml::NullNode>(node))
    return true;
  if (auto *s = dyn_cast<yaml::ScalarNode>(node)) {
    SmallString<16> storage;
    StringRef v = s->getValue(storage);
    return v.empty() || v == "~" || v == "null";
  }
  return false;
}

std::optional<std::string> StrategyParser::scalar(yaml::Node *node,
                                                  StringRef what) {
  auto *s = dyn_cast_or_null<yaml::ScalarNode>(node);
  if (!s) {
    error(node) << "expected " << what << " (a scalar)";
    return std::nullopt;
  }
  SmallString<32> storage;
  return s->getValue(storage).str();
}

std::optional<int64_t> StrategyParser::integer(yaml::Node *node,
                                               StringRef what) {
  std::optional<std::string> s = scalar(node, what);
  if (!s)
    return std::nullopt;
  int64_t v;
  if (StringRef(*s).getAsInteger(10, v)) {
    error(node) << "expected " << what << " (an integer), got '" << *s << "'";
    return std::nullopt;
  }
  return v;
}

/// A layout is a sequence: all integers (split counts per dim) or one entry
/// per dim naming the mesh axes it is split over (a list, one name, or
/// nothing for an unsplit dim).
std::optional<LayoutSpec> StrategyParser::layout(yaml::Node *node) {
  auto *seq = dyn_cast<yaml::SequenceNode>(node);
  if (!seq) {
    error(node) << "expected a layout: split counts like [2, 1] or mesh axes "
                   "per dim like [[dp], []]";
    return std::nullopt;
  }
  LayoutSpec spec{true, {}, {}, locOf(node)};
  bool sawInt = false, sawAxes = false;
  for (yaml::Node &elem : *seq) {
    if (auto *s = dyn_cast<yaml::ScalarNode>(&elem); s && !isNull(s)) {
      SmallString<16> storage;
      StringRef v = s->getValue(storage);
      int64_t count;
      if (!v.getAsInteger(10, count)) {
        sawInt = true;
        spec.splits.push_back(count);
        continue;
      }
      sawAxes = true;
      spec.axes.push_back({v.str()});
      continue;
    }
    sawAxes = true;
    std::vector<std::string> names;
    if (auto *inner = dyn_cast<yaml::SequenceNode>(&elem)) {
      for (yaml::Node &n : *inner) {
        std::optional<std::string> axis = scalar(&n, "a mesh axis name");
        if (!axis)
          return std::nullopt;
        names.push_back(*axis);
      }
    } else if (!isNull(&elem)) {
      error(&elem) << "expected the mesh axes of one dim, e.g. [dp] or []";
      return std::nullopt;
    }
    spec.axes.push_back(std::move(names));
  }
  if (failed)
    return std::nullopt;
  if (sawInt && sawAxes) {
    error(node) << "layout mixes split counts and mesh axis names";
    return std::nullopt;
  }
  spec.isSplits = !sawAxes;
  return spec;
}

void StrategyParser::parseMesh(yaml::Node *node, StrategySpec &spec) {
  auto *map = dyn_cast<yaml::MappingNode>(node);
  if (!map) {
    error(node) << "'mesh' must map axis names to sizes, e.g. {dp: 2, mp: 4}";
    return;
  }
  std::vector<MeshAxis> axes;
  for (yaml::KeyValueNode &kv : *map) {
    std::optional<std::string> axisName = scalar(kv.getKey(), "a mesh axis name");
    std::optional<int64_t> size =
        axisName ? integer(kv.getValue(), "a mesh axis size") : std::nullopt;
    if (!axisName || !size)
      return;
    MeshAxis axis;
    axis.name = *axisName;
    axis.size = *size;
    axes.push_back(axis);
  }
  spec.mesh = DeviceMesh(std::move(axes));
  std::string err = spec.mesh.validate();
  if (!err.empty())
    error(node) << "invalid mesh: " << err;
}

void StrategyParser::parseStrategies(yaml::Node *node, StrategySpec &spec) {
  auto *seq = dyn_cast<yaml::SequenceNode>(node);
  if (!seq) {
    error(node) << "'strategies' must be a list of {match: ..., ...} entries";
    return;
  }
  for (yaml::Node &item : *seq) {
    auto *map = dyn_cast<yaml::MappingNode>(&item);
    if (!map) {
      error(&item) << "a strategy entry must be a mapping with 'match'";
      return;
    }
    StrategyEntry entry{"", locOf(&item), {}, {}, std::nullopt, std::nullopt};
    bool haveMatch = false, haveInputs = false;
    for (yaml::KeyValueNode &kv : *map) {
      std::optional<std::string> key = scalar(kv.getKey(), "a key");
      if (!key)
        return;
      yaml::Node *value = kv.getValue();
      if (*key == "match") {
        std::optional<std::string> m = scalar(value, "a name or glob");
        if (!m)
          return;
        entry.match = *m;
        haveMatch = true;
      } else if (*key == "splits" || *key == "in") {
        if (haveInputs) {
          error(kv.getKey()) << "give either 'splits' or 'in', not both";
          return;
        }
        haveInputs = true;
        auto *list = dyn_cast<yaml::SequenceNode>(value);
        if (!list) {
          error(value) << "'" << *key << "' must be a list of layouts";
          return;
        }
        // A flat list of integers is one tensor's split tuple.
        bool flat = true, empty = true;
        for (yaml::Node &n : *list) {
          empty = false;
          flat &= isa<yaml::ScalarNode>(&n) && !isNull(&n);
        }
        if (flat && !empty) {
          std::optional<LayoutSpec> l = layout(value);
          if (!l)
            return;
          entry.tensor = *l;
          continue;
        }
        for (yaml::Node &n : *list) {
          std::optional<LayoutSpec> l = layout(&n);
          if (!l)
            return;
          entry.inputs.push_back(*l);
        }
      } else if (*key == "out") {
        auto *list = dyn_cast<yaml::SequenceNode>(value);
        if (!list) {
          error(value) << "'out' must be a list of layouts, one per output";
          return;
        }
        for (yaml::Node &n : *list) {
          std::optional<LayoutSpec> l = layout(&n);
          if (!l)
            return;
          entry.outputs.push_back(*l);
        }
      } else if (*key == "layout") {
        std::optional<LayoutSpec> l = layout(value);
        if (!l)
          return;
        entry.tensor = *l;
      } else if (*key == "priority") {
        entry.priority = integer(value, "a priority");
        if (!entry.priority)
          return;
      } else {
        error(kv.getKey()) << "unknown key '" << *key
                           << "' in a strategy entry (expected match, "
                              "splits, in, out, layout or priority)";
        return;
      }
    }
    if (!haveMatch) {
      error(&item) << "strategy entry has no 'match'";
      return;
    }
    if (entry.tensor && (!entry.inputs.empty() || !entry.outputs.empty())) {
      error(&item) << "strategy entry mixes a tensor 'layout' with per-input "
                      "or per-output layouts";
      return;
    }
    if (!entry.tensor && entry.inputs.empty() && entry.outputs.empty()) {
      error(&item) << "strategy entry for '" << entry.match
                   << "' gives no layout (splits, in, out or layout)";
      return;
    }
    spec.strategies.push_back(std::move(entry));
  }
}

void StrategyParser::parseStages(yaml::Node *node, StrategySpec &spec) {
  auto *seq = dyn_cast<yaml::SequenceNode>(node);
  if (!seq) {
    error(node) << "'stages' must be a list of {match: ..., stage: N} entries";
    return;
  }
  for (yaml::Node &item : *seq) {
    auto *map = dyn_cast<yaml::MappingNode>(&item);
    if (!map) {
      error(&item) << "a stage entry must be a mapping {match: ..., stage: N}";
      return;
    }
    StageEntry entry{"", -1, locOf(&item)};
    for (yaml::KeyValueNode &kv : *map) {
      std::optional<std::string> key = scalar(kv.getKey(), "a key");
      if (!key)
        return;
      if (*key == "match") {
        std::optional<std::string> m = scalar(kv.getValue(), "a name or glob");
        if (!m)
          return;
        entry.match = *m;
      } else if (*key == "stage") {
        std::optional<int64_t> s = integer(kv.getValue(), "a stage number");
        if (!s)
          return;
        if (*s < 0) {
          error(kv.getValue()) << "stage must be non-negative";
          return;
        }
        entry.stage = *s;
      } else {
        error(kv.getKey()) << "unknown key '" << *key
                           << "' in a stage entry (expected match or stage)";
        return;
      }
    }
    if (entry.match.empty() || entry.stage < 0) {
      error(&item) << "a stage entry needs both 'match' and 'stage'";
      return;
    }
    spec.stages.push_back(std::move(entry));
  }
}

FailureOr<StrategySpec> StrategyParser::parse(StringRef text) {
  // Syntax errors from the YAML scanner become located MLIR errors.
  sm.setDiagHandler(
      [](const llvm::SMDiagnostic &d, void *self) {
        auto *p = static_cast<StrategyParser *>(self);
        p->failed = true;
        emitError(FileLineColLoc::get(p->ctx, p->name, d.getLineNo(),
                                      d.getColumnNo() + 1))
            << d.getMessage();
      },
      this);
  StrategySpec spec;
  yaml::Stream stream(text, sm);
  bool haveMesh = false, sawDocument = false;
  for (yaml::Document &doc : stream) {
    if (sawDocument) {
      error(doc.getRoot()) << "a strategy file holds one document";
      break;
    }
    sawDocument = true;
    yaml::Node *root = doc.getRoot();
    if (failed)
      break;
    auto *map = dyn_cast_or_null<yaml::MappingNode>(root);
    if (!map) {
      if (root)
        error(root) << "a strategy file is a mapping with 'mesh', "
                       "'strategies' and 'stages'";
      break;
    }
    for (yaml::KeyValueNode &kv : *map) {
      std::optional<std::string> key = scalar(kv.getKey(), "a key");
      if (!key || failed)
        break;
      if (*key == "mesh") {
        parseMesh(kv.getValue(), spec);
        haveMesh = true;
      } else if (*key == "strategies") {
        parseStrategies(kv.getValue(), spec);
      } else if (*key == "stages") {
        parseStages(kv.getValue(), spec);
      } else {
        error(kv.getKey()) << "unknown key '" << *key
                           << "' (expected mesh, strategies or stages)";
      }
      if (failed)
        break;
    }
    if (failed)
      break;
  }
  if (failed)
    return failure();
  if (!haveMesh) {
    emitError(FileLineColLoc::get(ctx, name, 1, 1))
        << "strategy file has no 'mesh' (e.g. mesh: {dp: 2, mp: 4})";
    return failure();
  }
  return spec;
}

FailureOr<StrategySpec> autoshard::parseStrategy(StringRef text, StringRef name,
                                                 MLIRContext *ctx) {
  return StrategyParser(name, ctx).parse(text);
}

FailureOr<StrategySpec> autoshard::parseStrategyFile(StringRef path,
                                                     MLIRContext *ctx) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf) {
    emitError(FileLineColLoc::get(ctx, path, 0, 0))
        << "cannot read strategy file '" << path
        << "': " << buf.getError().message();
    return failure();
  }
  return parseStrategy((*buf)->getBuffer(), path, ctx);
}
