//===- KernelsTest.cpp - CPU kernels against naive loops ------------------===//

#include "autoshard/Runtime/Backend.h"
#include "autoshard/Runtime/HostIO.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace autoshard;
using namespace autoshard::rt;

namespace {
class KernelsTest : public ::testing::Test {
protected:
  std::unique_ptr<Backend> cpu = createCpuBackend();
};

Tensor seeded(DType t, Shape s, uint64_t key) {
  return makeSeededTensor(t, s, /*seed=*/42, key);
}

template <typename T>
void naiveGemm(const Tensor &a, const Tensor &b, Tensor &c, bool ta, bool tb,
               int64_t batch = 0) {
  int64_t r = a.getRank();
  int64_t m = c.getDim(r - 2), n = c.getDim(r - 1);
  int64_t k = ta ? a.getDim(r - 2) : a.getDim(r - 1);
  int64_t sa = a.getDim(r - 2) * a.getDim(r - 1),
          sb = b.getDim(r - 2) * b.getDim(r - 1), sc = m * n;
  const T *A = a.getData<T>() + batch * sa, *B = b.getData<T>() + batch * sb;
  T *C = c.getData<T>() + batch * sc;
  int64_t lda = a.getDim(r - 1), ldb = b.getDim(r - 1);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = C[i * n + j];
      for (int64_t p = 0; p < k; ++p)
        acc += double(ta ? A[p * lda + i] : A[i * lda + p]) *
               double(tb ? B[j * ldb + p] : B[p * ldb + j]);
      C[i * n + j] = static_cast<T>(acc);
    }
}

void expectNear(const Tensor &a, const Tensor &b, double tol) {
  ASSERT_EQ(a.getShape(), b.getShape());
  ASSERT_EQ(a.getDType(), b.getDType());
  for (int64_t i = 0; i < a.getNumElements(); ++i)
    ASSERT_NEAR(a.getAsDouble(i), b.getAsDouble(i), tol) << "element " << i;
}

AffineMapSpec map(int64_t numLoops, std::vector<std::vector<int64_t>> rows) {
  AffineMapSpec m;
  m.numResults = rows.size();
  for (auto &row : rows) {
    for (int64_t l = 0; l < numLoops; ++l)
      m.coeffs.push_back(row[l]);
    m.consts.push_back(
        row.size() > static_cast<size_t>(numLoops) ? row[numLoops] : 0);
  }
  return m;
}

ScalarInst inst(ScalarOp op, DType type, int32_t dst, int32_t a = -1,
                int32_t b = -1) {
  ScalarInst in;
  in.op = op;
  in.type = type;
  in.srcType = type;
  in.dst = dst;
  in.a = a;
  in.b = b;
  return in;
}
} // namespace

TEST_F(KernelsTest, GemmMatchesTripleLoop) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Tensor a = seeded(DType::F32, ta ? Shape{13, 7} : Shape{7, 13}, 1);
      Tensor b = seeded(DType::F32, tb ? Shape{5, 13} : Shape{13, 5}, 2);
      Tensor c = seeded(DType::F32, {7, 5}, 3), ref = c.clone();
      cpu->matmul(a, b, c, ta, tb, true);
      naiveGemm<float>(a, b, ref, ta, tb);
      expectNear(c, ref, 1e-5);
    }
  Tensor a = seeded(DType::F64, {4, 6}, 4), b = seeded(DType::F64, {6, 3}, 5);
  Tensor c(DType::F64, {4, 3}), ref(DType::F64, {4, 3});
  cpu->matmul(a, b, c, false, false, true);
  naiveGemm<double>(a, b, ref, false, false);
  expectNear(c, ref, 1e-12);
}

TEST_F(KernelsTest, BatchGemmMatchesTripleLoop) {
  Tensor a = seeded(DType::F32, {3, 4, 6}, 1),
         b = seeded(DType::F32, {3, 5, 6}, 2);
  Tensor c(DType::F32, {3, 4, 5}), ref(DType::F32, {3, 4, 5});
  cpu->batchMatmul(a, b, c, false, true, true);
  for (int64_t i = 0; i < 3; ++i)
    naiveGemm<float>(a, b, ref, false, true, i);
  expectNear(c, ref, 1e-5);
}

TEST_F(KernelsTest, GemmRejectsBadShapesAndTypes) {
  Tensor a(DType::F32, {2, 3}), b(DType::F32, {4, 2}), c(DType::F32, {2, 2});
  EXPECT_THROW(cpu->matmul(a, b, c, false, false, true), Error);
  Tensor ai(DType::I32, {2, 2}), ci(DType::I32, {2, 2});
  EXPECT_THROW(cpu->matmul(ai, ai, ci, false, false, true), Error);
}

