//===- OnnxFolding.cpp - Static evaluation of ONNX shape computations -----===//
//
// Exporters compute reshape targets and slice bounds at run time (Shape ->
// Gather -> Unsqueeze -> Concat -> Reshape). autoshard needs static shapes,
// so every node whose inputs are all known is evaluated here instead of
// being imported; only the values real ops consume are materialised.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterImpl.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace autoshard::onnx_import;

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::optional<ElemKind> autoshard::onnx_import::elemKindFromOnnx(int32_t t) {
  switch (t) {
  case onnx::TensorProto::FLOAT:
    return ElemKind::F32;
  case onnx::TensorProto::DOUBLE:
    return ElemKind::F64;
  case onnx::TensorProto::FLOAT16:
    return ElemKind::F16;
  case onnx::TensorProto::BFLOAT16:
    return ElemKind::BF16;
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    return ElemKind::I64;
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return ElemKind::I32;
  case onnx::TensorProto::BOOL:
    return ElemKind::Bool;
  default:
    return std::nullopt;
  }
}

const char *autoshard::onnx_import::unsupportedTypeHint(int32_t) {
  return " (float, float16, bfloat16, double, int8 to int64, uint8 to uint64 "
         "and bool are)";
}

static const llvm::fltSemantics *narrowSemantics(ElemKind kind) {
  if (kind == ElemKind::F16)
    return &llvm::APFloat::IEEEhalf();
  if (kind == ElemKind::BF16)
    return &llvm::APFloat::BFloat();
  return nullptr;
}

double autoshard::onnx_import::roundToKind(double v, ElemKind kind) {
  const llvm::fltSemantics *sem = narrowSemantics(kind);
  if (!sem)
    return v;
  llvm::APFloat a(v);
  bool lost;
  a.convert(*sem, llvm::APFloat::rmNearestTiesToEven, &lost);
  return a.convertToDouble();
}

DenseElementsAttr
autoshard::onnx_import::floatElements(RankedTensorType type,
                                      ArrayRef<double> values) {
  // Built from the element type's own bytes: an array of APFloats took
  // ~32 bytes an element beside the attribute.
  auto ft = cast<FloatType>(type.getElementType());
  if (ft.isF64())
    return DenseElementsAttr::get(type, values);
  if (ft.isF32()) {
    std::vector<float> data(values.begin(), values.end());
    return DenseElementsAttr::get(type, ArrayRef<float>(data));
  }
  assert(ft.getWidth() == 16 && "floatElements: f16, bf16, f32 or f64");
  std::vector<uint16_t> bits;
  bits.reserve(values.size());
  for (double v : values) {
    llvm::APFloat a(v);
    bool lost;
    a.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    bits.push_back(a.bitcastToAPInt().getZExtValue());
  }
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(reinterpret_cast<const char *>(bits.data()),
                           bits.size() * sizeof(uint16_t)));
}

/// The value of a float16/bfloat16 bit pattern (`kind` F16 or BF16).
static double narrowBitsToDouble(uint16_t bits, ElemKind kind) {
  return llvm::APFloat(*narrowSemantics(kind), llvm::APInt(16, bits))
      .convertToDouble();
}

const char *autoshard::onnx_import::onnxTypeName(int32_t t) {
  if (onnx::TensorProto::DataType_IsValid(t))
    return onnx::TensorProto::DataType_Name(
               static_cast<onnx::TensorProto::DataType>(t))
        .c_str();
  return "an unknown type";
}

