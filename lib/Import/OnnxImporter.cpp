//===- OnnxImporter.cpp - ONNX models to linalg on tensors ----------------===//
//
// Walks the graph in order (ONNX graphs are topologically sorted), builds
// `func.func @main` and applies a strategy file: tensor layouts become
// dist.annotate on arguments, node strategies dist.strategy on each node's
// main op, stages dist.stage on every op a node imports to.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Import/OnnxImporter.h"
#include "autoshard/Import/Npy.h"
#include "autoshard/Import/StrategyFile.h"

#include "OnnxImporterImpl.h"

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "autoshard/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/xxhash.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

using namespace mlir;
using namespace autoshard;
using namespace autoshard::onnx_import;

namespace {

/// Writes a float weight as the runtime reads its type: f32 and f16 as
/// numpy's '<f4' / '<f2', bf16 as '<f4' (numpy has no bfloat16; the values
/// are bf16's, so the runtime's rounding back is exact).
std::string writeWeightNpy(StringRef file, const HostTensor &h) {
  if (h.kind != ElemKind::F16) {
    std::vector<float> data(h.f.begin(), h.f.end());
    return writeNpyF32(file, h.shape, data);
  }
  std::vector<uint16_t> bits;
  bits.reserve(h.f.size());
  for (double v : h.f) {
    llvm::APFloat a(v);
    bool lost;
    a.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    bits.push_back(a.bitcastToAPInt().getZExtValue());
  }
  return writeNpyF16(file, h.shape, bits);
}

/// A function argument: a graph input or a float initializer.
struct ArgInfo {
  std::string name;
  std::vector<int64_t> shape;
  ElemKind kind;
  std::string weightFile; // empty for graph inputs
  std::string checksum;   // of weightFile's bytes as written (xxh3, hex)
};

class ModelImporter {
public:
  ModelImporter(MLIRContext *ctx, StringRef path,
                const OnnxImportOptions &options)
      : ctx(ctx), path(path.str()), options(options), builder(ctx),
        fileLoc(FileLineColLoc::get(ctx, path, 0, 0)) {}

  OwningOpRef<ModuleOp> run(const onnx::ModelProto &model);

private:
  Location nodeLoc(StringRef name) {
    return NameLoc::get(StringAttr::get(ctx, name), fileLoc);
  }
  LogicalResult collectArgs(const onnx::GraphProto &graph);
  LogicalResult resolveStrategies(const onnx::GraphProto &graph);
  LogicalResult annotateArgs(func::FuncOp func);
  LogicalResult applyNodeStrategy(const onnx::NodeProto &node, StringRef name,
                                  const StrategyEntry &entry,
                                  const MainOp &main);
  std::string nodeName(const onnx::NodeProto &node, int64_t index) const {
    return node.name().empty() ? node.op_type() + "_" + std::to_string(index)
                               : node.name();
  }
  std::string weightFileName(StringRef name);

  MLIRContext *ctx;
  std::string path;
  OnnxImportOptions options;
  OpBuilder builder;
  Location fileLoc;
  int64_t opset = 0;
  std::string modelDir;

  std::vector<ArgInfo> args;
  llvm::StringMap<Val> values;
  MaterializedConstants materialized;
  llvm::StringSet<> usedFileNames;

  std::optional<StrategySpec> spec;
  dist::MeshAttr mesh;
  /// Strategy entry index per node index / per argument name (last match).
  llvm::DenseMap<int64_t, int64_t> nodeStrategy;
  llvm::StringMap<int64_t> argStrategy;
  llvm::DenseMap<int64_t, int64_t> nodeStage;
  /// Nodes a strategy entry marks `recompute: true`.
  llvm::DenseSet<int64_t> nodeRecompute;
};

} // namespace

std::string ModelImporter::weightFileName(StringRef name) {
  std::string base;
  for (char c : name)
    base += (isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
             c == '-')
                ? c
                : '_';
  if (base.empty() || base[0] == '.')
    base = "w" + base;
  std::string file = base + ".npy";
  for (int k = 1; !usedFileNames.insert(file).second; ++k)
    file = base + "_" + std::to_string(k) + ".npy";
  return file;
}

