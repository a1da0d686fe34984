//===- HostIO.cpp - .npy files, seeded inputs, shards ---------------------===//

#include "autoshard/Runtime/HostIO.h"
#include "autoshard/Runtime/Backend.h"
#include "autoshard/Runtime/Half.h"
#include "autoshard/Support/NpyHeader.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace autoshard;
using namespace autoshard::rt;

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

static std::string npyDescr(DType type) {
  switch (type) {
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::I1:
    return "|b1";
  case DType::F16:
    return "<f2";
  case DType::BF16: // numpy has no bf16: writeNpy widens it to f32
    return "<f4";
  }
  return "";
}

static Error npyError(const std::string &path, const std::string &why) {
  return Error("'" + path + "' is not a valid .npy file: " + why);
}

/// Opens a .npy file and reads its header; the stream is left at the data.
static NpyHeader openNpy(std::ifstream &file, const std::string &path) {
  file.open(path, std::ios::binary);
  if (!file)
    throw Error("cannot open '" + path + "': " + std::strerror(errno));
  auto bad = [&](const std::string &why) { return npyError(path, why); };
  char magic[8];
  if (!file.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw bad("missing the \\x93NUMPY magic");
  uint32_t headerLen = 0;
  if (magic[6] == 1) {
    unsigned char len[2];
    if (!file.read(reinterpret_cast<char *>(len), 2))
      throw bad("truncated header");
    headerLen = len[0] | (len[1] << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    unsigned char len[4];
    if (!file.read(reinterpret_cast<char *>(len), 4))
      throw bad("truncated header");
    headerLen = len[0] | (len[1] << 8) | (len[2] << 16) |
                (static_cast<uint32_t>(len[3]) << 24);
  } else {
    throw bad("unsupported format version " + std::to_string(magic[6]));
  }
  if (headerLen > (1u << 20))
    throw bad("header too long");
  std::string header(headerLen, '\0');
  if (!file.read(header.data(), headerLen))
    throw bad("truncated header");

  NpyHeaderDict dict;
  std::string err = parseNpyHeaderDict(header, dict);
  if (!err.empty())
    throw bad(err);
  const std::string &d = dict.descr;
  std::optional<DType> type;
  for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64, DType::I1,
                  DType::F16})
    if (d == npyDescr(t) || (t == DType::I1 && d == "<b1"))
      type = t;
  if (!type)
    throw Error("'" + path + "' has dtype '" + d +
                "'; supported: float16, float32, float64, int32, int64, bool "
                "(little endian)");
  if (dict.fortranOrder)
    throw Error("'" + path +
                "' is in Fortran order; save it in C order "
                "(numpy.ascontiguousarray)");
  Shape shape(dict.shape.begin(), dict.shape.end());
  return {*type, shape};
}

NpyHeader autoshard::rt::readNpyHeader(const std::string &path) {
  std::ifstream file;
  return openNpy(file, path);
}

Tensor autoshard::rt::readNpy(const std::string &path) {
  std::ifstream file;
  NpyHeader header = openNpy(file, path);
  auto bad = [&](const std::string &why) { return npyError(path, why); };
  // Check the data is there before allocating what the header claims.
  int64_t numel = 1;
  for (int64_t d : header.shape)
    numel *= d; // bounded by parseNpyHeaderDict
  std::streampos dataStart = file.tellg();
  file.seekg(0, std::ios::end);
  std::streamoff available = file.tellg() - dataStart;
  file.seekg(dataStart);
  if (available < numel * static_cast<int64_t>(getDTypeSize(header.type)))
    throw bad("data shorter than its header's shape needs (" +
              std::to_string(available) + " bytes)");
  Tensor t(header.type, header.shape);
  if (!file.read(static_cast<char *>(t.getRawData()), t.getBytes()))
    throw bad("data shorter than " + t.getTypeString() + " needs");
  if (header.type == DType::I1)
    for (int64_t i = 0; i < t.getNumElements(); ++i)
      t.getData<uint8_t>()[i] = t.getData<uint8_t>()[i] != 0;
  return t;
}