FailureOr<HostTensor> autoshard::onnx_import::readTensorProto(
    const onnx::TensorProto &t, StringRef modelDir, std::string &error) {
  std::optional<ElemKind> kind = elemKindFromOnnx(t.data_type());
  if (!kind) {
    error = std::string("element type ") + onnxTypeName(t.data_type()) +
            " is not supported" + unsupportedTypeHint(t.data_type());
    return failure();
  }
  HostTensor h;
  h.kind = *kind;
  h.shape.assign(t.dims().begin(), t.dims().end());
  // Dims come from the file: a negative dim or an element count past int64
  // (or past what a byte size can hold) would wrap and pass the size checks.
  int64_t n = 1;
  for (int64_t d : h.shape) {
    std::optional<int64_t> m = d < 0 ? std::nullopt : llvm::checkedMul(n, d);
    if (!m || *m > std::numeric_limits<int64_t>::max() / 8) {
      error =
          "has dims [" +
          llvm::join(llvm::map_range(
                         h.shape, [](int64_t v) { return std::to_string(v); }),
                     ", ") +
          "], whose element count is negative or too large";
      return failure();
    }
    n = *m;
  }
  std::string external;
  const std::string *raw = t.has_raw_data() ? &t.raw_data() : nullptr;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    uint64_t offset = 0, length = 0;
    for (const auto &kv : t.external_data()) {
      if (kv.key() == "location") {
        location = kv.value();
        continue;
      }
      if (kv.key() != "offset" && kv.key() != "length")
        continue;
      uint64_t &field = kv.key() == "offset" ? offset : length;
      if (StringRef(kv.value()).getAsInteger(10, field)) {
        error = "external data " + kv.key() + " '" + kv.value() +
                "' is not a non-negative integer";
        return failure();
      }
    }
    SmallString<256> path(modelDir);
    llvm::sys::path::append(path, location);
    auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
    if (!buf) {
      error = "cannot read external data '" + std::string(path) +
              "': " + buf.getError().message();
      return failure();
    }
    StringRef bytes = (*buf)->getBuffer();
    if (offset > bytes.size() || (length && length > bytes.size() - offset)) {
      error = "external data offset " + std::to_string(offset) +
              (length ? " + length " + std::to_string(length) : "") +
              " is past the end of '" + std::string(path) + "' (" +
              std::to_string(bytes.size()) + " bytes)";
      return failure();
    }
    external = bytes.substr(offset, length ? length : StringRef::npos).str();
    raw = &external;
  }
  auto fromRaw = [&](auto sample) -> LogicalResult {
    using T = decltype(sample);
    if (raw->size() != static_cast<size_t>(n) * sizeof(T)) {
      error = "raw data holds " + std::to_string(raw->size()) +
              " bytes, expected " + std::to_string(n * sizeof(T));
      return failure();
    }
    for (int64_t k = 0; k < n; ++k) {
      T v;
      std::memcpy(&v, raw->data() + k * sizeof(T), sizeof(T));
      if (h.isFloat())
        h.f.push_back(static_cast<double>(v));
      else
        h.i.push_back(static_cast<int64_t>(v));
    }
    return success();
  };
  LogicalResult ok = success();
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: {
    // 16-bit patterns: raw bytes, or one per int32_data entry (ONNX's
    // spelling for both types).
    std::vector<uint16_t> bits;
    if (raw) {
      if (raw->size() != static_cast<size_t>(n) * 2) {
        error = "raw data holds " + std::to_string(raw->size()) +
                " bytes, expected " + std::to_string(n * 2);
        return failure();
      }
      bits.resize(n);
      std::memcpy(bits.data(), raw->data(), n * 2);
    } else {
      bits.assign(t.int32_data().begin(), t.int32_data().end());
    }
    for (uint16_t b : bits)
      h.f.push_back(narrowBitsToDouble(b, h.kind));
    break;
  }
  case onnx::TensorProto::FLOAT:
    if (raw)
      ok = fromRaw(float());
    else
      h.f.assign(t.float_data().begin(), t.float_data().end());
    break;
  case onnx::TensorProto::DOUBLE:
    if (raw)
      ok = fromRaw(double());
    else
      h.f.assign(t.double_data().begin(), t.double_data().end());
    break;
  case onnx::TensorProto::INT64:
    if (raw)
      ok = fromRaw(int64_t());
    else
      h.i.assign(t.int64_data().begin(), t.int64_data().end());
    break;
  case onnx::TensorProto::INT32:
    if (raw)
      ok = fromRaw(int32_t());
    else
      h.i.assign(t.int32_data().begin(), t.int32_data().end());
    break;
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::UINT8:
    if (raw)
      ok = fromRaw(uint8_t());
    else
      h.i.assign(t.int32_data().begin(), t.int32_data().end());
    break;
  case onnx::TensorProto::INT8:
    if (raw)
      ok = fromRaw(int8_t());
    else
      h.i.assign(t.int32_data().begin(), t.int32_data().end());
    break;
  case onnx::TensorProto::INT16:
    if (raw)
      ok = fromRaw(int16_t());
    else
      h.i.assign(t.int32_data().begin(), t.int32_data().end());
    break;
  case onnx::TensorProto::UINT16:
    if (raw)
      ok = fromRaw(uint16_t());
    else
      h.i.assign(t.int32_data().begin(), t.int32_data().end());
    break;
  case onnx::TensorProto::UINT32:
    if (raw)
      ok = fromRaw(uint32_t());
    else
      h.i.assign(t.uint64_data().begin(), t.uint64_data().end());
    break;
  case onnx::TensorProto::UINT64:
    if (raw)
      ok = fromRaw(uint64_t());
    else
      h.i.assign(t.uint64_data().begin(), t.uint64_data().end());
    break;
  }
  if (failed(ok))
    return failure();
  int64_t have = h.isFloat() ? h.f.size() : h.i.size();
  if (have != n) {
    error = "holds " + std::to_string(have) + " values for a shape of " +
            std::to_string(n) + " elements";
    return failure();
  }
  return h;
}