static LogicalResult staticShape(const onnx::ValueInfoProto &vi,
                                 std::vector<int64_t> &shape, ElemKind &kind,
                                 Location loc) {
  if (!vi.type().has_tensor_type())
    return emitError(loc) << "graph input '" << vi.name()
                          << "' is not a tensor";
  const onnx::TypeProto::Tensor &tt = vi.type().tensor_type();
  std::optional<ElemKind> k = elemKindFromOnnx(tt.elem_type());
  if (!k)
    return emitError(loc) << "graph input '" << vi.name()
                          << "' has element type "
                          << onnxTypeName(tt.elem_type())
                          << ", which is not supported"
                          << unsupportedTypeHint(tt.elem_type());
  kind = *k;
  if (!tt.has_shape())
    return emitError(loc) << "graph input '" << vi.name()
                          << "' has no shape; autoshard needs static shapes";
  shape.clear();
  for (const auto &d : tt.shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0)
      return emitError(loc)
             << "graph input '" << vi.name() << "' has a dynamic dim"
             << (d.has_dim_param() ? " '" + d.dim_param() + "'" : std::string())
             << "; export the model with static shapes";
    shape.push_back(d.dim_value());
  }
  return success();
}

LogicalResult ModelImporter::collectArgs(const onnx::GraphProto &graph) {
  llvm::StringSet<> initNames;
  for (const onnx::TensorProto &t : graph.initializer())
    initNames.insert(t.name());
  // Graph inputs that are not initializers (IR < 4 lists weights as inputs).
  llvm::StringMap<std::string> frozen;
  for (const auto &[name, file] : options.freeze)
    frozen[name] = file;
  for (const onnx::ValueInfoProto &vi : graph.input()) {
    if (initNames.contains(vi.name()))
      continue;
    ArgInfo arg{vi.name(), {}, ElemKind::F32, "", ""};
    if (failed(staticShape(vi, arg.shape, arg.kind, nodeLoc(vi.name()))))
      return failure();
    auto it = frozen.find(vi.name());
    if (it == frozen.end()) {
      args.push_back(arg);
      continue;
    }
    // --freeze: the input's value is known now and folds like a constant.
    std::string err;
    FailureOr<HostTensor> h = readNpyHost(it->second, err);
    if (failed(h))
      return emitError(nodeLoc(vi.name())) << "--freeze " << vi.name() << ": "
                                           << err;
    // The same values in another shape of as many elements (e.g. [1] for a
    // scalar) are taken in the graph input's shape.
    int64_t numel = 1;
    for (int64_t d : arg.shape)
      numel *= d;
    if (h->numel() != numel || isFloatKind(h->kind) != isFloatKind(arg.kind))
      return emitError(nodeLoc(vi.name()))
             << "--freeze " << vi.name() << ": '" << it->second
             << "' does not match the graph input's type "
             << RankedTensorType::get(arg.shape, getElemType(ctx, arg.kind));
    h->kind = arg.kind;
    for (double &x : h->f) // e.g. float32 data for a bfloat16 input
      x = roundToKind(x, arg.kind);
    h->shape = arg.shape;
    Val v;
    v.shape = h->shape;
    v.kind = h->kind;
    v.constant = std::make_shared<HostTensor>(std::move(*h));
    values[vi.name()] = std::move(v);
    frozen.erase(it);
  }
  for (const auto &kv : frozen)
    return emitError(fileLoc) << "--freeze " << kv.getKey()
                              << ": the model has no graph input of that name";
  // Float initializers are weights: arguments, values in .npy files. Integer
  // initializers are shape data and fold like constants.
  std::error_code ec = llvm::sys::fs::create_directories(options.weightsDir);
  if (ec)
    return emitError(fileLoc) << "cannot create weights directory '"
                              << options.weightsDir << "': " << ec.message();
  for (const onnx::TensorProto &t : graph.initializer()) {
    std::string err;
    FailureOr<HostTensor> h = readTensorProto(t, modelDir, err);
    if (failed(h))
      return emitError(nodeLoc(t.name()))
             << "initializer '" << t.name() << "': " << err;
    // Double initializers are rare (tests, not trained weights): folded too.
    // float16 and bfloat16 ones are weights in their type.
    if (h->kind != ElemKind::F32 && h->kind != ElemKind::F16 &&
        h->kind != ElemKind::BF16) {
      Val v;
      v.shape = h->shape;
      v.kind = h->kind;
      v.constant = std::make_shared<HostTensor>(std::move(*h));
      values[t.name()] = std::move(v);
      continue;
    }
    SmallString<256> file(options.weightsDir);
    llvm::sys::fs::make_absolute(file);
    llvm::sys::path::append(file, weightFileName(t.name()));
    llvm::sys::path::remove_dots(file, /*remove_dot_dot=*/true);
    std::string checksum;
    if (options.writeWeights) {
      std::string werr = writeWeightNpy(file, *h);
      if (!werr.empty())
        return emitError(nodeLoc(t.name())) << werr;
      // Recorded in the program so that a run notices a weight file that was
      // overwritten (e.g. by another model compiled to the same place).
      auto written = llvm::MemoryBuffer::getFile(file, /*IsText=*/false);
      if (!written)
        return emitError(nodeLoc(t.name()))
               << "cannot read back '" << file
               << "': " << written.getError().message();
      checksum = llvm::utohexstr(llvm::xxh3_64bits((*written)->getBuffer()),
                                 /*LowerCase=*/true, /*Width=*/16);
    }
    args.push_back(
        ArgInfo{t.name(), h->shape, h->kind, std::string(file), checksum});
  }
  return success();
}

