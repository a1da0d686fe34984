//===- HostIOTest.cpp - .npy, seeded inputs, shards -----------------------===//

#include "autoshard/Runtime/HostIO.h"
#include "autoshard/Runtime/Half.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace autoshard;
using namespace autoshard::rt;

namespace {
std::string tempPath(const std::string &name) {
  return "/tmp/autoshard-rt-" + std::to_string(getpid()) + "-" + name;
}

void writeRaw(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string npyHeader(const std::string &dict) {
  std::string h = dict;
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h;
}

DeviceMesh mesh2x2() {
  return DeviceMesh({MeshAxis{"dp", 2}, MeshAxis{"mp", 2}});
}
} // namespace

TEST(NpyTest, RoundTripsEveryDType) {
  for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64, DType::I1,
                  DType::F16, DType::BF16})
    for (Shape s : {Shape{}, Shape{5}, Shape{2, 3, 4}, Shape{0, 3}}) {
      Tensor x = makeSeededTensor(t, s, 3, 1);
      std::string path = tempPath("rt.npy");
      writeNpy(path, x);
      Tensor y = readNpy(path, t);
      EXPECT_EQ(y.getDType(), t);
      EXPECT_EQ(y.getShape(), s);
      double err;
      EXPECT_EQ(compareTensors(x, y, 0, 0, err), "");
      std::remove(path.c_str());
    }
}

// f16 is numpy's '<f2', bit for bit; bf16, which numpy lacks, is written
// as float32 (exact) and read back from float32 rounding to nearest even.
TEST(NpyTest, HalfPrecisionFiles) {
  std::string path = tempPath("f16.npy");
  // What numpy.save writes for np.array([1, -2.5, 65504, 6e-8], np.float16).
  writeRaw(path, npyHeader("{'descr': '<f2', 'fortran_order': False, "
                           "'shape': (4,), }") +
                     std::string("\x00\x3c\x00\xc1\xff\x7b\x01\x00", 8));
  Tensor h = readNpy(path);
  ASSERT_EQ(h.getTypeString(), "f16[4]");
  EXPECT_EQ(h.getAsDouble(0), 1.0);
  EXPECT_EQ(h.getAsDouble(1), -2.5);
  EXPECT_EQ(h.getAsDouble(2), 65504.0);
  EXPECT_EQ(h.getAsDouble(3), std::ldexp(1.0, -24));
  writeNpy(path, h);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(bytes.find("'descr': '<f2'"), std::string::npos);
  EXPECT_EQ(bytes.substr(bytes.size() - 8),
            std::string("\x00\x3c\x00\xc1\xff\x7b\x01\x00", 8));

  // bf16 out: float32 holding the same values.
  Tensor b(DType::BF16, {3});
  b.getData<uint16_t>()[0] = 0x3f81; // 1 + 2^-7
  b.getData<uint16_t>()[1] = 0xff80; // -inf
  b.getData<uint16_t>()[2] = 0x0001; // subnormal 2^-133
  writeNpy(path, b);
  Tensor wide = readNpy(path);
  ASSERT_EQ(wide.getTypeString(), "f32[3]");
  EXPECT_EQ(wide.getData<float>()[0], 1.0f + 0x1p-7f);
  EXPECT_EQ(wide.getData<float>()[1], -INFINITY);
  EXPECT_EQ(wide.getData<float>()[2], 0x1p-133f);
  // bf16 in: float32 rounded to nearest even (1 + 2^-8 and 1 + 3 * 2^-8
  // are ties).
  Tensor f(DType::F32, {3});
  f.getData<float>()[0] = 1.0f + 0x1p-8f;
  f.getData<float>()[1] = 1.0f + 0x3p-8f;
  f.getData<float>()[2] = -1.0f - 0x1.2p-8f;
  writeNpy(path, f);
  Tensor narrow = readNpy(path, DType::BF16);
  ASSERT_EQ(narrow.getTypeString(), "bf16[3]");
  EXPECT_EQ(narrow.getData<uint16_t>()[0], 0x3f80);
  EXPECT_EQ(narrow.getData<uint16_t>()[1], 0x3f82);
  EXPECT_EQ(narrow.getData<uint16_t>()[2], 0xbf81);
  // Other types are returned as they are, for the caller to reject.
  EXPECT_EQ(readNpy(path, DType::F16).getDType(), DType::F32);
  std::remove(path.c_str());
}