FailureOr<HostTensor> autoshard::onnx_import::readNpyHost(StringRef path,
                                                          std::string &error) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buf) {
    error = "cannot read '" + path.str() + "': " + buf.getError().message();
    return failure();
  }
  StringRef bytes = (*buf)->getBuffer();
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY")) {
    error = "'" + path.str() + "' is not a .npy file";
    return failure();
  }
  uint8_t major = bytes[6];
  size_t headerLen = major == 1 ? (uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8)
                                : 0;
  size_t start = 10;
  if (major >= 2 && bytes.size() >= 12) {
    headerLen = uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8 |
                uint8_t(bytes[10]) << 16 | uint32_t(uint8_t(bytes[11])) << 24;
    start = 12;
  }
  if (start + headerLen > bytes.size()) {
    error = "'" + path.str() + "' has a truncated header";
    return failure();
  }
  StringRef header = bytes.substr(start, headerLen);
  StringRef data = bytes.substr(start + headerLen);
  auto field = [&](StringRef key) {
    size_t k = header.find(key);
    return k == StringRef::npos ? StringRef() : header.substr(k + key.size());
  };
  StringRef descr =
      field("'descr': '").take_until([](char c) { return c == '\''; });
  if (field("'fortran_order': ").starts_with("True")) {
    error = "'" + path.str() + "' is in Fortran order; save it in C order";
    return failure();
  }
  HostTensor h;
  StringRef shapeText =
      field("'shape': (").take_until([](char c) { return c == ')'; });
  SmallVector<StringRef> dims;
  shapeText.split(dims, ',', -1, /*KeepEmpty=*/false);
  for (StringRef d : dims) {
    int64_t v;
    if (d.trim().getAsInteger(10, v) || v < 0) {
      error = "'" + path.str() + "' has a bad shape (" + shapeText.str() + ")";
      return failure();
    }
    h.shape.push_back(v);
  }
  struct Type {
    const char *descr;
    ElemKind kind;
    size_t size;
  };
  static const Type kTypes[] = {
      {"<f4", ElemKind::F32, 4}, {"<f8", ElemKind::F64, 8},
      {"<i8", ElemKind::I64, 8}, {"<i4", ElemKind::I32, 4},
      {"|b1", ElemKind::Bool, 1}, {"|u1", ElemKind::I32, 1},
      {"|i1", ElemKind::I32, 1}, {"<f2", ElemKind::F16, 2}};
  const Type *type = nullptr;
  for (const Type &t : kTypes)
    if (descr == t.descr)
      type = &t;
  if (!type) {
    error = "'" + path.str() + "' holds dtype '" + descr.str() +
            "'; float16/32/64, int8/32/64, uint8 and bool are read";
    return failure();
  }
  h.kind = type->kind;
  int64_t n = h.numel();
  if (data.size() < static_cast<size_t>(n) * type->size) {
    error = "'" + path.str() + "' holds fewer values than its shape";
    return failure();
  }
  for (int64_t k = 0; k < n; ++k) {
    const char *p = data.data() + k * type->size;
    StringRef d = type->descr;
    if (d == "<f4") {
      float v;
      std::memcpy(&v, p, 4);
      h.f.push_back(v);
    } else if (d == "<f8") {
      double v;
      std::memcpy(&v, p, 8);
      h.f.push_back(v);
    } else if (d == "<f2") {
      uint16_t v;
      std::memcpy(&v, p, 2);
      h.f.push_back(narrowBitsToDouble(v, ElemKind::F16));
    } else if (d == "<i8") {
      int64_t v;
      std::memcpy(&v, p, 8);
      h.i.push_back(v);
    } else if (d == "<i4") {
      int32_t v;
      std::memcpy(&v, p, 4);
      h.i.push_back(v);
    } else if (d == "|i1") {
      h.i.push_back(int8_t(*p));
    } else {
      h.i.push_back(uint8_t(*p));
    }
  }
  return h;
}