LogicalResult ModelImporter::resolveStrategies(const onnx::GraphProto &graph) {
  llvm::StringSet<> argNames;
  for (const ArgInfo &a : args)
    argNames.insert(a.name);
  auto compile = [&](StringRef glob,
                     Location loc) -> std::optional<llvm::GlobPattern> {
    auto pat = llvm::GlobPattern::create(glob);
    if (!pat) {
      emitError(loc) << "invalid glob '" << glob
                     << "': " << llvm::toString(pat.takeError());
      return std::nullopt;
    }
    return std::move(*pat);
  };
  for (auto [e, entry] : llvm::enumerate(spec->strategies)) {
    std::optional<llvm::GlobPattern> pat = compile(entry.match, entry.loc);
    if (!pat)
      return failure();
    int64_t matches = 0;
    for (int64_t n = 0; n < graph.node_size(); ++n) {
      if (!pat->match(nodeName(graph.node(n), n)))
        continue;
      ++matches;
      if (entry.tensor)
        return emitError(entry.loc)
               << "'match: " << entry.match << "' matches node '"
               << nodeName(graph.node(n), n)
               << "', which takes a list of layouts, one per input (e.g. "
                  "splits: [[2, 1], [1, 4]]), not a single tensor layout";
      if (entry.recompute)
        nodeRecompute.insert(n);
      if (!entry.inputs.empty() || !entry.outputs.empty())
        nodeStrategy[n] = e;
    }
    bool matchedInt = false;
    for (const onnx::TensorProto &t : graph.initializer()) {
      if (!pat->match(t.name()) || argNames.contains(t.name()))
        continue;
      matchedInt = true;
    }
    for (const ArgInfo &a : args) {
      // A recompute-only entry is about nodes: tensors it names are not
      // recomputed (they are inputs and weights).
      if (!pat->match(a.name) || (!entry.tensor && entry.inputs.empty()))
        continue;
      ++matches;
      if (!entry.tensor && !(entry.inputs.size() == 1 && entry.outputs.empty()))
        return emitError(entry.loc)
               << "'match: " << entry.match << "' matches tensor '" << a.name
               << "', which takes one layout ('layout' or a single split "
                  "tuple)";
      argStrategy[a.name] = e;
    }
    if (!matches)
      return emitError(entry.loc)
             << "'match: " << entry.match << "' matches no node, graph input "
             << "or weight of the model"
             << (matchedInt ? " (only integer initializers, which are folded "
                              "as constants)"
                            : "");
  }
  for (const StageEntry &stage : spec->stages) {
    std::optional<llvm::GlobPattern> pat = compile(stage.match, stage.loc);
    if (!pat)
      return failure();
    int64_t matches = 0;
    for (int64_t n = 0; n < graph.node_size(); ++n)
      if (pat->match(nodeName(graph.node(n), n)))
        nodeStage[n] = stage.stage, ++matches;
    if (!matches)
      return emitError(stage.loc)
             << "stage 'match: " << stage.match << "' matches no node";
  }
  return success();
}