// A matmul written as a loop nest (i, j, k) with a reduction loop.
TEST_F(KernelsTest, GenericMatmulReduction) {
  GenericSpec g;
  g.loopRanges = {4, 5, 6};
  g.numInputs = 2;
  g.numOutputs = 1;
  g.maps = {map(3, {{1, 0, 0}, {0, 0, 1}}), map(3, {{0, 0, 1}, {0, 1, 0}}),
            map(3, {{1, 0, 0}, {0, 1, 0}})};
  g.body = {inst(ScalarOp::Mul, DType::F32, 3, 0, 1),
            inst(ScalarOp::Add, DType::F32, 4, 2, 3)};
  g.numRegs = 5;
  g.yields = {4};
  Tensor a = seeded(DType::F32, {4, 6}, 1), b = seeded(DType::F32, {6, 5}, 2);
  Tensor c(DType::F32, {4, 5}), ref(DType::F32, {4, 5});
  cpu->generic(g, {&a, &b}, {}, {&c});
  naiveGemm<float>(a, b, ref, false, false);
  expectNear(c, ref, 1e-5);
}

// Row sums with a broadcast constant offset, via a captured scalar and
// linalg.index: out[i] += x[i, j] * c + i.
TEST_F(KernelsTest, GenericIndexCapturesAndIntegerWrap) {
  GenericSpec g;
  g.loopRanges = {3, 4};
  g.numInputs = 1;
  g.numOutputs = 1;
  g.numCaptures = 1;
  g.maps = {map(2, {{1, 0}, {0, 1}}), map(2, {{1, 0}})};
  ScalarInst cap = inst(ScalarOp::Captured, DType::F64, 2);
  cap.imm = 0;
  ScalarInst idx = inst(ScalarOp::Index, DType::I64, 3);
  idx.imm = 0;
  ScalarInst toF = inst(ScalarOp::IToF, DType::F64, 4, 3);
  toF.srcType = DType::I64;
  g.body = {cap,
            idx,
            toF,
            inst(ScalarOp::Mul, DType::F64, 5, 0, 2),
            inst(ScalarOp::Add, DType::F64, 6, 5, 4),
            inst(ScalarOp::Add, DType::F64, 7, 1, 6)};
  g.numRegs = 8;
  g.yields = {7};
  Tensor x = seeded(DType::F64, {3, 4}, 7), out(DType::F64, {3});
  Tensor scale(DType::F64, {});
  scale.setFromDouble(0, 2.5);
  cpu->generic(g, {&x}, {&scale}, {&out});
  for (int64_t i = 0; i < 3; ++i) {
    double ref = 0;
    for (int64_t j = 0; j < 4; ++j)
      ref += x.getAsDouble(i * 4 + j) * 2.5 + i;
    EXPECT_NEAR(out.getAsDouble(i), ref, 1e-12);
  }

  // i32 arithmetic wraps like MLIR's.
  GenericSpec w;
  w.numInputs = 1;
  w.numOutputs = 1;
  w.maps = {map(1, {{1}}), map(1, {{1}})};
  w.loopRanges = {2};
  w.body = {inst(ScalarOp::Add, DType::I32, 2, 0, 0)};
  w.numRegs = 3;
  w.yields = {2};
  Tensor big(DType::I32, {2}), res(DType::I32, {2});
  big.setFromInt(0, 2000000000);
  big.setFromInt(1, -3);
  cpu->generic(w, {&big}, {}, {&res});
  EXPECT_EQ(res.getAsInt(0), static_cast<int32_t>(4000000000LL));
  EXPECT_EQ(res.getAsInt(1), -6);
}

TEST_F(KernelsTest, GenericRejectsOutOfBoundsMaps) {
  GenericSpec g;
  g.loopRanges = {5};
  g.numInputs = 1;
  g.numOutputs = 1;
  g.maps = {map(1, {{1, 1}}), map(1, {{1}})}; // x[i + 1] over i < 5 of 5
  g.numRegs = 2;
  g.yields = {0};
  Tensor x(DType::F32, {5}), y(DType::F32, {5});
  EXPECT_THROW(cpu->generic(g, {&x}, {}, {&y}), Error);
}