namespace {
/// Room for a fold's `n` elements at once: grown an element at a time, the
/// vector's regrowth copies it and briefly holds it twice.
void reserveElements(HostTensor &t, int64_t n) {
  if (t.isFloat())
    t.f.reserve(n);
  else
    t.i.reserve(n);
}

/// Row-major strides with 0 for dims broadcast against `out`.
std::vector<int64_t> broadcastStrides(ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t s = 1, off = out.size() - shape.size();
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    strides[off + d] = shape[d] == 1 ? 0 : s;
    s *= shape[d];
  }
  return strides;
}

/// Evaluates an elementwise op with numpy broadcasting. `useFloat` picks the
/// arithmetic (double or int64) from the inputs.
std::optional<HostTensor>
hostElementwise(ArrayRef<const HostTensor *> ins, ElemKind outKind,
                bool useFloat,
                const std::function<double(ArrayRef<double>)> &ff,
                const std::function<int64_t(ArrayRef<int64_t>)> &fi) {
  std::vector<std::vector<int64_t>> shapes;
  for (const HostTensor *t : ins)
    shapes.push_back(t->shape);
  std::optional<std::vector<int64_t>> out = broadcastShapes(shapes);
  if (!out)
    return std::nullopt;
  HostTensor r;
  r.kind = outKind;
  r.shape = *out;
  std::vector<std::vector<int64_t>> strides;
  for (const HostTensor *t : ins)
    strides.push_back(broadcastStrides(t->shape, *out));
  int64_t n = r.numel(), rank = out->size();
  reserveElements(r, n);
  std::vector<int64_t> idx(rank, 0);
  std::vector<double> fa(ins.size());
  std::vector<int64_t> ia(ins.size());
  for (int64_t k = 0; k < n; ++k) {
    for (size_t j = 0; j < ins.size(); ++j) {
      int64_t flat = 0;
      for (int64_t d = 0; d < rank; ++d)
        flat += idx[d] * strides[j][d];
      if (useFloat)
        fa[j] = ins[j]->getF(flat);
      else
        ia[j] = ins[j]->getI(flat);
    }
    if (useFloat)
      r.push(ff(fa));
    else
      r.pushI(fi(ia));
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < (*out)[d])
        break;
      idx[d] = 0;
    }
  }
  return r;
}

/// Copies `src` elements at row-major positions given by `index(outIdx)`.
HostTensor gatherHost(const HostTensor &src, std::vector<int64_t> outShape,
                      const std::function<int64_t(ArrayRef<int64_t>)> &index) {
  HostTensor r;
  r.kind = src.kind;
  r.shape = std::move(outShape);
  int64_t n = r.numel(), rank = r.shape.size();
  reserveElements(r, n);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t from = index(idx);
    if (src.isFloat())
      r.f.push_back(src.f[from]);
    else
      r.i.push_back(src.i[from]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < r.shape[d])
        break;
      idx[d] = 0;
    }
  }
  return r;
}

std::vector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}
} // namespace


/// The bound on all folds of one import together: many nodes, each under
/// the bound, must not add up without one either. Small results (shape
/// data, which later Reshapes need known) always fold: at 32 KB a node the
/// host memory stays a small multiple of the graph's own.
static constexpr int64_t kMaxFoldedTotal = int64_t(1) << 26;
static constexpr int64_t kAlwaysFoldedElements = 4096;

bool NodeImporter::reserveFold(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    std::optional<int64_t> m =
        d < 0 ? std::nullopt : llvm::checkedMul(count, d);
    if (!m || *m > kMaxFoldedElements)
      return false;
    count = *m;
  }
  if (count <= kAlwaysFoldedElements)
    return true;
  if (foldedElements + count > kMaxFoldedTotal)
    return false;
  foldedElements += count;
  return true;
}

/// Whether the numpy broadcast of `ins` is small enough to fold (or does not
/// broadcast, which the fold reports): [2^20, 1] + [1, 2^20] is 2^40.
static bool foldableBroadcast(NodeImporter &n,
                              ArrayRef<const HostTensor *> ins) {
  std::vector<std::vector<int64_t>> shapes;
  for (const HostTensor *t : ins)
    shapes.push_back(t->shape);
  std::optional<std::vector<int64_t>> out = broadcastShapes(shapes);
  return !out || n.reserveFold(*out);
}

