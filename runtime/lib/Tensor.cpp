//===- Tensor.cpp - Runtime tensors ---------------------------------------===//

#include "autoshard/Runtime/Tensor.h"
#include "autoshard/Runtime/Half.h"

#include <cstdlib>
#include <cstring>

using namespace autoshard::rt;

int64_t autoshard::rt::getDTypeSize(DType type) {
  switch (type) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::I1:
    return 1;
  case DType::BF16:
  case DType::F16:
    return 2;
  }
  return 1;
}

bool autoshard::rt::isFloatDType(DType type) {
  return type == DType::F32 || type == DType::F64 || isHalfDType(type);
}

bool autoshard::rt::isHalfDType(DType type) {
  return type == DType::BF16 || type == DType::F16;
}

std::string_view autoshard::rt::stringifyDType(DType type) {
  switch (type) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::I1:
    return "i1";
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  }
  return "?";
}

std::optional<DType> autoshard::rt::parseDType(std::string_view name) {
  for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64, DType::I1,
                  DType::BF16, DType::F16})
    if (stringifyDType(t) == name)
      return t;
  return std::nullopt;
}

int64_t autoshard::rt::getNumElements(const Shape &shape) {
  // Zero dims are skipped while checking, so that the product of the others
  // fits as well: row-major strides are products of trailing dims and must
  // not wrap either ([0, 2^62, 2^62] has no elements but such strides).
  int64_t n = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0)
      throw Error("negative dimension in tensor shape " +
                  stringifyShape(shape));
    if (d == 0)
      empty = true;
    else if (__builtin_mul_overflow(n, d, &n))
      throw Error("tensor shape " + stringifyShape(shape) +
                  " has more elements than int64 can count");
  }
  return empty ? 0 : n;
}

int64_t autoshard::rt::getNumBytes(DType type, const Shape &shape) {
  int64_t bytes;
  if (__builtin_mul_overflow(getNumElements(shape), getDTypeSize(type),
                             &bytes))
    throw Error("tensor " + std::string(stringifyDType(type)) + "[" +
                stringifyShape(shape) +
                "] has more bytes than a buffer can hold (2^63)");
  return bytes;
}

Shape autoshard::rt::getStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::string autoshard::rt::stringifyShape(const Shape &shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

Buffer::Buffer(int64_t size) : bytes(size) {
  // Round up so aligned_alloc's size requirement holds; zero so padded
  // shards and fresh outputs start defined.
  size_t rounded = (static_cast<size_t>(size) + 63) / 64 * 64;
  data = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!data)
    throw Error("out of memory allocating " + std::to_string(size) + " bytes");
  std::memset(data, 0, rounded ? rounded : 64);
}

Buffer::~Buffer() {
  if (space == MemorySpace::Host)
    std::free(data);
}

Tensor::Tensor(DType type, Shape shape) : type(type), shape(std::move(shape)) {
  for (int64_t d : this->shape)
    if (d < 0)
      throw Error("negative dimension in tensor shape");
  buffer = std::make_shared<Buffer>(getBytes());
}

Tensor::Tensor(DType type, Shape shape, std::shared_ptr<Buffer> buffer)
    : type(type), shape(std::move(shape)), buffer(std::move(buffer)) {}

Tensor Tensor::reshaped(Shape newShape) const {
  if (rt::getNumElements(newShape) != getNumElements())
    throw Error("cannot reshape " + getTypeString() + " to " +
                stringifyShape(newShape));
  return Tensor(type, std::move(newShape), buffer);
}

Tensor Tensor::clone() const {
  Tensor copy(type, shape);
  std::memcpy(copy.getRawData(), getRawData(), getBytes());
  return copy;
}

double Tensor::getAsDouble(int64_t i) const {
  switch (type) {
  case DType::F32:
    return getData<float>()[i];
  case DType::F64:
    return getData<double>()[i];
  case DType::I32:
    return getData<int32_t>()[i];
  case DType::I64:
    return static_cast<double>(getData<int64_t>()[i]);
  case DType::I1:
    return getData<uint8_t>()[i];
  case DType::BF16:
    return bf16ToFloat(getData<uint16_t>()[i]);
  case DType::F16:
    return f16ToFloat(getData<uint16_t>()[i]);
  }
  return 0;
}

int64_t Tensor::getAsInt(int64_t i) const {
  switch (type) {
  case DType::F32:
    return static_cast<int64_t>(getData<float>()[i]);
  case DType::F64:
    return static_cast<int64_t>(getData<double>()[i]);
  case DType::I32:
    return getData<int32_t>()[i];
  case DType::I64:
    return getData<int64_t>()[i];
  case DType::I1:
    return getData<uint8_t>()[i];
  case DType::BF16:
  case DType::F16:
    return static_cast<int64_t>(getAsDouble(i));
  }
  return 0;
}

void Tensor::setFromDouble(int64_t i, double v) {
  switch (type) {
  case DType::F32:
    getData<float>()[i] = static_cast<float>(v);
    return;
  case DType::F64:
    getData<double>()[i] = v;
    return;
  case DType::I32:
    getData<int32_t>()[i] = static_cast<int32_t>(v);
    return;
  case DType::I64:
    getData<int64_t>()[i] = static_cast<int64_t>(v);
    return;
  case DType::I1:
    getData<uint8_t>()[i] = v != 0.0;
    return;
  case DType::BF16:
    getData<uint16_t>()[i] = doubleToBF16(v);
    return;
  case DType::F16:
    getData<uint16_t>()[i] = doubleToF16(v);
    return;
  }
}

void Tensor::setFromInt(int64_t i, int64_t v) {
  switch (type) {
  case DType::F32:
    getData<float>()[i] = static_cast<float>(v);
    return;
  case DType::F64:
    getData<double>()[i] = static_cast<double>(v);
    return;
  case DType::I32:
    getData<int32_t>()[i] = static_cast<int32_t>(v);
    return;
  case DType::I64:
    getData<int64_t>()[i] = v;
    return;
  case DType::I1:
    getData<uint8_t>()[i] = v != 0;
    return;
  case DType::BF16:
  case DType::F16:
    setFromDouble(i, static_cast<double>(v));
    return;
  }
}

std::string Tensor::getTypeString() const {
  return std::string(stringifyDType(type)) + "[" + stringifyShape(shape) + "]";
}
