//===- AxesRef.h - A read-only view of mesh axis indices --------*- C++ -*-===//
//
// DeviceMesh's group queries take their axes through this view so that a
// layout's inline axis lists, std::vectors and braced lists all pass without
// a copy (the runtime must not use llvm::ArrayRef, see InlineVector.h).
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_SUPPORT_AXESREF_H
#define AUTOSHARD_SUPPORT_AXESREF_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <type_traits>
#include <utility>

namespace autoshard {

class AxesRef {
public:
  AxesRef() = default;
  /// Any contiguous container of int64_t (std::vector, InlineVector). The
  /// view must not outlive it.
  template <typename C,
            typename = std::enable_if_t<std::is_same_v<
                decltype(std::declval<const C &>().data()), const int64_t *>>>
  AxesRef(const C &c) : ptr(c.data()), n(c.size()) {}
  AxesRef(const int64_t *data, size_t size) : ptr(data), n(size) {}
  /// Only for a call's arguments: the list dies with the full expression.
  AxesRef(std::initializer_list<int64_t> list)
      : ptr(std::data(list)), n(list.size()) {}

  const int64_t *begin() const { return ptr; }
  const int64_t *end() const { return ptr + n; }
  size_t size() const { return n; }
  bool empty() const { return n == 0; }
  int64_t operator[](size_t i) const { return ptr[i]; }

private:
  const int64_t *ptr = nullptr;
  size_t n = 0;
};

} // namespace autoshard

#endif // AUTOSHARD_SUPPORT_AXESREF_H