//===----------------------------------------------------------------------===//
// Fold rules: one per op family. Each returns true when it set the node's
// outputs, false to leave the node to its converter, failure on bad input.
//===----------------------------------------------------------------------===//

namespace {
using FoldRule = FailureOr<bool> (*)(NodeImporter &, StringRef opType);

/// Constant: its one attribute is the value.
FailureOr<bool> foldConstant(NodeImporter &n, StringRef) {
  const onnx::AttributeProto *a = nullptr;
  for (const onnx::AttributeProto &at : n.getNode().attribute())
    a = &at;
  if (!a)
    return n.error() << "has no value attribute", failure();
  HostTensor t;
  StringRef name = a->name();
  if (name == "value") {
    std::string err;
    FailureOr<HostTensor> h = readTensorProto(a->t(), "", err);
    if (failed(h))
      return n.error() << "value: " << err, failure();
    t = std::move(*h);
  } else if (name == "value_float") {
    t.kind = ElemKind::F32;
    t.f = {a->f()};
  } else if (name == "value_floats") {
    t.kind = ElemKind::F32;
    t.f.assign(a->floats().begin(), a->floats().end());
    t.shape = {static_cast<int64_t>(t.f.size())};
  } else if (name == "value_int") {
    t.kind = ElemKind::I64;
    t.i = {a->i()};
  } else if (name == "value_ints") {
    t.kind = ElemKind::I64;
    t.i.assign(a->ints().begin(), a->ints().end());
    t.shape = {static_cast<int64_t>(t.i.size())};
  } else {
    return n.error() << "attribute '" << name << "' is not supported",
           failure();
  }
  n.setOutput(0, std::move(t));
  return true;
}

/// Shape: known from the input's static shape, whether or not its values are.
FailureOr<bool> foldShape(NodeImporter &n, StringRef) {
  const Val &x = n.in(0);
  int64_t rank = x.rank();
  int64_t start = n.attrInt("start", 0), end = n.attrInt("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  HostTensor t;
  t.kind = ElemKind::I64;
  for (int64_t d = start; d < end; ++d)
    t.i.push_back(x.shape[d]);
  t.shape = {static_cast<int64_t>(t.i.size())};
  n.setOutput(0, std::move(t));
  return true;
}

/// ConstantOfShape too large to fold: a splat constant, which the IR holds
/// as one value and the runtime fills when it runs (attention masks of
/// [1, 1, 16384, 16384] are real), unless no tensor can have the shape.
FailureOr<bool> splatOfShape(NodeImporter &n, ArrayRef<int64_t> shape,
                             ElemKind kind, double v) {
  int64_t bytes = 8;
  for (int64_t d : shape)
    if (d < 0 || llvm::MulOverflow(bytes, d, bytes))
      return n.error() << "shape [" << llvm::interleaved(shape)
                       << "] has a negative dim or more elements than a "
                          "tensor can hold",
             failure();
  OpBuilder &b = n.getBuilder();
  RankedTensorType type = n.tensorType(shape, kind);
  Type elem = type.getElementType();
  Attribute a = isFloatKind(kind)
                    ? Attribute(b.getFloatAttr(elem, roundToKind(v, kind)))
                    : Attribute(b.getIntegerAttr(elem, int64_t(v)));
  Value c = arith::ConstantOp::create(b, n.getLoc(),
                                      DenseElementsAttr::get(type, a));
  n.setOutput(0, c, kind);
  return true;
}

FailureOr<bool> foldConstantOfShape(NodeImporter &n, StringRef) {
  FailureOr<std::vector<int64_t>> shape = n.constInts(0, "the shape");
  if (failed(shape))
    return failure();
  HostTensor t;
  t.kind = ElemKind::F32;
  double v = 0.0;
  if (const onnx::AttributeProto *a = n.attr("value")) {
    std::string err;
    FailureOr<HostTensor> h = readTensorProto(a->t(), "", err);
    if (failed(h) || h->numel() != 1)
      return n.error() << "value must be a one-element tensor", failure();
    t.kind = h->kind;
    v = h->getF(0);
  }
  if (!n.reserveFold(*shape))
    return splatOfShape(n, *shape, t.kind, v);
  t.shape = *shape;
  // Filled at once, not pushed an element at a time (fuzz-onnx: 2^25
  // elements, within the budget, took 2.6 s with the vector's regrowth,
  // over libFuzzer's 10 s under ASan; timeout-0c4dae...onnx).
  t.push(v);
  if (t.isFloat())
    t.f.assign(t.numel(), t.f[0]);
  else
    t.i.assign(t.numel(), t.i[0]);
  n.setOutput(0, std::move(t));
  return true;
}

/// Identity, and Dropout at inference unless its mask output is wanted.
FailureOr<bool> foldIdentity(NodeImporter &n, StringRef opType) {
  n.setOutput(0, n.in(0));
  return opType == "Identity" || n.getNode().output_size() < 2;
}

FailureOr<bool> applyBinary(NodeImporter &n, ElemKind outKind,
                            std::function<double(double, double)> f,
                            std::function<int64_t(int64_t, int64_t)> g) {
  const HostTensor &x = *n.in(0).constant, &y = *n.in(1).constant;
  if (!foldableBroadcast(n, {&x, &y}))
    return false;
  std::optional<HostTensor> r = hostElementwise(
      {&x, &y}, outKind, x.isFloat() || y.isFloat(),
      [&](ArrayRef<double> a) { return f(a[0], a[1]); },
      [&](ArrayRef<int64_t> a) { return g(a[0], a[1]); });
  if (!r)
    return n.error() << "input shapes do not broadcast", failure();
  n.setOutput(0, std::move(*r));
  return true;
}

/// Arithmetic keeps input #0's type; comparisons give bool.
FailureOr<bool> foldBinary(NodeImporter &n, StringRef opType) {
  const HostTensor &x = *n.in(0).constant;
  ElemKind k = x.kind;
  if (opType == "Add")
    return applyBinary(n, k, std::plus<double>(), std::plus<int64_t>());
  if (opType == "Sub")
    return applyBinary(n, k, std::minus<double>(), std::minus<int64_t>());
  if (opType == "Mul")
    return applyBinary(n, k, std::multiplies<double>(),
                       std::multiplies<int64_t>());
  if (opType == "Div") {
    if (!x.isFloat())
      for (int64_t v : n.in(1).constant->i)
        if (v == 0)
          return n.error() << "integer division by zero", failure();
    return applyBinary(n, k, std::divides<double>(), std::divides<int64_t>());
  }
  if (opType == "Pow")
    return applyBinary(
        n, k, [](double a, double b) { return std::pow(a, b); },
        [](int64_t a, int64_t b) {
          return static_cast<int64_t>(std::pow(a, b));
        });
  if (opType == "Equal")
    return applyBinary(
        n, ElemKind::Bool, [](double a, double b) { return a == b; },
        [](int64_t a, int64_t b) { return a == b; });
  if (opType == "Less")
    return applyBinary(
        n, ElemKind::Bool, [](double a, double b) { return a < b; },
        [](int64_t a, int64_t b) { return a < b; });
  assert(opType == "Greater" && "foldBinary registered for another op");
  return applyBinary(
      n, ElemKind::Bool, [](double a, double b) { return a > b; },
      [](int64_t a, int64_t b) { return a > b; });
}

FailureOr<bool> foldWhere(NodeImporter &n, StringRef) {
  const HostTensor &x = *n.in(0).constant, &y = *n.in(1).constant,
                   &z = *n.in(2).constant;
  if (!foldableBroadcast(n, {&x, &y, &z}))
    return false;
  std::optional<HostTensor> r = hostElementwise(
      {&x, &y, &z}, y.kind, y.isFloat(),
      [](ArrayRef<double> a) { return a[0] != 0 ? a[1] : a[2]; },
      [](ArrayRef<int64_t> a) { return a[0] != 0 ? a[1] : a[2]; });
  if (!r)
    return n.error() << "input shapes do not broadcast", failure();
  n.setOutput(0, std::move(*r));
  return true;
}

/// Neg; Sqrt of a float tensor (an integer Sqrt is left to its converter).
FailureOr<bool> foldUnary(NodeImporter &n, StringRef opType) {
  const HostTensor &x = *n.in(0).constant;
  if (opType == "Sqrt" && !x.isFloat())
    return false;
  if (!n.reserveFold(x.shape))
    return false;
  bool neg = opType == "Neg";
  std::optional<HostTensor> r = hostElementwise(
      {&x}, x.kind, x.isFloat(),
      [&](ArrayRef<double> a) { return neg ? -a[0] : std::sqrt(a[0]); },
      [&](ArrayRef<int64_t> a) { return neg ? -a[0] : a[0]; });
  n.setOutput(0, std::move(*r));
  return true;
}

FailureOr<bool> foldCast(NodeImporter &n, StringRef) {
  const HostTensor &x = *n.in(0).constant;
  const onnx::AttributeProto *to = n.attr("to");
  std::optional<ElemKind> kind = to ? elemKindFromOnnx(to->i()) : std::nullopt;
  if (!kind)
    return false; // convertCast reports it
  if (!n.reserveFold(x.shape))
    return false;
  HostTensor r;
  r.kind = *kind;
  r.shape = x.shape;
  int64_t numel = x.numel();
  reserveElements(r, numel);
  for (int64_t e = 0; e < numel; ++e) {
    if (x.isFloat() && !r.isFloat())
      r.pushI(*kind == ElemKind::Bool ? x.f[e] != 0.0 : int64_t(x.f[e]));
    else if (x.isFloat())
      r.push(*kind == ElemKind::F32 ? double(float(x.f[e])) : x.f[e]);
    else
      r.pushI(x.i[e]);
  }
  n.setOutput(0, std::move(r));
  return true;
}

FailureOr<bool> foldRange(NodeImporter &n, StringRef) {
  const HostTensor &x = *n.in(0).constant;
  double start = x.getF(0), limit = n.in(1).constant->getF(0),
         delta = n.in(2).constant->getF(0);
  if (delta == 0)
    return n.error() << "delta is zero", failure();
  HostTensor r;
  r.kind = x.kind;
  double count = std::max(0.0, std::ceil((limit - start) / delta));
  if (!(count <= double(kMaxFoldedElements)))
    return n.error() << "makes more than " << kMaxFoldedElements
                     << " elements (or a NaN count)",
           failure();
  int64_t num = static_cast<int64_t>(count);
  r.shape = {num};
  if (!n.reserveFold(r.shape))
    return n.error() << "would pass the " << kMaxFoldedTotal
                     << " elements that one import's folds may hold",
           failure();
  reserveElements(r, num);
  for (int64_t e = 0; e < num; ++e)
    r.push(start + e * delta);
  n.setOutput(0, std::move(r));
  return true;
}

FailureOr<bool> foldGather(NodeImporter &n, StringRef) {
  const HostTensor &x = *n.in(0).constant, &idx = *n.in(1).constant;
  int64_t axis = n.attrInt("axis", 0);
  if (failed(n.normalizeAxis(axis, x.shape.size())))
    return failure();
  std::vector<int64_t> out(x.shape.begin(), x.shape.begin() + axis);
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  for (int64_t e = 0; e < idx.numel(); ++e) {
    int64_t v = idx.getI(e);
    if (v < -x.shape[axis] || v >= x.shape[axis])
      return n.error() << "index " << v << " is out of range for dim "
                       << x.shape[axis],
             failure();
  }
  // A long index list into a wide constant: gathered at run time.
  if (!n.reserveFold(out))
    return false;
  std::vector<int64_t> xs = rowMajorStrides(x.shape),
                       is = rowMajorStrides(idx.shape);
  int64_t q = idx.shape.size();
  n.setOutput(0, gatherHost(x, out, [&](ArrayRef<int64_t> o) {
                int64_t flat = 0, ii = 0;
                for (int64_t d = 0; d < q; ++d)
                  ii += o[axis + d] * is[d];
                int64_t v = idx.getI(ii);
                if (v < 0)
                  v += x.shape[axis];
                for (int64_t d = 0; d < axis; ++d)
                  flat += o[d] * xs[d];
                flat += v * xs[axis];
                for (int64_t d = axis + 1; d < (int64_t)x.shape.size(); ++d)
                  flat += o[d - 1 + q] * xs[d];
                return flat;
              }));
  return true;
}

FailureOr<bool> foldTranspose(NodeImporter &n, StringRef) {
  const HostTensor &x = *n.in(0).constant;
  std::vector<int64_t> perm;
  if (std::optional<std::vector<int64_t>> p = n.attrInts("perm"))
    perm = *p;
  else
    for (int64_t d = x.shape.size() - 1; d >= 0; --d)
      perm.push_back(d);
  if (perm.size() != x.shape.size() || !n.reserveFold(x.shape))
    return false;
  std::vector<int64_t> out, xs = rowMajorStrides(x.shape);
  for (int64_t p : perm)
    out.push_back(x.shape[p]);
  n.setOutput(0, gatherHost(x, out, [&](ArrayRef<int64_t> o) {
                int64_t flat = 0;
                for (size_t d = 0; d < perm.size(); ++d)
                  flat += o[d] * xs[perm[d]];
                return flat;
              }));
  return true;
}

FailureOr<bool> foldConcat(NodeImporter &n, StringRef) {
  const HostTensor &x = *n.in(0).constant;
  int64_t axis = n.attrInt("axis", 0);
  if (failed(n.normalizeAxis(axis, x.shape.size())))
    return failure();
  HostTensor r;
  r.kind = x.kind;
  r.shape = x.shape;
  r.shape[axis] = 0;
  std::vector<const HostTensor *> parts;
  for (int64_t i = 0; i < n.numInputs(); ++i) {
    if (!n.hasInput(i))
      continue;
    const HostTensor &p = *n.in(i).constant;
    if (p.shape.size() != x.shape.size())
      return n.error() << "inputs differ in rank", failure();
    if (llvm::AddOverflow(r.shape[axis], p.shape[axis], r.shape[axis]))
      return false;
    parts.push_back(&p);
  }
  // One input listed many times makes a result without bound.
  if (!n.reserveFold(r.shape))
    return false;
  reserveElements(r, r.numel());
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= x.shape[d];
  // Row-major: each outer index takes one contiguous chunk of every part.
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor *p : parts) {
      int64_t chunk = p->numel() / std::max<int64_t>(outer, 1);
      for (int64_t e = 0; e < chunk; ++e) {
        if (p->isFloat())
          r.push(p->f[o * chunk + e]);
        else
          r.pushI(p->i[o * chunk + e]);
      }
    }
  }
  n.setOutput(0, std::move(r));
  return true;
}
} // namespace

