//===- TensorTest.cpp - Element and byte counts of runtime shapes ---------===//
//
// rt::getNumElements, rt::getNumBytes and Tensor::getBytes are public API: a
// shape whose count passes int64 must be a one-line rt::Error, not a wrapped
// (small or negative) size that a buffer is then allocated with.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/Backend.h"
#include "autoshard/Runtime/Tensor.h"

#include "gtest/gtest.h"

#include <functional>
#include <limits>

using namespace autoshard::rt;

namespace {
/// The rt::Error message `f` throws ("" if none).
std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t k2p62 = int64_t(1) << 62;
} // namespace

TEST(TensorSizeTest, CountsThatFit) {
  EXPECT_EQ(getNumElements({}), 1);
  EXPECT_EQ(getNumElements({4, 8}), 32);
  EXPECT_EQ(getNumElements({kMax}), kMax);
  EXPECT_EQ(getNumElements({4, 0, 8}), 0);
  EXPECT_EQ(getNumBytes(DType::F32, {4, 8}), 128);
  EXPECT_EQ(getNumBytes(DType::I1, {kMax}), kMax);
  EXPECT_EQ(getNumBytes(DType::F64, {0, 7}), 0);
  EXPECT_EQ(Tensor(DType::BF16, {3, 5}).getBytes(), 30);
}

TEST(TensorSizeTest, ElementCountOverflowIsAnError) {
  // 2^62 * 4 wrapped to 0 before: a 0-byte buffer for 2^64 elements.
  EXPECT_EQ(errorOf([] { getNumElements({k2p62, 4}); }),
            "tensor shape 4611686018427387904x4 has more elements than int64 "
            "can count");
  EXPECT_NE(errorOf([] { getNumElements({kMax, 2}); }), "");
  EXPECT_NE(errorOf([] { getNumElements({65536, 65536, 65536, 65536}); }), "");
  // No elements, but its row-major strides would wrap.
  EXPECT_NE(errorOf([] { getNumElements({0, k2p62, 4}); }), "");
  EXPECT_EQ(errorOf([] { getNumElements({2, -3}); }),
            "negative dimension in tensor shape 2x-3");
}

TEST(TensorSizeTest, ByteCountOverflowIsAnError) {
  // 2^62 f32 elements fit an int64 count but not a byte size.
  EXPECT_EQ(errorOf([] { getNumBytes(DType::F32, {k2p62}); }),
            "tensor f32[4611686018427387904] has more bytes than a buffer can "
            "hold (2^63)");
  EXPECT_NE(errorOf([] { getNumBytes(DType::F16, {k2p62, 2}); }), "");
  EXPECT_EQ(getNumBytes(DType::I1, {k2p62}), k2p62);
}

TEST(TensorSizeTest, AllocationsOfWrappedSizesAreRefused) {
  EXPECT_NE(errorOf([] { Tensor t(DType::F32, {k2p62, 4}); }), "");
  EXPECT_NE(errorOf([] { Tensor t(DType::F64, {k2p62}); }), "");
  std::unique_ptr<Backend> cpu = createCpuBackend();
  EXPECT_EQ(errorOf([&] { cpu->allocateUninitialized(DType::F32, {k2p62}); }),
            "tensor f32[4611686018427387904] has more bytes than a buffer can "
            "hold (2^63)");
}
