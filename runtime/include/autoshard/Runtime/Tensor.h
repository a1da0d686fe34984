//===- Tensor.h - Runtime tensors and errors --------------------*- C++ -*-===//
//
// A dense, row-major tensor of one of the runtime's element types. Storage is
// reference counted so reshapes and values passed through unchanged share it;
// kernels never write into a buffer that another live value still shares (the
// executor checks before reusing one in place).
//
// The runtime reports every failure (bad input file, wrong shape, unsupported
// plan, failing collective) by throwing rt::Error with one clear line; the
// embedding program catches it (autoshard-run turns it into an MPI abort).
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_TENSOR_H
#define AUTOSHARD_RUNTIME_TENSOR_H

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace autoshard::rt {

/// One error line; what() is the message without a prefix.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

/// Element types. I1 is stored as one byte (0 or 1), as numpy's bool. BF16
/// and F16 are stored as their 16-bit patterns (Half.h converts) and are
/// computed in f32. New types go at the end: plan files store the numbers.
enum class DType : uint8_t { F32, F64, I32, I64, I1, BF16, F16 };

int64_t getDTypeSize(DType type);
/// F32, F64, BF16, F16.
bool isFloatDType(DType type);
/// BF16, F16: stored narrow, computed in f32.
bool isHalfDType(DType type);
/// "f32", "f64", "i32", "i64", "i1", "bf16", "f16".
std::string_view stringifyDType(DType type);
std::optional<DType> parseDType(std::string_view name);

using Shape = std::vector<int64_t>;
/// The product of the dims; throws Error for a negative dim or a product
/// that passes int64 (the lowering and the plan reader refuse such shapes
/// first, but this is public API).
int64_t getNumElements(const Shape &shape);
/// getNumElements times the element size, with the same checks.
int64_t getNumBytes(DType type, const Shape &shape);
/// Row-major element strides of a shape.
Shape getStrides(const Shape &shape);
/// "4x8" ("scalar" for rank 0).
std::string stringifyShape(const Shape &shape);

/// Where a buffer lives; kernels of a backend only touch its own memory.
enum class MemorySpace : uint8_t { Host, Device };

/// A raw allocation. Backends other than the CPU one subclass it to free
/// device memory.
class Buffer {
public:
  Buffer() = default;
  /// A zero-filled host allocation of `bytes` bytes (64-byte aligned).
  explicit Buffer(int64_t bytes);
  virtual ~Buffer();
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;

  void *getData() const { return data; }
  int64_t getBytes() const { return bytes; }
  MemorySpace getSpace() const { return space; }

protected:
  void *data = nullptr;
  int64_t bytes = 0;
  MemorySpace space = MemorySpace::Host;
};

class Tensor {
public:
  Tensor() = default;
  /// A zero-filled host tensor.
  Tensor(DType type, Shape shape);
  Tensor(DType type, Shape shape, std::shared_ptr<Buffer> buffer);

  bool isNull() const { return !buffer; }
  DType getDType() const { return type; }
  const Shape &getShape() const { return shape; }
  int64_t getRank() const { return static_cast<int64_t>(shape.size()); }
  int64_t getDim(int64_t i) const { return shape[i]; }
  int64_t getNumElements() const { return rt::getNumElements(shape); }
  int64_t getBytes() const { return rt::getNumBytes(type, shape); }
  MemorySpace getSpace() const { return buffer->getSpace(); }
  const std::shared_ptr<Buffer> &getBuffer() const { return buffer; }
  /// True when no other tensor shares the storage.
  bool isUnique() const { return buffer.use_count() == 1; }

  void *getRawData() const { return buffer->getData(); }
  template <typename T> T *getData() const {
    return static_cast<T *>(buffer->getData());
  }

  /// The same storage seen with another shape of equal element count.
  Tensor reshaped(Shape newShape) const;
  /// A deep host copy.
  Tensor clone() const;

  /// Element `i` (row-major) converted to double / int64 (host only).
  double getAsDouble(int64_t i) const;
  int64_t getAsInt(int64_t i) const;
  void setFromDouble(int64_t i, double v);
  void setFromInt(int64_t i, int64_t v);

  /// "f32[4x8]".
  std::string getTypeString() const;

private:
  DType type = DType::F32;
  Shape shape;
  std::shared_ptr<Buffer> buffer;
};

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_TENSOR_H
