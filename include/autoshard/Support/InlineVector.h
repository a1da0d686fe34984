//===- InlineVector.h - A vector with inline storage ------------*- C++ -*-===//
//
// A std::vector-like container that keeps up to N elements inside the object
// and only allocates beyond that. TensorLayout's axis lists are nearly always
// a handful of elements, and the propagation pass creates and destroys
// hundreds of thousands of layouts, so their mallocs dominate. This is our own
// (rather than llvm::SmallVector) because lib/Support is also linked by the
// MLIR-free runtime, which must not depend on libLLVM. It implements only the
// std::vector subset the code base uses.
//
// The heap pointer shares its bytes with the inline elements (a buffer on
// the heap always has more room than N, so `cap == N` tells the two apart):
// a layout is mostly these lists, and the propagation pass keeps thousands
// of layouts, so every byte counts in the memory it touches.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_SUPPORT_INLINEVECTOR_H
#define AUTOSHARD_SUPPORT_INLINEVECTOR_H

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace autoshard {

template <typename T, unsigned N> class InlineVector {
  static_assert(N > 0, "InlineVector needs some inline capacity");

  template <typename It>
  using RequireInputIterator = std::enable_if_t<std::is_convertible_v<
      typename std::iterator_traits<It>::iterator_category,
      std::input_iterator_tag>>;

public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T &;
  using const_reference = const T &;
  using pointer = T *;
  using const_pointer = const T *;
  using iterator = T *;
  using const_iterator = const T *;

  InlineVector() noexcept = default;
  explicit InlineVector(size_t n) { resize(n); }
  InlineVector(size_t n, const T &value) { assign(n, value); }
  InlineVector(std::initializer_list<T> init) {
    append(init.begin(), init.end());
  }
  template <typename It, typename = RequireInputIterator<It>>
  InlineVector(It first, It last) {
    append(first, last);
  }
  InlineVector(const InlineVector &other) {
    append(other.begin(), other.end());
  }
  InlineVector(InlineVector &&other) noexcept { takeFrom(other); }
  ~InlineVector() { release(); }

  InlineVector &operator=(const InlineVector &other) {
    if (this != &other)
      assign(other.begin(), other.end());
    return *this;
  }
  InlineVector &operator=(InlineVector &&other) noexcept {
    if (this != &other) {
      release();
      resetToInline();
      takeFrom(other);
    }
    return *this;
  }
  InlineVector &operator=(std::initializer_list<T> init) {
    assign(init.begin(), init.end());
    return *this;
  }

  void assign(size_t n, const T &value) {
    // `value` may live in this vector: copy it before clearing.
    T copy(value);
    clear();
    reserve(n);
    std::uninitialized_fill_n(data(), n, copy);
    sz = static_cast<uint32_t>(n);
  }
  template <typename It, typename = RequireInputIterator<It>>
  void assign(It first, It last) {
    clear();
    append(first, last);
  }
  void assign(std::initializer_list<T> init) {
    assign(init.begin(), init.end());
  }

  iterator begin() { return data(); }
  const_iterator begin() const { return data(); }
  iterator end() { return data() + sz; }
  const_iterator end() const { return data() + sz; }
  T *data() { return cap == N ? inlineData() : heap; }
  const T *data() const { return cap == N ? inlineData() : heap; }
  size_t size() const { return sz; }
  bool empty() const { return sz == 0; }
  size_t capacity() const { return cap; }
  /// Whether the elements live in the object's own storage (no heap).
  bool isInline() const { return cap == N; }

  T &operator[](size_t i) {
    assert(i < sz && "InlineVector index out of range");
    return data()[i];
  }
  const T &operator[](size_t i) const {
    assert(i < sz && "InlineVector index out of range");
    return data()[i];
  }
  T &front() { return (*this)[0]; }
  const T &front() const { return (*this)[0]; }
  T &back() { return (*this)[sz - 1]; }
  const T &back() const { return (*this)[sz - 1]; }

  void reserve(size_t n) {
    if (n > cap)
      grow(n);
  }
  void push_back(const T &value) { emplace_back(value); }
  void push_back(T &&value) { emplace_back(std::move(value)); }
  template <typename... Args> T &emplace_back(Args &&...args) {
    if (sz < cap) {
      ::new (static_cast<void *>(data() + sz)) T(std::forward<Args>(args)...);
    } else {
      // Construct the new element first: the arguments may refer to elements
      // of the old buffer.
      size_t newCap = nextCapacity(sz + 1);
      T *fresh = allocate(newCap);
      ::new (static_cast<void *>(fresh + sz)) T(std::forward<Args>(args)...);
      moveToBuffer(fresh, newCap);
    }
    return data()[sz++];
  }
  void pop_back() {
    assert(sz > 0 && "pop_back on an empty InlineVector");
    data()[--sz].~T();
  }
  void clear() {
    std::destroy(data(), data() + sz);
    sz = 0;
  }
  void resize(size_t n) {
    if (n < sz) {
      std::destroy(data() + n, data() + sz);
    } else if (n > sz) {
      reserve(n);
      std::uninitialized_value_construct(data() + sz, data() + n);
    }
    sz = static_cast<uint32_t>(n);
  }
  void resize(size_t n, const T &value) {
    if (n <= sz) {
      resize(n);
      return;
    }
    T copy(value);
    reserve(n);
    std::uninitialized_fill(data() + sz, data() + n, copy);
    sz = static_cast<uint32_t>(n);
  }

  template <typename It, typename = RequireInputIterator<It>>
  iterator insert(const_iterator pos, It first, It last) {
    size_t index = pos - data();
    if (index == sz) {
      append(first, last);
      return data() + index;
    }
    // Copy the range first: it may come from this vector, whose elements are
    // about to move.
    InlineVector tail(first, last);
    size_t n = tail.size();
    if (n == 0)
      return data() + index;
    size_t oldSize = sz;
    resize(oldSize + n);
    T *p = data();
    std::move_backward(p + index, p + oldSize, p + oldSize + n);
    std::move(tail.begin(), tail.end(), data() + index);
    return data() + index;
  }
  iterator insert(const_iterator pos, std::initializer_list<T> init) {
    return insert(pos, init.begin(), init.end());
  }
  iterator insert(const_iterator pos, const T &value) {
    size_t index = pos - data();
    if (index == sz) {
      emplace_back(value);
      return data() + index;
    }
    T copy(value);
    emplace_back(std::move(back()));
    std::move_backward(data() + index, data() + sz - 2, data() + sz - 1);
    data()[index] = std::move(copy);
    return data() + index;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    T *p = data();
    T *b = p + (first - p);
    T *e = p + (last - p);
    T *newEnd = std::move(e, p + sz, b);
    std::destroy(newEnd, p + sz);
    sz = static_cast<uint32_t>(newEnd - p);
    return b;
  }

  /// A std::vector copy, for interfaces that take one.
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

  friend bool operator==(const InlineVector &a, const InlineVector &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const InlineVector &a, const InlineVector &b) {
    return !(a == b);
  }
  friend bool operator<(const InlineVector &a, const InlineVector &b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const InlineVector &a, const std::vector<T> &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const std::vector<T> &a, const InlineVector &b) {
    return b == a;
  }
  friend bool operator!=(const InlineVector &a, const std::vector<T> &b) {
    return !(a == b);
  }
  friend bool operator!=(const std::vector<T> &a, const InlineVector &b) {
    return !(b == a);
  }

private:
  T *inlineData() { return reinterpret_cast<T *>(storage); }
  const T *inlineData() const { return reinterpret_cast<const T *>(storage); }

  static T *allocate(size_t n) {
    return static_cast<T *>(::operator new(n * sizeof(T)));
  }
  size_t nextCapacity(size_t needed) const {
    return std::max<size_t>(needed, 2 * static_cast<size_t>(cap));
  }
  void grow(size_t needed) {
    size_t newCap = nextCapacity(needed);
    moveToBuffer(allocate(newCap), newCap);
  }
  /// Moves the elements to `fresh` (a heap buffer of `newCap`) and frees the
  /// old heap buffer, if any.
  void moveToBuffer(T *fresh, size_t newCap) {
    T *old = data();
    std::uninitialized_move(old, old + sz, fresh);
    std::destroy(old, old + sz);
    if (!isInline())
      ::operator delete(old);
    heap = fresh;
    cap = static_cast<uint32_t>(newCap);
  }
  template <typename It> void append(It first, It last) {
    if constexpr (std::is_convertible_v<
                      typename std::iterator_traits<It>::iterator_category,
                      std::forward_iterator_tag>) {
      reserve(sz + static_cast<size_t>(std::distance(first, last)));
      T *out = std::uninitialized_copy(first, last, data() + sz);
      sz = static_cast<uint32_t>(out - data());
    } else {
      for (; first != last; ++first)
        emplace_back(*first);
    }
  }
  /// Destroys the elements and frees a heap buffer; leaves the vector in no
  /// valid state (resetToInline() makes it one).
  void release() {
    T *p = data();
    std::destroy(p, p + sz);
    if (!isInline())
      ::operator delete(p);
  }
  void resetToInline() {
    sz = 0;
    cap = N;
  }
  /// Takes `other`'s elements (its heap buffer when it has one) and leaves it
  /// empty. `*this` must be empty and inline.
  void takeFrom(InlineVector &other) {
    if (!other.isInline()) {
      heap = other.heap;
      sz = other.sz;
      cap = other.cap;
      other.resetToInline();
      return;
    }
    std::uninitialized_move(other.inlineData(), other.inlineData() + other.sz,
                            inlineData());
    sz = other.sz;
    other.clear();
  }

  /// The elements while cap == N; else `heap` holds them.
  union {
    T *heap;
    alignas(T) unsigned char storage[N * sizeof(T)];
  };
  uint32_t sz = 0;
  uint32_t cap = N;
};

} // namespace autoshard

#endif // AUTOSHARD_SUPPORT_INLINEVECTOR_H
