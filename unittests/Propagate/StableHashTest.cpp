//===- StableHashTest.cpp - Hashes of types and attributes across runs ----===//

#include "autoshard/Propagate/StableHash.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <set>

using namespace autoshard;
using namespace mlir;

namespace {
/// Builtin attributes of every kind the hasher reads parameters of, pairs
/// that differ in one parameter only, and kinds it prints instead.
const char *const kAttrs[] = {
    "1 : i32",
    "1 : i64",
    "2 : i64",
    "1 : ui64",
    "1.0 : f32",
    "1.0 : f64",
    "1.0 : bf16",
    "1.0 : f16",
    "\"1\"",
    "[1 : i64]",
    "[1 : i64, 2 : i64]",
    "[[1 : i64], [2 : i64]]",
    "{a = 1 : i64}",
    "{b = 1 : i64}",
    "array<i64: 1, 2>",
    "array<i32: 1, 2>",
    "array<i64: 2, 1>",
    "dense<1.0> : tensor<4xf32>",
    "dense<[1.0, 2.0]> : tensor<2xf32>",
    "dense<[2.0, 1.0]> : tensor<2xf32>",
    "affine_map<(d0, d1) -> (d0, d1)>",
    "affine_map<(d0, d1) -> (d1, d0)>",
    "affine_map<(d0, d1) -> (d0 * 2 + d1)>",
    "affine_map<(d0, d1) -> (d0 floordiv 2)>",
    "affine_map<(d0)[s0] -> (d0 + s0)>",
    "unit",
    "tensor<4x?xf32>",
    "tensor<?x4xf32>",
    "tensor<4x?xbf16>",
    "@sym",
    "@sym::@nested",
};

std::vector<uint64_t> hashAll(MLIRContext &ctx) {
  StableHasher hasher(&ctx);
  std::vector<uint64_t> hashes;
  for (const char *text : kAttrs) {
    Attribute attr = parseAttribute(text, &ctx);
    EXPECT_TRUE(attr) << text;
    if (auto type = dyn_cast_or_null<TypeAttr>(attr))
      hashes.push_back(hasher.hash(type.getValue()));
    else
      hashes.push_back(attr ? hasher.hash(attr) : 0);
  }
  return hashes;
}
} // namespace

// Node keys must not depend on where MLIR allocated an object: the same text
// in two contexts (at other addresses) hashes alike.
TEST(StableHashTest, SameInEveryContext) {
  MLIRContext first, second;
  // Move the second context's objects to other addresses.
  for (int i = 0; i < 100; ++i)
    (void)parseAttribute("[" + std::to_string(i) + " : i64]", &second);
  std::vector<uint64_t> a = hashAll(first), b = hashAll(second);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i], b[i]) << kAttrs[i];
}

TEST(StableHashTest, DifferentObjectsDiffer) {
  MLIRContext ctx;
  std::vector<uint64_t> hashes = hashAll(ctx);
  std::set<uint64_t> distinct(hashes.begin(), hashes.end());
  EXPECT_EQ(distinct.size(), hashes.size());
}