LogicalResult ModelImporter::annotateArgs(func::FuncOp func) {
  Block &entry = func.getBody().front();
  for (auto [i, arg] : llvm::enumerate(args)) {
    auto it = argStrategy.find(arg.name);
    if (it == argStrategy.end())
      continue;
    const StrategyEntry &entryStrategy = spec->strategies[it->second];
    const LayoutSpec &ls =
        entryStrategy.tensor ? *entryStrategy.tensor : entryStrategy.inputs[0];
    std::string err;
    TensorLayout layout = ls.resolve(spec->mesh, arg.shape, err);
    if (!err.empty())
      return emitError(ls.loc)
             << "impossible layout " << ls.str() << " for '" << arg.name
             << "' (shape "
             << RankedTensorType::get(arg.shape, getElemType(ctx, arg.kind))
             << "): " << err;
    BlockArgument ba = entry.getArgument(i);
    auto annotate = dist::AnnotateOp::create(
        builder, nodeLoc(arg.name), ba, dist::LayoutAttr::get(mesh, layout),
        entryStrategy.priority.value_or(0));
    values[arg.name].value = annotate.getResult();
  }
  return success();
}

/// Re-expresses a layout of an ONNX tensor for a main-op operand whose dim d
/// is the tensor's dim dims[d] (-1: a unit dim the importer added).
static std::optional<TensorLayout>
project(const TensorLayout &l, ArrayRef<int64_t> dims, std::string &err) {
  TensorLayout out = TensorLayout::replicated(dims.size());
  std::vector<bool> used(l.getRank(), false);
  for (auto [d, src] : llvm::enumerate(dims)) {
    if (src < 0)
      continue;
    out.dimAxes[d] = l.dimAxes[src];
    used[src] = true;
  }
  for (int64_t d = 0; d < l.getRank(); ++d)
    if (!used[d] && !l.dimAxes[d].empty()) {
      err = "dim " + std::to_string(d) +
            " is split but the imported op does not keep it";
      return std::nullopt;
    }
  out.partialAxes = l.partialAxes;
  out.partialKind = l.partialKind;
  return out;
}

