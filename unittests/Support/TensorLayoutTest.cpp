//===- TensorLayoutTest.cpp - shard shapes and offsets --------------------===//

#include "autoshard/Support/TensorLayout.h"

#include <gtest/gtest.h>

using namespace autoshard;

namespace {
DeviceMesh mesh2x4() { return DeviceMesh({{"dp", 2}, {"mp", 4}}); }

TEST(TensorLayout, EvenSplitOnTwoAxes) {
  DeviceMesh m = mesh2x4();
  TensorLayout l;
  l.dimAxes = {{0}, {1}};
  std::vector<int64_t> shape = {8, 16};
  EXPECT_EQ(l.validate(m, &shape), "");
  // Device 6 = (1, 2): rows 4..8, cols 8..12.
  EXPECT_EQ(l.getLocalShape(m, shape, m.getCoordinate(6)),
            (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(l.getLocalOffsets(m, shape, m.getCoordinate(6)),
            (std::vector<int64_t>{4, 8}));
}

TEST(TensorLayout, SeveralAxesOnOneDimAreMajorToMinor) {
  DeviceMesh m = mesh2x4();
  TensorLayout mpMajor, dpMajor;
  mpMajor.dimAxes = {{1, 0}};
  dpMajor.dimAxes = {{0, 1}};
  std::vector<int64_t> shape = {16};
  // Device 1 = (dp 0, mp 1).
  EXPECT_EQ(dpMajor.getLocalOffsets(m, shape, m.getCoordinate(1)),
            (std::vector<int64_t>{2}));
  EXPECT_EQ(mpMajor.getLocalOffsets(m, shape, m.getCoordinate(1)),
            (std::vector<int64_t>{4}));
  EXPECT_EQ(mpMajor.getLocalShape(m, shape, m.getCoordinate(1)),
            (std::vector<int64_t>{2}));
}

TEST(TensorLayout, UnevenSplit) {
  DeviceMesh m({{"x", 3}});
  TensorLayout l;
  l.dimAxes = {{0}, {}};
  l.unevenSizes = {{2, 5, 3}, {}};
  std::vector<int64_t> shape = {10, 4};
  EXPECT_EQ(l.validate(m, &shape), "");
  EXPECT_EQ(l.getLocalShape(m, shape, {1}), (std::vector<int64_t>{5, 4}));
  EXPECT_EQ(l.getLocalOffsets(m, shape, {2}), (std::vector<int64_t>{7, 0}));
  EXPECT_EQ(l.getMaxLocalShape(m, shape), (std::vector<int64_t>{5, 4}));
  std::vector<int64_t> wrong = {11, 4};
  EXPECT_NE(l.validate(m, &wrong).find("sum to 10"), std::string::npos);
}

TEST(TensorLayout, ReplicatedAndPartial) {
  DeviceMesh m = mesh2x4();
  TensorLayout r = TensorLayout::replicated(2);
  EXPECT_TRUE(r.isReplicated());
  std::vector<int64_t> shape = {3, 5};
  EXPECT_EQ(r.getLocalShape(m, shape, {1, 3}), shape);
  TensorLayout p = r;
  p.partialAxes = {1};
  EXPECT_FALSE(p.isReplicated());
  EXPECT_EQ(p.str(m), "[[], []] partial sum[mp]");
  EXPECT_NE(p, r);
}

TEST(TensorLayout, SameFieldsIsFinerThanEquality) {
  TensorLayout a;
  a.dimAxes = {{0}, {}};
  TensorLayout b = a;
  b.partialKind = ReductionKind::Max; // not partial: only the kind differs
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(sameFields(a, b, /*kindOnlyWhenPartial=*/false));
  EXPECT_TRUE(sameFields(a, b, /*kindOnlyWhenPartial=*/true));
  EXPECT_EQ(hashFields(a, true), hashFields(b, true));
  // Partial axes count in order (== compares them as a set).
  TensorLayout p = a, q = a;
  p.dimAxes = {{}, {}};
  q.dimAxes = {{}, {}};
  p.partialAxes = {0, 1};
  q.partialAxes = {1, 0};
  EXPECT_TRUE(p == q);
  EXPECT_FALSE(sameFields(p, q, true));
  // The kind of a partial layout always counts.
  TensorLayout r = p;
  r.partialKind = ReductionKind::Max;
  EXPECT_FALSE(sameFields(p, r, true));
  // Uneven lists as given: none and all-empty are told apart.
  TensorLayout u = a;
  u.unevenSizes = {{}, {}};
  EXPECT_TRUE(a == u);
  EXPECT_FALSE(sameFields(a, u, false));
  // Equal fields hash alike, whichever the flag.
  TensorLayout c = p;
  for (bool flag : {false, true}) {
    EXPECT_TRUE(sameFields(p, c, flag));
    EXPECT_EQ(hashFields(p, flag), hashFields(c, flag));
  }
}

TEST(TensorLayout, ValidationErrors) {
  DeviceMesh m = mesh2x4();
  std::vector<int64_t> shape = {6, 8};
  TensorLayout twice;
  twice.dimAxes = {{0}, {0}};
  EXPECT_NE(twice.validate(m).find("more than once"), std::string::npos);
  TensorLayout indivisible;
  indivisible.dimAxes = {{1}, {}};
  EXPECT_NE(indivisible.validate(m, &shape).find("not divisible"),
            std::string::npos);
  TensorLayout partialSplit;
  partialSplit.dimAxes = {{0}, {}};
  partialSplit.partialAxes = {0};
  EXPECT_NE(partialSplit.validate(m).find("partial axis and a split"),
            std::string::npos);
  TensorLayout rank = TensorLayout::replicated(3);
  EXPECT_NE(rank.validate(m, &shape).find("rank"), std::string::npos);
  TensorLayout unknown;
  unknown.dimAxes = {{5}, {}};
  EXPECT_NE(unknown.validate(m).find("not in mesh"), std::string::npos);
}
} // namespace
