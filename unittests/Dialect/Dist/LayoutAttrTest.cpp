//===- LayoutAttrTest.cpp - C++ API of #dist.layout -----------------------===//

#include "autoshard/Dialect/Dist/IR/DistDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace autoshard;

namespace {
struct LayoutAttrTest : ::testing::Test {
  LayoutAttrTest() { ctx.loadDialect<dist::DistDialect>(); }
  dist::LayoutAttr parse(StringRef text) {
    return dyn_cast_or_null<dist::LayoutAttr>(parseAttribute(text, &ctx));
  }
  MLIRContext ctx;
};

TEST_F(LayoutAttrTest, LocalShapeAndOffsets) {
  auto l = parse("#dist.layout<#dist.mesh<[dp = 2, mp = 4]>, [[dp], [mp]]>");
  ASSERT_TRUE(l);
  // Position 6 = (dp 1, mp 2).
  EXPECT_EQ(l.getLocalShape({8, 16}, 6), (SmallVector<int64_t>{4, 4}));
  EXPECT_EQ(l.getLocalOffsets({8, 16}, 6), (SmallVector<int64_t>{4, 8}));
  EXPECT_EQ(l.verifyForShape({8, 16}), "");
  EXPECT_NE(l.verifyForShape({8, 6}).find("not divisible"), std::string::npos);
}

TEST_F(LayoutAttrTest, RoundTripsThroughTensorLayout) {
  auto l = parse("#dist.layout<#dist.mesh<[x = 3, y = 2]>, "
                 "[[x] sizes(1, 2, 3), []] partial max [y]>");
  ASSERT_TRUE(l);
  TensorLayout t = l.toTensorLayout();
  EXPECT_EQ(t.partialKind, ReductionKind::Max);
  EXPECT_EQ(t.unevenSizes[0], (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(dist::LayoutAttr::get(l.getMesh(), t), l);
  EXPECT_EQ(l.getLocalOffsets({6, 4}, 4), (SmallVector<int64_t>{3, 0}));
}

TEST_F(LayoutAttrTest, MeshConversion) {
  DeviceMesh m({{"a", 2, 100.0, 2.0}, {"b", 4, 25.0, 5.0}}, {7, 6, 5, 4, 3, 2, 1, 0});
  auto attr = dist::MeshAttr::get(&ctx, m);
  EXPECT_EQ(attr.toDeviceMesh(), m);
  EXPECT_EQ(attr.toDeviceMesh().getAxis(1).bandwidthGBps, 25.0);
  EXPECT_EQ(attr.getAxisIndex("b"), 1);
  EXPECT_EQ(attr.getNumDevices(), 8);
}
} // namespace