LogicalResult ModelImporter::applyNodeStrategy(const onnx::NodeProto &node,
                                               StringRef name,
                                               const StrategyEntry &entry,
                                               const MainOp &main) {
  Location loc = nodeLoc(name);
  if (!main.op)
    return emitError(entry.loc)
           << "node '" << name << "' (op_type " << node.op_type()
           << ") cannot take a strategy: it imports to no single operator "
              "(folded or composite); give layouts to its inputs instead";
  if (entry.inputs.size() > static_cast<size_t>(node.input_size()))
    return emitError(entry.loc)
           << "strategy for node '" << name << "' gives " << entry.inputs.size()
           << " input layouts but the node has " << node.input_size()
           << " inputs";
  if (entry.outputs.size() > static_cast<size_t>(node.output_size()))
    return emitError(entry.loc)
           << "strategy for node '" << name << "' gives "
           << entry.outputs.size() << " output layouts but the node has "
           << node.output_size() << " outputs";
  // Resolve the user's layouts against the node's tensors.
  std::vector<std::optional<TensorLayout>> inLayouts(node.input_size());
  for (auto [k, ls] : llvm::enumerate(entry.inputs)) {
    const Val &v = values[node.input(k)];
    std::string err;
    TensorLayout l = ls.resolve(spec->mesh, v.shape, err);
    if (!err.empty())
      return emitError(ls.loc)
             << "impossible split " << ls.str() << " for input #" << k << " ('"
             << node.input(k) << "', shape "
             << RankedTensorType::get(v.shape, getElemType(ctx, v.kind))
             << ") of node '" << name << "': " << err;
    inLayouts[k] = l;
  }
  std::vector<bool> consumed(node.input_size(), false);
  // The layouts of `m`'s operands (main, then each of main.more).
  auto operandLayouts =
      [&](const MainOp &m,
          SmallVector<dist::LayoutAttr> &operands) -> LogicalResult {
    for (auto [i, src] : llvm::enumerate(m.operands)) {
      Value operand = m.op->getOperand(i);
      int64_t rank = cast<RankedTensorType>(operand.getType()).getRank();
      if (!src) {
        operands.push_back(dist::LayoutAttr::getReplicated(mesh, rank));
        continue;
      }
      consumed[src->input] = true;
      if (!inLayouts[src->input])
        return emitError(entry.loc)
               << "strategy for node '" << name << "' must give a layout for "
               << "input #" << src->input << " ('" << node.input(src->input)
               << "')";
      std::string err;
      std::optional<TensorLayout> l =
          project(*inLayouts[src->input], src->dims, err);
      if (!l)
        return emitError(entry.inputs[src->input].loc)
               << "impossible split for input #" << src->input << " of node '"
               << name << "': " << err;
      operands.push_back(dist::LayoutAttr::get(mesh, *l));
    }
    return success();
  };
  SmallVector<dist::LayoutAttr> operands, results;
  if (failed(operandLayouts(main, operands)))
    return failure();
  SmallVector<SmallVector<dist::LayoutAttr>> moreOperands(main.more.size());
  for (auto [k, m] : llvm::enumerate(main.more))
    if (failed(operandLayouts(m, moreOperands[k])))
      return failure();
  for (auto [k, l] : llvm::enumerate(inLayouts))
    if (l && !consumed[k] && !l->isReplicated())
      return emitError(entry.inputs[k].loc)
             << "input #" << k << " ('" << node.input(k) << "') of node '"
             << name << "' is not an operand of the operator it imports to ("
             << main.op->getName()
             << "); only a replicated layout can be given for it";
  if (!entry.outputs.empty()) {
    if (!main.resultDims)
      return emitError(entry.loc)
             << "node '" << name << "' (op_type " << node.op_type()
             << ") does not support output layouts";
    const LayoutSpec &ls = entry.outputs[0];
    const Val &v = values[node.output(0)];
    std::string err;
    TensorLayout l = ls.resolve(spec->mesh, v.shape, err);
    if (!err.empty())
      return emitError(ls.loc)
             << "impossible split " << ls.str() << " for output #0 ('"
             << node.output(0) << "') of node '" << name << "': " << err;
    std::optional<TensorLayout> p = project(l, *main.resultDims, err);
    if (!p)
      return emitError(ls.loc) << "impossible split for output #0 of node '"
                               << name << "': " << err;
    results.push_back(dist::LayoutAttr::get(mesh, *p));
  }
  auto setStrategy = [&](Operation *op, ArrayRef<dist::LayoutAttr> ins,
                         ArrayRef<dist::LayoutAttr> outs) {
    op->setAttr(dist::DistDialect::kStrategyAttrName,
                dist::StrategyAttr::get(ctx, mesh, ins, outs));
    if (entry.priority)
      op->setAttr(dist::DistDialect::kPriorityAttrName,
                  builder.getI64IntegerAttr(*entry.priority));
  };
  setStrategy(main.op, operands, results);
  for (auto [k, m] : llvm::enumerate(main.more))
    setStrategy(m.op, moreOperands[k], {});
  (void)loc;
  return success();
}

/// What onnx.checker checks of names: the graph is in SSA form (every value is
/// defined once, by a graph input, an initializer or one node output) and
/// initializer names are unique. Without it a later definition silently
/// replaces an earlier one.
static LogicalResult checkSsa(const onnx::GraphProto &graph, Location fileLoc) {
  llvm::StringSet<> inputs, inits;
  for (const onnx::ValueInfoProto &vi : graph.input())
    if (!inputs.insert(vi.name()).second)
      return emitError(fileLoc)
             << "invalid ONNX graph: '" << vi.name()
             << "' is listed as a graph input more than once";
  for (const onnx::TensorProto &t : graph.initializer())
    if (!inits.insert(t.name()).second)
      return emitError(fileLoc) << "invalid ONNX graph: initializer name '"
                                << t.name() << "' is used more than once";
  llvm::StringMap<std::string> defined;
  for (int64_t n = 0; n < graph.node_size(); ++n) {
    const onnx::NodeProto &node = graph.node(n);
    for (const std::string &out : node.output()) {
      if (out.empty())
        continue;
      std::string by = node.name().empty()
                           ? node.op_type() + "_" + std::to_string(n)
                           : node.name();
      const char *what = inputs.contains(out)  ? "a graph input"
                         : inits.contains(out) ? "an initializer"
                                               : nullptr;
      if (what)
        return emitError(fileLoc)
               << "invalid ONNX graph (not in SSA form): node '" << by
               << "' defines '" << out << "', which is also " << what;
      auto [it, inserted] = defined.try_emplace(out, by);
      if (!inserted)
        return emitError(fileLoc)
               << "invalid ONNX graph (not in SSA form): '" << out
               << "' is defined by node '" << it->second << "' and again by "
               << "node '" << by << "'";
    }
  }
  return success();
}

