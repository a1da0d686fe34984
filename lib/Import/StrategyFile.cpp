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
    error = "has rank " + std::to_string(getRank()) +
            " but the tensor has rank " + std::to_string(shape.size());
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
/// An owned copy of a YAML node. LLVM's YAMLParser streams: a sequence can be
/// walked once and walking it skips its children, so the document is copied
/// into this small tree (with locations) before it is interpreted.
struct YNode {
  enum Kind { Null, Scalar, Seq, Map } kind = Null;
  std::string value;
  std::vector<YNode> items;
  std::vector<std::pair<YNode, YNode>> entries;
  Location loc;
  explicit YNode(Location loc) : loc(loc) {}
  bool isNull() const {
    return kind == Null || (kind == Scalar &&
                            (value.empty() || value == "~" || value == "null"));
  }
  std::optional<int64_t> asInt() const {
    int64_t v;
    if (kind != Scalar || StringRef(value).getAsInteger(10, v))
      return std::nullopt;
    return v;
  }
};

class StrategyParser {
public:
  StrategyParser(StringRef name, MLIRContext *ctx) : name(name), ctx(ctx) {}

  FailureOr<StrategySpec> parse(StringRef text);

private:
  Location locOf(yaml::Node *node) {
    // The YAML parser gives some nodes of a malformed file (a NUL byte
    // inside a JSON flow mapping: found by fuzzing) a range outside the
    // text: locate those at the file.
    SMLoc start = node->getSourceRange().Start;
    if (!start.isValid() || !sm.FindBufferContainingLoc(start))
      return FileLineColLoc::get(ctx, name, 0, 0);
    auto [line, col] = sm.getLineAndColumn(start);
    return FileLineColLoc::get(ctx, name, line, col);
  }
  InFlightDiagnostic error(const YNode &node) {
    failed = true;
    return emitError(node.loc);
  }
  std::optional<YNode> copy(yaml::Node *node, int depth = 0);
  std::optional<std::string> scalar(const YNode &node, StringRef what);
  std::optional<int64_t> integer(const YNode &node, StringRef what);
  std::optional<LayoutSpec> layout(const YNode &node);
  void parseMesh(const YNode &node, StrategySpec &spec);
  void parseStrategies(const YNode &node, StrategySpec &spec);
  void parseStages(const YNode &node, StrategySpec &spec);
  void parseOptimizerShard(const YNode &node, StrategySpec &spec);
  std::optional<bool> boolean(const YNode &node, StringRef what);

  std::string name;
  MLIRContext *ctx;
  llvm::SourceMgr sm;
  bool failed = false;
};
} // namespace

/// Strategy files nest a few levels (strategies > entry > splits > tuple);
/// the bound keeps a hostile file from overflowing the stack.
static constexpr int kMaxNesting = 64;

std::optional<YNode> StrategyParser::copy(yaml::Node *node, int depth) {
  if (!node)
    return std::nullopt;
  YNode out(locOf(node));
  if (depth > kMaxNesting) {
    error(out) << "the strategy file nests deeper than " << kMaxNesting
               << " levels";
    return std::nullopt;
  }
  if (auto *s = dyn_cast<yaml::ScalarNode>(node)) {
    SmallString<32> storage;
    out.kind = YNode::Scalar;
    out.value = s->getValue(storage).str();
  } else if (auto *bs = dyn_cast<yaml::BlockScalarNode>(node)) {
    out.kind = YNode::Scalar;
    out.value = bs->getValue().str();
  } else if (auto *seq = dyn_cast<yaml::SequenceNode>(node)) {
    out.kind = YNode::Seq;
    for (yaml::Node &n : *seq) {
      std::optional<YNode> c = copy(&n, depth + 1);
      if (!c)
        return std::nullopt;
      out.items.push_back(std::move(*c));
    }
  } else if (auto *map = dyn_cast<yaml::MappingNode>(node)) {
    out.kind = YNode::Map;
    for (yaml::KeyValueNode &kv : *map) {
      std::optional<YNode> k = copy(kv.getKey(), depth + 1);
      if (!k)
        return std::nullopt;
      std::optional<YNode> v = copy(kv.getValue(), depth + 1);
      if (!v)
        return std::nullopt;
      out.entries.emplace_back(std::move(*k), std::move(*v));
    }
  } else if (!isa<yaml::NullNode>(node)) {
    error(out) << "unsupported YAML construct (aliases and tags are not "
                  "accepted in strategy files)";
    return std::nullopt;
  }
  if (failed)
    return std::nullopt;
  return out;
}

std::optional<std::string> StrategyParser::scalar(const YNode &node,
                                                  StringRef what) {
  if (node.kind != YNode::Scalar) {
    error(node) << "expected " << what << " (a scalar)";
    return std::nullopt;
  }
  return node.value;
}

