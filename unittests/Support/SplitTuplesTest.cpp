//===- SplitTuplesTest.cpp - split tuples to named axes -------------------===//

#include "autoshard/Support/SplitTuples.h"

#include <gtest/gtest.h>

using namespace autoshard;

namespace {
TEST(SplitTuples, UniqueMapping) {
  DeviceMesh m({{"dp", 2}, {"mp", 4}});
  std::string err;
  TensorLayout a = layoutFromSplitCounts(m, {2, 1}, err);
  EXPECT_EQ(err, "");
  EXPECT_EQ(a.str(m), "[[dp], []]");
  TensorLayout b = layoutFromSplitCounts(m, {1, 4}, err);
  EXPECT_EQ(b.str(m), "[[], [mp]]");
  TensorLayout c = layoutFromSplitCounts(m, {8, 1}, err);
  EXPECT_EQ(c.str(m), "[[dp, mp], []]");
  TensorLayout d = layoutFromSplitCounts(m, {2, 4}, err);
  EXPECT_EQ(d.str(m), "[[dp], [mp]]");
}

TEST(SplitTuples, MeshOrderBreaksTies) {
  DeviceMesh m({{"x", 2}, {"y", 2}});
  std::string err;
  TensorLayout l = layoutFromSplitCounts(m, {2, 2}, err);
  EXPECT_EQ(err, "");
  EXPECT_EQ(l.str(m), "[[x], [y]]");
}

TEST(SplitTuples, AmbiguousAndImpossible) {
  DeviceMesh m({{"x", 2}, {"y", 2}});
  std::string err;
  layoutFromSplitCounts(m, {2, 1}, err);
  EXPECT_NE(err.find("ambiguous"), std::string::npos) << err;
  layoutFromSplitCounts(m, {3, 1}, err);
  EXPECT_NE(err.find("cannot be formed"), std::string::npos) << err;
  layoutFromSplitCounts(m, {4, 2}, err);
  EXPECT_NE(err.find("cannot be formed"), std::string::npos) << err;
  layoutFromSplitCounts(m, {0}, err);
  EXPECT_NE(err.find("positive"), std::string::npos) << err;
}
} // namespace