OwningOpRef<ModuleOp> ModelImporter::run(const onnx::ModelProto &model) {
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  if (opset < kMinOpset || opset > kMaxOpset) {
    emitError(fileLoc) << "model uses ONNX opset " << opset
                       << "; autoshard imports opsets " << kMinOpset << " to "
                       << kMaxOpset;
    return nullptr;
  }
  modelDir = llvm::sys::path::parent_path(path).str();
  const onnx::GraphProto &graph = model.graph();
  if (failed(checkSsa(graph, fileLoc)))
    return nullptr;

  if (!options.strategyFile.empty()) {
    FailureOr<StrategySpec> parsed =
        parseStrategyFile(options.strategyFile, ctx);
    if (failed(parsed))
      return nullptr;
    spec = std::move(*parsed);
    mesh = dist::MeshAttr::get(ctx, spec->mesh);
  }
  if (failed(collectArgs(graph)))
    return nullptr;
  if (spec && failed(resolveStrategies(graph)))
    return nullptr;

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  if (mesh)
    (*module)->setAttr(dist::DistDialect::kMeshAttrName, mesh);
  // Read by --dist-training-step (optimizer parallel).
  if (spec && spec->optimizerShardThreshold)
    (*module)->setAttr(
        "dist.optimizer_shard",
        builder.getDictionaryAttr(builder.getNamedAttr(
            "threshold",
            builder.getI64IntegerAttr(*spec->optimizerShardThreshold))));
  builder.setInsertionPointToEnd(module->getBody());
  SmallVector<Type> argTypes;
  for (const ArgInfo &a : args)
    argTypes.push_back(
        RankedTensorType::get(a.shape, getElemType(ctx, a.kind)));
  auto func = func::FuncOp::create(builder, fileLoc, "main",
                                   builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, a] : llvm::enumerate(args)) {
    entry->getArgument(i).setLoc(nodeLoc(a.name));
    func.setArgAttr(i, kNameAttrName, builder.getStringAttr(a.name));
    if (!a.weightFile.empty())
      func.setArgAttr(i, kWeightAttrName, builder.getStringAttr(a.weightFile));
    if (!a.checksum.empty())
      func.setArgAttr(i, "dist.weight_checksum",
                      builder.getStringAttr(a.checksum));
    Val v;
    v.value = entry->getArgument(i);
    v.shape = a.shape;
    v.kind = a.kind;
    values[a.name] = std::move(v);
  }
  builder.setInsertionPointToEnd(entry);
  if (spec && failed(annotateArgs(func)))
    return nullptr;

  NodeImporter importer(builder, opset, values, materialized);
  for (int64_t n = 0; n < graph.node_size(); ++n) {
    const onnx::NodeProto &node = graph.node(n);
    std::string name = nodeName(node, n);
    Operation *before = entry->empty() ? nullptr : &entry->back();
    if (failed(importer.convert(node, nodeLoc(name), name)))
      return nullptr;
    if (auto it = nodeStrategy.find(n); it != nodeStrategy.end())
      if (failed(applyNodeStrategy(node, name, spec->strategies[it->second],
                                   importer.main)))
        return nullptr;
    auto first = before ? std::next(before->getIterator()) : entry->begin();
    if (auto it = nodeStage.find(n); it != nodeStage.end())
      for (Operation &op : llvm::make_range(first, entry->end()))
        op.setAttr(kStageAttrName, builder.getI64IntegerAttr(it->second));
    if (nodeRecompute.contains(n))
      for (Operation &op : llvm::make_range(first, entry->end()))
        op.setAttr("dist.recompute", builder.getUnitAttr());
  }

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    auto it = values.find(out.name());
    if (it == values.end()) {
      emitError(fileLoc) << "graph output '" << out.name()
                         << "' is produced by no node";
      return nullptr;
    }
    results.push_back(importer.materialize(it->second));
  }
  func::ReturnOp::create(builder, fileLoc, results);
  func.setType(
      builder.getFunctionType(argTypes, TypeRange(ValueRange(results))));
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, kNameAttrName, builder.getStringAttr(out.name()));
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