Tensor autoshard::rt::readNpy(const std::string &path, DType as) {
  Tensor t = readNpy(path);
  if (as != DType::BF16 || t.getDType() != DType::F32)
    return t;
  // numpy has no bfloat16: bf16 data comes as float32, rounded here.
  Tensor narrow(DType::BF16, t.getShape());
  const float *src = t.getData<float>();
  uint16_t *dst = narrow.getData<uint16_t>();
  for (int64_t i = 0, e = t.getNumElements(); i < e; ++i)
    dst[i] = floatToBF16(src[i]);
  return narrow;
}

void autoshard::rt::writeNpy(const std::string &path, const Tensor &tensor) {
  std::string shape = "(";
  for (int64_t d : tensor.getShape())
    shape += std::to_string(d) + ", ";
  if (tensor.getRank() > 1)
    shape.resize(shape.size() - 2);
  else if (tensor.getRank() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  if (tensor.getDType() == DType::BF16) {
    // Written as float32 (exact), since numpy has no bfloat16.
    Tensor wide(DType::F32, tensor.getShape());
    const uint16_t *src = tensor.getData<uint16_t>();
    for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i)
      wide.getData<float>()[i] = bf16ToFloat(src[i]);
    return writeNpy(path, wide);
  }
  std::string header = "{'descr': '" + npyDescr(tensor.getDType()) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n' is 64-aligned.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream file(path, std::ios::binary);
  if (!file)
    throw Error("cannot write '" + path + "': " + std::strerror(errno));
  file.write("\x93NUMPY\x01\x00", 8);
  char len[2] = {static_cast<char>(header.size() & 0xff),
                 static_cast<char>(header.size() >> 8)};
  file.write(len, 2);
  file.write(header.data(), header.size());
  file.write(static_cast<const char *>(tensor.getRawData()), tensor.getBytes());
  // A full disk shows up when the buffer is flushed: check the close too.
  file.close();
  if (!file)
    throw Error("failed writing '" + path + "': " + std::strerror(errno));
}

//===----------------------------------------------------------------------===//
// Seeded initialiser
//===----------------------------------------------------------------------===//

static uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Tensor autoshard::rt::makeSeededTensor(DType type, const Shape &shape,
                                       uint64_t seed, uint64_t key) {
  Tensor t(type, shape);
  uint64_t stream = splitmix(splitmix(seed) ^ (key * 0xd1b54a32d192ed03ULL));
  for (int64_t i = 0; i < t.getNumElements(); ++i) {
    uint64_t h = splitmix(stream ^ static_cast<uint64_t>(i));
    double v = static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0;
    if (isHalfDType(type)) // via f32, as the f32 program's input
      t.setFromDouble(i, static_cast<float>(v));
    else if (isFloatDType(type))
      t.setFromDouble(i, v);
    else if (type == DType::I1)
      t.setFromInt(i, h & 1);
    else
      t.setFromInt(i, static_cast<int64_t>(h % 8));
  }
  return t;
}

//===----------------------------------------------------------------------===//
// Shards
//===----------------------------------------------------------------------===//

static std::unique_ptr<Backend> &hostBackend() {
  static std::unique_ptr<Backend> backend = createCpuBackend();
  return backend;
}

Tensor autoshard::rt::cutShard(const Tensor &global, const DeviceMesh &mesh,
                               const TensorLayout &layout, int64_t pos,
                               const Shape &localShape) {
  std::string err = layout.validate(mesh, &global.getShape());
  if (!err.empty())
    throw Error("layout " + layout.str(mesh) + " does not fit " +
                global.getTypeString() + ": " + err);
  std::vector<int64_t> coord = mesh.getCoordinate(pos);
  Shape shape = layout.getLocalShape(mesh, global.getShape(), coord);
  std::vector<int64_t> offsets =
      layout.getLocalOffsets(mesh, global.getShape(), coord);
  if (static_cast<int64_t>(localShape.size()) != global.getRank())
    throw Error("shard of " + global.getTypeString() + " has rank " +
                std::to_string(localShape.size()));
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] > localShape[d])
      throw Error("the program's local type " + stringifyShape(localShape) +
                  " is smaller than the shard " + stringifyShape(shape) +
                  " of " + global.getTypeString() + " under layout " +
                  layout.str(mesh));
  Backend &b = *hostBackend();
  Tensor piece(global.getDType(), shape);
  std::vector<int64_t> ones(shape.size(), 1), zeros(shape.size(), 0);
  b.extractSlice(global, piece, offsets, shape, ones);
  Tensor local(global.getDType(), localShape);
  if (layout.isPartial() &&
      mesh.getIndexInGroup(pos, layout.partialAxes) != 0 &&
      layout.partialKind != ReductionKind::Max &&
      layout.partialKind != ReductionKind::Min) {
    if (layout.partialKind == ReductionKind::Product) {
      Tensor one(global.getDType(), {});
      one.setFromInt(0, 1);
      b.fill(local, one);
    }
    return local;
  }
  b.insertSlice(piece, local, zeros, shape, ones);
  return local;
}