/// Reading `path` fails with an error that contains `what`.
static void expectReadError(const std::string &path, const std::string &what) {
  try {
    readNpy(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(NpyTest, ReportsBadFiles) {
  auto expectError = expectReadError;
  expectError(tempPath("does-not-exist.npy"), "cannot open");
  std::string garbage = tempPath("garbage.npy");
  writeRaw(garbage, "hello world, not numpy");
  expectError(garbage, "not a valid .npy file");
  std::string fortran = tempPath("fortran.npy");
  writeRaw(fortran, npyHeader("{'descr': '<f4', 'fortran_order': True, "
                              "'shape': (2, 2), }") +
                        std::string(16, '\0'));
  expectError(fortran, "Fortran order");
  std::string complex = tempPath("complex.npy");
  writeRaw(complex, npyHeader("{'descr': '<c8', 'fortran_order': False, "
                              "'shape': (2,), }") +
                        std::string(16, '\0'));
  expectError(complex, "dtype '<c8'");
  std::string bigEndian = tempPath("be.npy");
  writeRaw(bigEndian, npyHeader("{'descr': '>f4', 'fortran_order': False, "
                                "'shape': (2,), }") +
                          std::string(8, '\0'));
  expectError(bigEndian, "dtype '>f4'");
  std::string truncated = tempPath("truncated.npy");
  writeRaw(truncated, npyHeader("{'descr': '<f8', 'fortran_order': False, "
                                "'shape': (3, 3), }") +
                          std::string(8, '\0'));
  expectError(truncated, "data shorter");
  for (const std::string &p :
       {garbage, fortran, complex, bigEndian, truncated})
    std::remove(p.c_str());
}

// Issue 22: the header is a dict, not a string to search; sizes that wrap.
TEST(NpyTest, ParsesTheHeaderAsADict) {
  auto expectError = [](const std::string &header, size_t dataBytes,
                        const std::string &what) {
    std::string path = tempPath("header.npy");
    writeRaw(path, npyHeader(header) + std::string(dataBytes, '\0'));
    expectReadError(path, what);
    std::remove(path.c_str());
  };
  // A shape hidden in another entry's string is not the shape (numpy
  // rejects the extra key).
  expectError("{'note': \"'shape': (8, 16)\", 'descr': '<f4', "
              "'fortran_order': False, 'shape': (4, 16), }",
              4 * 16 * 4, "unexpected key 'note'");
  expectError("{'descr': '<f4', 'shape': (2,), }", 8, "lacks 'fortran_order'");
  expectError("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", 8,
              "not a tuple");
  expectError("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8,
              "non-negative integers");
  expectError("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", 8,
              "True or False");
  expectError("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
              "'shape': (2,), }",
              8, "twice");
  expectError("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", 8,
              "after the header dict");
  // 2^62 x 4 elements wraps to 0 in int64.
  expectError("{'descr': '<f4', 'fortran_order': False, "
              "'shape': (4611686018427387904, 4), }",
              0, "too large");
  // A valid but huge shape without its data: an error, not an allocation.
  expectError("{'descr': '<f4', 'fortran_order': False, "
              "'shape': (1000000000, 1000), }",
              16, "data shorter");
  // Double quotes, no trailing comma, no spaces are fine.
  std::string path = tempPath("ok.npy");
  writeRaw(path, npyHeader("{\"shape\":(3,),\"fortran_order\":False,"
                           "\"descr\":\"<f4\"}") +
                     std::string(12, '\0'));
  EXPECT_EQ(readNpy(path).getShape(), Shape({3}));
  std::remove(path.c_str());
}

TEST(NpyTest, ReportsAFullDisk) {
  if (!std::ifstream("/dev/full"))
    GTEST_SKIP() << "no /dev/full";
  Tensor t(DType::F32, {4});
  try {
    writeNpy("/dev/full", t);
    ADD_FAILURE() << "writing to /dev/full succeeded";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("failed writing"), std::string::npos)
        << e.what();
  }
}

TEST(SeededTest, DeterministicAndKeyed) {
  Tensor a = makeSeededTensor(DType::F32, {64}, 5, 0);
  Tensor b = makeSeededTensor(DType::F32, {64}, 5, 0);
  Tensor c = makeSeededTensor(DType::F32, {64}, 5, 1);
  Tensor d = makeSeededTensor(DType::F32, {64}, 6, 0);
  double err;
  EXPECT_EQ(compareTensors(a, b, 0, 0, err), "");
  EXPECT_NE(compareTensors(a, c, 0, 0, err), "");
  EXPECT_NE(compareTensors(a, d, 0, 0, err), "");
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_GE(a.getAsDouble(i), -1.0);
    EXPECT_LT(a.getAsDouble(i), 1.0);
  }
  Tensor ints = makeSeededTensor(DType::I64, {64}, 5, 0);
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_GE(ints.getAsInt(i), 0);
    EXPECT_LT(ints.getAsInt(i), 8);
  }
}