static void loadDialects(MLIRContext *ctx) {
  ctx->loadDialect<arith::ArithDialect, func::FuncDialect,
                   linalg::LinalgDialect, math::MathDialect,
                   tensor::TensorDialect, dist::DistDialect>();
}

OwningOpRef<ModuleOp>
autoshard::importOnnxModel(StringRef bytes, StringRef path, MLIRContext *ctx,
                           const OnnxImportOptions &options) {
  loadDialects(ctx);
  Location fileLoc = FileLineColLoc::get(ctx, path, 0, 0);
  onnx::ModelProto model;
  bool parsed = false;
  // Text format makes hand-written test models readable; real models are
  // binary (.onnx).
  if (!path.ends_with(".onnx")) {
    google::protobuf::TextFormat::Parser parser;
    parser.AllowPartialMessage(false);
    // Silence protobuf's own error printer: the binary attempt follows.
    struct Quiet : google::protobuf::io::ErrorCollector {
      void AddError(int, int, const std::string &) override {}
    } quiet;
    parser.RecordErrorsTo(&quiet);
    parsed = parser.ParseFromString(bytes.str(), &model);
  }
  if (!parsed) {
    model.Clear();
    parsed = model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  }
  if (!parsed) {
    emitError(fileLoc) << "'" << path
                       << "' is not a valid ONNX model (protobuf parse failed)";
    return nullptr;
  }
  if (!model.has_graph()) {
    emitError(fileLoc) << "'" << path << "' has no graph";
    return nullptr;
  }
  return ModelImporter(ctx, path, options).run(model);
}

OwningOpRef<ModuleOp>
autoshard::importOnnxFile(StringRef path, MLIRContext *ctx,
                          const OnnxImportOptions &options) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buf) {
    emitError(FileLineColLoc::get(ctx, path, 0, 0))
        << "cannot read '" << path << "': " << buf.getError().message();
    return nullptr;
  }
  return importOnnxModel((*buf)->getBuffer(), path, ctx, options);
}

void autoshard::registerOnnxImportTranslation() {
  static llvm::cl::opt<std::string> strategy(
      "strategy",
      llvm::cl::desc("Strategy file (YAML or JSON) for --import-onnx"),
      llvm::cl::value_desc("file"), llvm::cl::init(""));
  static llvm::cl::opt<std::string> weightsDir(
      "weights-dir",
      llvm::cl::desc("Directory for the .npy weight files of --import-onnx"),
      llvm::cl::value_desc("dir"), llvm::cl::init("."));
  static llvm::cl::list<std::string> freeze(
      "freeze",
      llvm::cl::desc("Graph input NAME gets FILE.npy's value at import time "
                     "(--import-onnx)"),
      llvm::cl::value_desc("NAME=FILE.npy"));
  static TranslateToMLIRRegistration reg(
      "import-onnx", "import an ONNX model (opsets 11-21)",
      [](llvm::SourceMgr &sm, MLIRContext *ctx) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buf = sm.getMemoryBuffer(sm.getMainFileID());
        OnnxImportOptions options;
        options.strategyFile = strategy;
        options.weightsDir = weightsDir;
        for (StringRef f : freeze) {
          auto [name, file] = f.split('=');
          options.freeze.emplace_back(name.str(), file.str());
        }
        OwningOpRef<ModuleOp> m = importOnnxModel(
            buf->getBuffer(), buf->getBufferIdentifier(), ctx, options);
        return OwningOpRef<Operation *>(m.release());
      },
      [](DialectRegistry &registry) {
        registry.insert<arith::ArithDialect, func::FuncDialect,
                        linalg::LinalgDialect, math::MathDialect,
                        tensor::TensorDialect, dist::DistDialect>();
      });
}