FailureOr<bool> NodeImporter::tryFold(StringRef opType) {
  // Folds that read attributes or static shapes, not input values.
  FoldRule rule = llvm::StringSwitch<FoldRule>(opType)
                      .Case("Constant", foldConstant)
                      .Case("Shape", foldShape)
                      .Case("ConstantOfShape", foldConstantOfShape)
                      .Default(nullptr);
  if (rule)
    return rule(*this, opType);
  // Everything else folds only when every input is known. Reshape-like ops,
  // Slice and Expand fold inside their converters, which own the shape logic.
  for (size_t i = 0; i < inputs.size(); ++i)
    if (hasInput(i) && !in(i).isConstant())
      return false;
  if (inputs.empty())
    return false;
  rule = llvm::StringSwitch<FoldRule>(opType)
             .Cases({"Identity", "Dropout"}, foldIdentity)
             .Cases({"Add", "Sub", "Mul", "Div", "Pow"}, foldBinary)
             .Cases({"Equal", "Less", "Greater"}, foldBinary)
             .Case("Where", foldWhere)
             .Cases({"Neg", "Sqrt"}, foldUnary)
             .Case("Cast", foldCast)
             .Case("Range", foldRange)
             .Case("Gather", foldGather)
             .Case("Transpose", foldTranspose)
             .Case("Concat", foldConcat)
             .Default(nullptr);
  return rule ? rule(*this, opType) : FailureOr<bool>(false);
}

HostTensor autoshard::onnx_import::sliceHost(const HostTensor &x,
                                             ArrayRef<int64_t> offsets,
                                             ArrayRef<int64_t> sizes,
                                             ArrayRef<int64_t> strides) {
  std::vector<int64_t> xs = rowMajorStrides(x.shape);
  return gatherHost(x, std::vector<int64_t>(sizes.begin(), sizes.end()),
                    [&](ArrayRef<int64_t> o) {
                      int64_t flat = 0;
                      for (size_t d = 0; d < o.size(); ++d)
                        flat += (offsets[d] + o[d] * strides[d]) * xs[d];
                      return flat;
                    });
}

HostTensor autoshard::onnx_import::expandHost(const HostTensor &x,
                                              ArrayRef<int64_t> outShape) {
  std::vector<int64_t> strides = broadcastStrides(x.shape, outShape);
  return gatherHost(x, std::vector<int64_t>(outShape.begin(), outShape.end()),
                    [&](ArrayRef<int64_t> o) {
                      int64_t flat = 0;
                      for (size_t d = 0; d < o.size(); ++d)
                        flat += o[d] * strides[d];
                      return flat;
                    });
}