// A bf16/f16 input is its f32 program's input rounded to nearest even.
TEST(SeededTest, HalfInputsAreTheF32OnesRounded) {
  Tensor f = makeSeededTensor(DType::F32, {4096}, 5, 2);
  Tensor b = makeSeededTensor(DType::BF16, {4096}, 5, 2);
  Tensor h = makeSeededTensor(DType::F16, {4096}, 5, 2);
  int differ = 0;
  for (int64_t i = 0; i < 4096; ++i) {
    float v = f.getData<float>()[i];
    ASSERT_EQ(b.getData<uint16_t>()[i], floatToBF16(v)) << i;
    ASSERT_EQ(h.getData<uint16_t>()[i], floatToF16(v)) << i;
    differ += b.getAsDouble(i) != v;
  }
  EXPECT_GT(differ, 4000); // really rounded
}

// Cutting every position's shard and assembling them gives the global
// tensor back, for split, multi-axis, partial and uneven layouts.
TEST(ShardTest, CutThenAssembleIsIdentity) {
  DeviceMesh mesh = mesh2x2();
  Tensor global = makeSeededTensor(DType::F32, {8, 6}, 1, 2);
  std::vector<TensorLayout> layouts;
  TensorLayout l = TensorLayout::replicated(2);
  layouts.push_back(l);
  l.dimAxes = {{0}, {1}};
  layouts.push_back(l);
  l.dimAxes = {{1, 0}, {}};
  layouts.push_back(l);
  l.dimAxes = {{0}, {}};
  l.partialAxes = {1};
  layouts.push_back(l);
  l.partialKind = ReductionKind::Max;
  layouts.push_back(l);
  TensorLayout uneven = TensorLayout::replicated(2);
  uneven.dimAxes = {{}, {1}};
  uneven.unevenSizes = {{}, {4, 2}};
  layouts.push_back(uneven);
  for (const TensorLayout &layout : layouts) {
    std::vector<Tensor> locals;
    for (int64_t pos = 0; pos < 4; ++pos) {
      Shape local = layout.getMaxLocalShape(mesh, global.getShape());
      locals.push_back(cutShard(global, mesh, layout, pos, local));
    }
    Tensor back = assembleGlobal(locals, mesh, layout, global.getShape());
    double err;
    EXPECT_EQ(compareTensors(back, global, 0, 0, err), "") << layout.str(mesh);
  }
  // A partial-sum shard: position (0, 1) holds zeros.
  Tensor shard = cutShard(global, mesh, layouts[3], 1, {4, 6});
  for (int64_t i = 0; i < shard.getNumElements(); ++i)
    EXPECT_EQ(shard.getAsDouble(i), 0.0);
}

TEST(ShardTest, AssembleReducesPartialTerms) {
  DeviceMesh mesh = mesh2x2();
  TensorLayout layout = TensorLayout::replicated(1);
  layout.partialAxes = {0};
  std::vector<Tensor> locals;
  for (int64_t pos = 0; pos < 4; ++pos) {
    Tensor t(DType::F32, {3});
    for (int64_t i = 0; i < 3; ++i)
      t.setFromDouble(i, pos * 10 + i);
    locals.push_back(t);
  }
  // Replicated over mp: positions 0 and 2 (mp = 0) are the two terms.
  Tensor g = assembleGlobal(locals, mesh, layout, {3});
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(g.getAsDouble(i), (0 + i) + (20 + i));
}

TEST(CompareTest, Tolerances) {
  Tensor a(DType::F32, {2}), b(DType::F32, {2});
  a.setFromDouble(0, 1.0);
  b.setFromDouble(0, 1.0 + 1e-6);
  double err;
  EXPECT_EQ(compareTensors(a, b, 1e-5, 0, err), "");
  EXPECT_NE(compareTensors(a, b, 1e-8, 0, err), "");
  EXPECT_NE(compareTensors(a, Tensor(DType::F64, {2}), 1, 1, err), "");
}

// Issue 22: the tolerance atol + rtol * |inf| accepted anything.
TEST(CompareTest, NonFiniteValuesMatchExactly) {
  auto compare = [](double x, double y) {
    Tensor a(DType::F32, {1}), b(DType::F32, {1});
    a.setFromDouble(0, x);
    b.setFromDouble(0, y);
    double err;
    return compareTensors(a, b, 1e-3, 1e-3, err).empty();
  };
  EXPECT_TRUE(compare(INFINITY, INFINITY));
  EXPECT_TRUE(compare(-INFINITY, -INFINITY));
  EXPECT_TRUE(compare(NAN, NAN));
  EXPECT_FALSE(compare(INFINITY, -INFINITY));
  EXPECT_FALSE(compare(1.0, INFINITY));
  EXPECT_FALSE(compare(INFINITY, 1.0));
  EXPECT_FALSE(compare(NAN, 1.0));
  EXPECT_FALSE(compare(1.0, NAN));
  EXPECT_FALSE(compare(NAN, INFINITY));
}