std::optional<int64_t> StrategyParser::integer(const YNode &node,
                                               StringRef what) {
  std::optional<int64_t> v = node.asInt();
  if (!v)
    error(node) << "expected " << what << " (an integer), got '" << node.value
                << "'";
  return v;
}

/// A layout is a sequence: all integers (split counts per dim) or one entry
/// per dim naming the mesh axes it is split over (a list, one name, or
/// nothing for an unsplit dim).
std::optional<LayoutSpec> StrategyParser::layout(const YNode &node) {
  if (node.kind != YNode::Seq) {
    error(node) << "expected a layout: split counts like [2, 1] or mesh axes "
                   "per dim like [[dp], []]";
    return std::nullopt;
  }
  LayoutSpec spec{true, {}, {}, node.loc};
  bool sawInt = false, sawAxes = false;
  for (const YNode &elem : node.items) {
    if (elem.kind == YNode::Scalar && !elem.isNull()) {
      if (std::optional<int64_t> count = elem.asInt()) {
        sawInt = true;
        spec.splits.push_back(*count);
      } else {
        sawAxes = true;
        spec.axes.push_back({elem.value});
      }
      continue;
    }
    sawAxes = true;
    std::vector<std::string> names;
    if (elem.kind == YNode::Seq) {
      for (const YNode &n : elem.items) {
        std::optional<std::string> axis = scalar(n, "a mesh axis name");
        if (!axis)
          return std::nullopt;
        names.push_back(*axis);
      }
    } else if (!elem.isNull()) {
      error(elem) << "expected the mesh axes of one dim, e.g. [dp] or []";
      return std::nullopt;
    }
    spec.axes.push_back(std::move(names));
  }
  if (sawInt && sawAxes) {
    error(node) << "layout mixes split counts and mesh axis names";
    return std::nullopt;
  }
  spec.isSplits = !sawAxes;
  return spec;
}