Tensor autoshard::rt::assembleGlobal(const std::vector<Tensor> &locals,
                                     const DeviceMesh &mesh,
                                     const TensorLayout &layout,
                                     const Shape &globalShape) {
  int64_t numDevices = mesh.getNumDevices();
  if (static_cast<int64_t>(locals.size()) != numDevices || locals.empty())
    throw Error("assemble: expected one local tensor per mesh position");
  std::string err = layout.validate(mesh, &globalShape);
  if (!err.empty())
    throw Error("assemble: " + err);
  DType type = locals[0].getDType();
  Tensor global(type, globalShape);
  std::vector<bool> used(mesh.getNumAxes(), false);
  for (int64_t a : layout.getSplitAxes())
    used[a] = true;
  for (int64_t a : layout.partialAxes)
    used[a] = true;
  Backend &b = *hostBackend();
  // Replicas (positions differing only on unused axes) hold equal data: take
  // the one at coordinate 0 there. Partial terms: the first term is written,
  // the others combined into it.
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t pos = 0; pos < numDevices; ++pos) {
      std::vector<int64_t> coord = mesh.getCoordinate(pos);
      bool representative = true;
      for (int64_t a = 0; a < mesh.getNumAxes(); ++a)
        if (!used[a] && coord[a] != 0)
          representative = false;
      if (!representative)
        continue;
      bool first = !layout.isPartial() ||
                   mesh.getIndexInGroup(pos, layout.partialAxes) == 0;
      if (first != (pass == 0))
        continue;
      const Tensor &local = locals[pos];
      if (local.getDType() != type)
        throw Error("assemble: ranks returned different element types");
      Shape shape = layout.getLocalShape(mesh, globalShape, coord);
      std::vector<int64_t> offsets =
          layout.getLocalOffsets(mesh, globalShape, coord);
      std::vector<int64_t> ones(shape.size(), 1), zeros(shape.size(), 0);
      if (local.getRank() != static_cast<int64_t>(shape.size()))
        throw Error("assemble: local result " + local.getTypeString() +
                    " does not match the layout's rank");
      Tensor piece(type, shape);
      b.extractSlice(local, piece, zeros, shape, ones);
      if (!first) {
        Tensor current(type, shape);
        b.extractSlice(global, current, offsets, shape, ones);
        b.accumulate(current, piece, layout.partialKind);
        piece = current;
      }
      b.insertSlice(piece, global, offsets, shape, ones);
    }
  return global;
}

std::string autoshard::rt::compareTensors(const Tensor &a, const Tensor &b,
                                          double rtol, double atol,
                                          double &maxAbsErr) {
  maxAbsErr = 0;
  if (a.getDType() != b.getDType() || a.getShape() != b.getShape())
    return "type mismatch: " + a.getTypeString() + " vs " + b.getTypeString();
  std::string first;
  for (int64_t i = 0; i < a.getNumElements(); ++i) {
    double x = a.getAsDouble(i), y = b.getAsDouble(i);
    // NaN matches NaN, and equal values (the same inf too) match.
    if ((std::isnan(x) && std::isnan(y)) || x == y)
      continue;
    double err = std::fabs(x - y);
    if (std::isnan(err))
      err = INFINITY;
    maxAbsErr = std::max(maxAbsErr, err);
    // Otherwise a non-finite value on either side is a mismatch: the
    // tolerance atol + rtol * |inf| would accept anything.
    bool close = std::isfinite(x) && std::isfinite(y) &&
                 err <= atol + rtol * std::fabs(y);
    if (first.empty() && !close) {
      std::ostringstream os;
      os.precision(9);
      os << "mismatch at flat index " << i << ": " << x << " vs " << y
         << " (|diff| " << err << ")";
      first = os.str();
    }
  }
  return first;
}
