//===- DeviceMeshTest.cpp - device id <-> mesh coordinate -----------------===//

#include "autoshard/Support/DeviceMesh.h"

#include <gtest/gtest.h>

using namespace autoshard;

namespace {
DeviceMesh mesh2x4() { return DeviceMesh({{"dp", 2}, {"mp", 4}}); }

TEST(DeviceMesh, CoordinatesAreRowMajor) {
  DeviceMesh m = mesh2x4();
  EXPECT_EQ(m.getNumDevices(), 8);
  EXPECT_EQ(m.getCoordinate(0), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(m.getCoordinate(5), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(m.getCoordinate(7), (std::vector<int64_t>{1, 3}));
  for (int64_t p = 0; p < 8; ++p)
    EXPECT_EQ(m.getPosition(m.getCoordinate(p)), p);
}

TEST(DeviceMesh, ExplicitDeviceIds) {
  DeviceMesh m({{"x", 2}, {"y", 2}}, {3, 2, 1, 0});
  EXPECT_EQ(m.validate(), "");
  EXPECT_EQ(m.getDeviceId(0), 3);
  EXPECT_EQ(m.getPositionOfDevice(1), 2);
  EXPECT_EQ(m.getPositionOfDevice(7), std::nullopt);
  EXPECT_EQ(mesh2x4().getPositionOfDevice(8), std::nullopt);
}

TEST(DeviceMesh, GroupsFollowListedAxisOrder) {
  DeviceMesh m = mesh2x4();
  // Devices sharing dp coordinate 1, along mp.
  EXPECT_EQ(m.getGroup(5, {1}), (std::vector<int64_t>{4, 5, 6, 7}));
  // Devices sharing mp coordinate 2, along dp.
  EXPECT_EQ(m.getGroup(2, {0}), (std::vector<int64_t>{2, 6}));
  // Both axes, mp major: position order differs from the mesh's.
  EXPECT_EQ(m.getGroup(0, {1, 0}),
            (std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(m.getIndexInGroup(5, {1, 0}), 3);
  EXPECT_EQ(m.getIndexInGroup(6, {0}), 1);
}

TEST(DeviceMesh, ParseCommandLineSpec) {
  std::string err;
  auto m = DeviceMesh::parse("dp=2,mp=4", err);
  ASSERT_TRUE(m) << err;
  EXPECT_EQ(*m, mesh2x4());
  EXPECT_FALSE(DeviceMesh::parse("dp=2,mp", err));
  EXPECT_NE(err.find("NAME=SIZE"), std::string::npos);
  EXPECT_FALSE(DeviceMesh::parse("dp=x", err));
  EXPECT_NE(err.find("non-integer"), std::string::npos);
  EXPECT_FALSE(DeviceMesh::parse("dp=2,dp=2", err));
  EXPECT_NE(err.find("twice"), std::string::npos);
  EXPECT_FALSE(DeviceMesh::parse("", err));
}

TEST(DeviceMesh, Validation) {
  EXPECT_NE(DeviceMesh({{"a", 2}, {"a", 2}}).validate().find("twice"),
            std::string::npos);
  EXPECT_NE(DeviceMesh({{"a", 0}}).validate().find("positive"),
            std::string::npos);
  EXPECT_NE(DeviceMesh({{"a", 2}}, {0}).validate().find("device ids"),
            std::string::npos);
  EXPECT_NE(DeviceMesh({{"a", 2}}, {1, 1}).validate().find("distinct"),
            std::string::npos);
}

// Issue 22: a device count past int64 wrapped (SIGFPE in the planner); a
// huge unused axis ran out of memory.
TEST(DeviceMesh, SizesAreBounded) {
  std::string err;
  EXPECT_FALSE(DeviceMesh::parse("dp=2,mp=2,a=4294967296,b=4294967296", err));
  EXPECT_NE(err.find("more than 1048576 devices"), std::string::npos) << err;
  EXPECT_FALSE(DeviceMesh::parse("dp=2,pp=4294967296", err));
  EXPECT_NE(err.find("on axis 'pp' alone"), std::string::npos) << err;
  EXPECT_FALSE(DeviceMesh::parse("a=99999999999999999999999", err));
  EXPECT_FALSE(DeviceMesh::parse("a=1024,b=1024,c=2", err));
  EXPECT_TRUE(DeviceMesh::parse("a=1024,b=1024", err)) << err;
}
} // namespace