void StrategyParser::parseMesh(const YNode &node, StrategySpec &spec) {
  if (node.kind != YNode::Map) {
    error(node) << "'mesh' must map axis names to sizes, e.g. {dp: 2, mp: 4}";
    return;
  }
  std::vector<MeshAxis> axes;
  for (const auto &[k, v] : node.entries) {
    std::optional<std::string> axisName = scalar(k, "a mesh axis name");
    std::optional<int64_t> size =
        axisName ? integer(v, "a mesh axis size") : std::nullopt;
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

void StrategyParser::parseStrategies(const YNode &node, StrategySpec &spec) {
  if (node.kind != YNode::Seq) {
    error(node) << "'strategies' must be a list of {match: ..., ...} entries";
    return;
  }
  for (const YNode &item : node.items) {
    if (item.kind != YNode::Map) {
      error(item) << "a strategy entry must be a mapping with 'match'";
      return;
    }
    StrategyEntry entry{"", item.loc, {}, {}, std::nullopt, std::nullopt};
    bool haveMatch = false, haveInputs = false;
    for (const auto &[k, value] : item.entries) {
      std::optional<std::string> key = scalar(k, "a key");
      if (!key)
        return;
      if (*key == "match") {
        std::optional<std::string> m = scalar(value, "a name or glob");
        if (!m)
          return;
        entry.match = *m;
        haveMatch = true;
      } else if (*key == "splits" || *key == "in") {
        if (haveInputs) {
          error(k) << "give either 'splits' or 'in', not both";
          return;
        }
        haveInputs = true;
        if (value.kind != YNode::Seq) {
          error(value) << "'" << *key << "' must be a list of layouts";
          return;
        }
        // A flat list of integers is one tensor's split tuple.
        bool flat = !value.items.empty() &&
                    llvm::all_of(value.items, [](const YNode &n) {
                      return n.kind == YNode::Scalar && !n.isNull();
                    });
        if (flat) {
          std::optional<LayoutSpec> l = layout(value);
          if (!l)
            return;
          entry.tensor = *l;
          continue;
        }
        for (const YNode &n : value.items) {
          std::optional<LayoutSpec> l = layout(n);
          if (!l)
            return;
          entry.inputs.push_back(*l);
        }
      } else if (*key == "out") {
        if (value.kind != YNode::Seq) {
          error(value) << "'out' must be a list of layouts, one per output";
          return;
        }
        for (const YNode &n : value.items) {
          std::optional<LayoutSpec> l = layout(n);
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
      } else if (*key == "recompute") {
        std::optional<bool> r = boolean(value, "true or false");
        if (!r)
          return;
        entry.recompute = *r;
      } else {
        error(k) << "unknown key '" << *key
                 << "' in a strategy entry (expected match, splits, in, out, "
                    "layout, priority or recompute)";
        return;
      }
    }
    if (!haveMatch) {
      error(item) << "strategy entry has no 'match'";
      return;
    }
    if (entry.tensor && (!entry.inputs.empty() || !entry.outputs.empty())) {
      error(item) << "strategy entry mixes a tensor 'layout' with per-input "
                     "or per-output layouts";
      return;
    }
    if (!entry.tensor && entry.inputs.empty() && entry.outputs.empty() &&
        !entry.recompute) {
      error(item) << "strategy entry for '" << entry.match
                  << "' gives no layout (splits, in, out or layout) and no "
                     "recompute";
      return;
    }
    spec.strategies.push_back(std::move(entry));
  }
}

void StrategyParser::parseStages(const YNode &node, StrategySpec &spec) {
  if (node.kind != YNode::Seq) {
    error(node) << "'stages' must be a list of {match: ..., stage: N} entries";
    return;
  }
  for (const YNode &item : node.items) {
    if (item.kind != YNode::Map) {
      error(item) << "a stage entry must be a mapping {match: ..., stage: N}";
      return;
    }
    StageEntry entry{"", -1, item.loc};
    for (const auto &[k, v] : item.entries) {
      std::optional<std::string> key = scalar(k, "a key");
      if (!key)
        return;
      if (*key == "match") {
        std::optional<std::string> m = scalar(v, "a name or glob");
        if (!m)
          return;
        entry.match = *m;
      } else if (*key == "stage") {
        std::optional<int64_t> st = integer(v, "a stage number");
        if (!st)
          return;
        if (*st < 0) {
          error(v) << "stage must be non-negative";
          return;
        }
        entry.stage = *st;
      } else {
        error(k) << "unknown key '" << *key
                 << "' in a stage entry (expected match or stage)";
        return;
      }
    }
    if (entry.match.empty() || entry.stage < 0) {
      error(item) << "a stage entry needs both 'match' and 'stage'";
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
        if (p->failed)
          return; // report the first problem only
        p->failed = true;
        emitError(FileLineColLoc::get(p->ctx, p->name, d.getLineNo(),
                                      d.getColumnNo() + 1))
            << d.getMessage();
      },
      this);
  yaml::Stream stream(text, sm);
  std::optional<YNode> root;
  int documents = 0;
  for (yaml::Document &doc : stream) {
    if (++documents > 1) {
      if (!failed)
        emitError(FileLineColLoc::get(ctx, name, 1, 1))
            << "a strategy file holds one YAML document";
      failed = true;
      break;
    }
    root = copy(doc.getRoot());
    if (failed)
      break;
  }
  if (failed)
    return failure();
  if (!root || root->kind != YNode::Map) {
    emitError(root ? root->loc : FileLineColLoc::get(ctx, name, 1, 1))
        << "a strategy file is a mapping with 'mesh', 'strategies' and "
           "'stages'";
    return failure();
  }
  StrategySpec spec;
  bool haveMesh = false;
  for (const auto &[k, v] : root->entries) {
    std::optional<std::string> key = scalar(k, "a key");
    if (!key)
      break;
    if (*key == "mesh") {
      parseMesh(v, spec);
      haveMesh = true;
    } else if (*key == "strategies") {
      parseStrategies(v, spec);
    } else if (*key == "stages") {
      parseStages(v, spec);
    } else if (*key == "optimizer_shard") {
      parseOptimizerShard(v, spec);
    } else {
      error(k) << "unknown key '" << *key
               << "' (expected mesh, strategies, stages or optimizer_shard)";
    }
    if (failed)
      break;
  }
  if (failed)
    return failure();
  if (!haveMesh) {
    emitError(root->loc)
        << "strategy file has no 'mesh' (e.g. mesh: {dp: 2, mp: 4})";
    return failure();
  }
  return spec;
}

std::optional<bool> StrategyParser::boolean(const YNode &node,
                                            StringRef what) {
  std::optional<std::string> v = scalar(node, what);
  if (!v)
    return std::nullopt;
  if (*v == "true")
    return true;
  if (*v == "false")
    return false;
  error(node) << "expected " << what << ", got '" << *v << "'";
  return std::nullopt;
}

void StrategyParser::parseOptimizerShard(const YNode &node,
                                         StrategySpec &spec) {
  if (node.kind != YNode::Map) {
    error(node) << "'optimizer_shard' must be a mapping, e.g. {enabled: "
                   "true, threshold: 65536}";
    return;
  }
  bool enabled = false;
  int64_t threshold = 65536;
  for (const auto &[k, v] : node.entries) {
    std::optional<std::string> key = scalar(k, "a key");
    if (!key)
      return;
    if (*key == "enabled") {
      std::optional<bool> e = boolean(v, "true or false");
      if (!e)
        return;
      enabled = *e;
    } else if (*key == "threshold") {
      std::optional<int64_t> t = integer(v, "a size in bytes");
      if (!t)
        return;
      if (*t < 0) {
        error(v) << "threshold must be non-negative";
        return;
      }
      threshold = *t;
    } else {
      error(k) << "unknown key '" << *key
               << "' in optimizer_shard (expected enabled or threshold)";
      return;
    }
  }
  if (enabled)
    spec.optimizerShardThreshold = threshold;
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