TEST_F(KernelsTest, SoftmaxMatchesNaive) {
  Tensor x = seeded(DType::F32, {3, 5, 2}, 9), y(DType::F32, {3, 5, 2});
  cpu->softmax(x, y, 1);
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t i = 0; i < 2; ++i) {
      double sum = 0;
      for (int64_t k = 0; k < 5; ++k)
        sum += std::exp(x.getAsDouble((o * 5 + k) * 2 + i));
      for (int64_t k = 0; k < 5; ++k)
        EXPECT_NEAR(y.getAsDouble((o * 5 + k) * 2 + i),
                    std::exp(x.getAsDouble((o * 5 + k) * 2 + i)) / sum, 1e-6);
    }
}

TEST_F(KernelsTest, ReduceAndAccumulate) {
  Tensor x = seeded(DType::I64, {2, 3, 4}, 3), out(DType::I64, {3});
  cpu->reduce(x, out, {0, 2}, ReductionKind::Sum);
  Tensor mx(DType::I64, {3});
  cpu->reduce(x, mx, {0, 2}, ReductionKind::Max);
  for (int64_t j = 0; j < 3; ++j) {
    int64_t s = 0, m = INT64_MIN;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t k = 0; k < 4; ++k) {
        s += x.getAsInt((i * 3 + j) * 4 + k);
        m = std::max(m, x.getAsInt((i * 3 + j) * 4 + k));
      }
    EXPECT_EQ(out.getAsInt(j), s);
    EXPECT_EQ(mx.getAsInt(j), m);
  }
  Tensor acc = seeded(DType::F32, {4}, 1), y = seeded(DType::F32, {4}, 2);
  Tensor before = acc.clone();
  cpu->accumulate(acc, y, ReductionKind::Min);
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(acc.getAsDouble(i),
              std::min(before.getAsDouble(i), y.getAsDouble(i)));
}

TEST_F(KernelsTest, TransposeSliceConcatPadGather) {
  Tensor x = seeded(DType::F32, {2, 3, 4}, 5), t(DType::F32, {4, 2, 3});
  cpu->transpose(x, t, {2, 0, 1});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k)
        EXPECT_EQ(t.getAsDouble((k * 2 + i) * 3 + j),
                  x.getAsDouble((i * 3 + j) * 4 + k));
  EXPECT_THROW(cpu->transpose(x, t, {0, 0, 1}), Error);

  // Strided slice: rows 1.., every other column.
  Tensor m = seeded(DType::I32, {4, 6}, 6), s(DType::I32, {3, 3});
  cpu->extractSlice(m, s, {1, 0}, {3, 3}, {1, 2});
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(s.getAsInt(i * 3 + j), m.getAsInt((i + 1) * 6 + 2 * j));
  Tensor bad(DType::I32, {3, 4});
  EXPECT_THROW(cpu->extractSlice(m, bad, {1, 3}, {3, 4}, {1, 1}), Error);
  Tensor dest(DType::I32, {4, 6});
  cpu->insertSlice(s, dest, {1, 0}, {3, 3}, {1, 2});
  EXPECT_EQ(dest.getAsInt(1 * 6 + 2), m.getAsInt(1 * 6 + 2));
  EXPECT_EQ(dest.getAsInt(1 * 6 + 1), 0);

  Tensor c(DType::I32, {4, 9});
  // The other dims must agree: 4 vs 3 rows.
  EXPECT_THROW(cpu->concat({&m, &s}, c, 1), Error);
  Tensor s4(DType::I32, {4, 3});
  cpu->concat({&m, &s4}, c, 1);
  EXPECT_EQ(c.getAsInt(2 * 9 + 5), m.getAsInt(2 * 6 + 5));
  EXPECT_EQ(c.getAsInt(2 * 9 + 6), 0);

  Tensor p(DType::F32, {4, 5}), v(DType::F32, {});
  v.setFromDouble(0, 7.0);
  Tensor small = seeded(DType::F32, {2, 3}, 1);
  cpu->pad(small, v, p, {1, 2});
  EXPECT_EQ(p.getAsDouble(0), 7.0);
  EXPECT_EQ(p.getAsDouble(1 * 5 + 2), small.getAsDouble(0));
  EXPECT_EQ(p.getAsDouble(2 * 5 + 4), small.getAsDouble(5));

  Tensor table = seeded(DType::F32, {10, 3}, 2), ids(DType::I64, {4, 1});
  for (int64_t i = 0; i < 4; ++i)
    ids.setFromInt(i, (i * 7) % 10);
  Tensor rows(DType::F32, {4, 1, 3});
  cpu->gather(table, ids, rows, {0});
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(rows.getAsDouble(i * 3 + j),
                table.getAsDouble(((i * 7) % 10) * 3 + j));
  ids.setFromInt(3, 10);
  EXPECT_THROW(cpu->gather(table, ids, rows, {0}), Error);
}
