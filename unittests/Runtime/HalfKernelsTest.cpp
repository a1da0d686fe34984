//===- HalfKernelsTest.cpp - bf16/f16 through the CPU kernels -------------===//
//
// GEMMs with bf16/f16 operands against a double reference of the same
// (rounded) inputs; loop nests on bf16 values against hand-computed
// roundings; reductions, softmax and accumulation in f32; data movement by
// element size.
//
//===----------------------------------------------------------------------===//

#include "TestPrograms.h"
#include "autoshard/Runtime/Backend.h"
#include "autoshard/Runtime/Communicator.h"
#include "autoshard/Runtime/Executor.h"
#include "autoshard/Runtime/Half.h"
#include "autoshard/Runtime/HostIO.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace autoshard;
using namespace autoshard::rt;

namespace {
/// C[b] = op(A[b]) op(B[b]) in double over the stored (rounded) values;
/// with `absolute`, the sums of |a * b| instead (for error bounds).
std::vector<double> referenceGemm(const Tensor &a, const Tensor &b, bool ta,
                                  bool tb, bool absolute = false) {
  int64_t r = a.getRank(), batch = r == 3 ? a.getDim(0) : 1;
  int64_t m = ta ? a.getDim(r - 1) : a.getDim(r - 2);
  int64_t k = ta ? a.getDim(r - 2) : a.getDim(r - 1);
  int64_t n = tb ? b.getDim(r - 2) : b.getDim(r - 1);
  int64_t lda = a.getDim(r - 1), ldb = b.getDim(r - 1);
  std::vector<double> c(batch * m * n);
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          double x = a.getAsDouble(q * m * k + (ta ? p * lda + i : i * lda + p)),
                 y = b.getAsDouble(q * k * n + (tb ? j * ldb + p : p * ldb + j));
          acc += absolute ? std::fabs(x * y) : x * y;
        }
        c[(q * m + i) * n + j] = acc;
      }
  return c;
}

/// A one-instruction plan: result = A x B into a zero C of type `cType`.
Program makeGemm(OpKind kind, DType abType, DType cType, Shape a, Shape b,
                 Shape c, bool ta, bool tb) {
  Program p;
  p.mesh = test::oneDevice();
  ValueId va = p.addValue(abType, a), vb = p.addValue(abType, b);
  p.inputs = {test::io(va, a), test::io(vb, b)};
  ValueId vc = p.addValue(cType, c);
  Instruction empty;
  empty.kind = OpKind::Empty;
  empty.results = {vc};
  Instruction mm;
  mm.kind = kind;
  mm.transA = ta;
  mm.transB = tb;
  mm.tf32 = true; // ignored by the CPU, which computes in FP32
  mm.operands = {va, vb, vc};
  mm.results = {p.addValue(cType, c)};
  p.instructions = {empty, mm};
  p.outputs = {test::io(mm.results[0], c)};
  return p;
}

Tensor runOne(const Program &p, const std::vector<Tensor> &inputs) {
  std::unique_ptr<Backend> cpu = createCpuBackend();
  std::unique_ptr<Communicator> comm = createLocalCommunicator(p.mesh);
  Executor exec(p, *cpu, *comm);
  return exec.run(inputs).at(0);
}

ScalarInst op(ScalarOp o, DType type, int32_t dst, int32_t a = -1,
              int32_t b = -1, DType src = DType::F32) {
  ScalarInst in;
  in.op = o;
  in.type = type;
  in.srcType = src;
  in.dst = dst;
  in.a = a;
  in.b = b;
  return in;
}

AffineMapSpec identity1() {
  AffineMapSpec m;
  m.numResults = 1;
  m.coeffs = {1};
  m.consts = {0};
  return m;
}

Tensor values(DType t, std::vector<double> v) {
  Tensor x(t, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i)
    x.setFromDouble(i, v[i]);
  return x;
}
} // namespace

/// |got - want| within FP32 accumulation's bound (k + 2) u sum|a b| of the
/// double reference, plus half an ulp of the result when it is bf16/f16.
void expectGemmClose(const Tensor &got, const Tensor &a, const Tensor &b,
                     bool ta, bool tb, int64_t k) {
  std::vector<double> want = referenceGemm(a, b, ta, tb),
                      mag = referenceGemm(a, b, ta, tb, /*absolute=*/true);
  ASSERT_EQ(got.getNumElements(), static_cast<int64_t>(want.size()));
  int mantissa = got.getDType() == DType::BF16  ? 7
                 : got.getDType() == DType::F16 ? 10
                                                : 23;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = got.getAsDouble(i);
    double bound = (k + 2) * 0x1p-24 * mag[i];
    if (mantissa < 23 && g != 0)
      bound += 0.5 * std::ldexp(1.0, std::ilogb(std::fmax(std::fabs(g),
                                                          std::fabs(want[i]))) -
                                         mantissa);
    ASSERT_LE(std::fabs(g - want[i]), bound)
        << "element " << i << " of " << got.getTypeString();
  }
}

// FP32 accumulation of exactly widened inputs, against the double reference
// of the rounded inputs (an input rounded or truncated again would be off
// by ~2^-9 relative, far beyond the bound).
TEST(HalfKernelsTest, MatmulAndBatchMatmulAccumulateInF32) {
  for (DType t : {DType::BF16, DType::F16})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const int64_t m = 9, k = 300, n = 7, batch = 3;
        Shape a = ta ? Shape{k, m} : Shape{m, k}, b = tb ? Shape{n, k}
                                                         : Shape{k, n};
        Tensor x = makeSeededTensor(t, a, 1, 1), y = makeSeededTensor(t, b, 1, 2);
        Tensor c = runOne(
            makeGemm(OpKind::Matmul, t, DType::F32, a, b, {m, n}, ta, tb),
            {x, y});
        ASSERT_EQ(c.getTypeString(), "f32[9x7]");
        expectGemmClose(c, x, y, ta, tb, k);

        Shape ba = {batch, a[0], a[1]}, bb = {batch, b[0], b[1]};
        Tensor bx = makeSeededTensor(t, ba, 1, 3),
               by = makeSeededTensor(t, bb, 1, 4);
        Tensor bc = runOne(makeGemm(OpKind::BatchMatmul, t, DType::F32, ba, bb,
                                    {batch, m, n}, ta, tb),
                           {bx, by});
        ASSERT_EQ(bc.getTypeString(), "f32[3x9x7]");
        expectGemmClose(bc, bx, by, ta, tb, k);

        // All in the low precision: the f32 result rounded once.
        Tensor h = runOne(makeGemm(OpKind::Matmul, t, t, a, b, {m, n}, ta, tb),
                          {x, y});
        ASSERT_EQ(h.getDType(), t);
        expectGemmClose(h, x, y, ta, tb, k);
      }
}

TEST(HalfKernelsTest, MatmulRejectsOtherMixes) {
  std::unique_ptr<Backend> cpu = createCpuBackend();
  Tensor b16(DType::BF16, {2, 2}), f16(DType::F16, {2, 2}),
      f32(DType::F32, {2, 2}), f64(DType::F64, {2, 2});
  try {
    cpu->matmul(b16, f16, f32, false, false, false);
    ADD_FAILURE() << "bf16 x f16 accepted";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "matmul: unsupported element types bf16[2x2] x f16[2x2] -> "
              "f32[2x2] (bf16/f16 operands must match; the result is f32 or "
              "their type)");
  }
  EXPECT_THROW(cpu->matmul(b16, b16, f64, false, false, false), Error);
  EXPECT_THROW(cpu->matmul(f32, b16, f32, false, false, false), Error);
  Tensor b3(DType::BF16, {1, 2, 2}), c3(DType::F16, {1, 2, 2});
  EXPECT_THROW(cpu->batchMatmul(b3, b3, c3, false, false, false), Error);
}

// extf/truncf around a bf16 multiply: out = extf(truncf(x) * truncf(y)),
// every step rounded to nearest even.
TEST(HalfKernelsTest, LoopNestTruncMulExt) {
  GenericSpec g;
  g.loopRanges = {4};
  g.numInputs = 2;
  g.numOutputs = 1;
  g.maps = {identity1(), identity1(), identity1()};
  g.body = {op(ScalarOp::FCast, DType::BF16, 3, 0, -1, DType::F32),
            op(ScalarOp::FCast, DType::BF16, 4, 1, -1, DType::F32),
            op(ScalarOp::Mul, DType::BF16, 5, 3, 4),
            op(ScalarOp::FCast, DType::F32, 6, 5, -1, DType::BF16)};
  g.numRegs = 7;
  g.yields = {6};
  // 1 + 2^-8 truncates (a tie) to 1; (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14
  // rounds to 1 + 2^-6; 1.5 * (1 + 3 * 2^-7) = 1.53515625 is a tie between
  // 1.53125 (even) and 1.5390625; bf16 has f32's range: 2^60 * 2^60 is
  // finite.
  Tensor x = values(DType::F32, {1 + 0x1p-8, 1 + 0x1p-7, 1.5, 0x1p60});
  Tensor y = values(DType::F32, {3, 1 + 0x1p-7, 1 + 0x3p-7, 0x1p60});
  Tensor out(DType::F32, {4});
  std::unique_ptr<Backend> cpu = createCpuBackend();
  cpu->generic(g, {&x, &y}, {}, {&out});
  EXPECT_EQ(out.getAsDouble(0), 3.0);
  EXPECT_EQ(out.getAsDouble(1), 1 + 0x1p-6);
  EXPECT_EQ(out.getAsDouble(2), 1.53125);
  EXPECT_EQ(out.getAsDouble(3), 0x1p120);

  // The same nest in f16: the product of 2^8 * 2^8 overflows f16's 65504.
  for (ScalarInst &in : g.body) {
    if (in.type == DType::BF16)
      in.type = DType::F16;
    if (in.srcType == DType::BF16)
      in.srcType = DType::F16;
  }
  Tensor hx = values(DType::F32, {1 + 0x1p-11, 1 + 0x1p-10, 256, 0x1p-14});
  Tensor hy = values(DType::F32, {3, 1 + 0x1p-10, 256, 0x1p-4});
  cpu->generic(g, {&hx, &hy}, {}, {&out});
  EXPECT_EQ(out.getAsDouble(0), 3.0);
  EXPECT_EQ(out.getAsDouble(1), 1 + 0x1p-9); // 1 + 2^-9 + 2^-20 rounded
  EXPECT_TRUE(std::isinf(out.getAsDouble(2)));
  EXPECT_EQ(out.getAsDouble(3), 0x1p-18); // an f16 subnormal, exact
}

// A reduction whose accumulator is bf16 rounds at every step (MLIR's
// semantics of a bf16 linalg.generic); Backend::reduce accumulates in f32
// and rounds once.
TEST(HalfKernelsTest, ReductionsRoundWhereTheyShould) {
  Tensor x = values(DType::BF16, {1, 0x1p-8, 0x1p-8, 0x1p-8, 0x1p-8});
  GenericSpec g;
  g.loopRanges = {5};
  g.numInputs = 1;
  g.numOutputs = 1;
  AffineMapSpec scalarMap;
  scalarMap.numResults = 0;
  g.maps = {identity1(), scalarMap};
  g.body = {op(ScalarOp::Add, DType::BF16, 2, 1, 0)};
  g.numRegs = 3;
  g.yields = {2};
  Tensor acc(DType::BF16, {});
  std::unique_ptr<Backend> cpu = createCpuBackend();
  cpu->generic(g, {&x}, {}, {&acc});
  EXPECT_EQ(acc.getAsDouble(0), 1.0); // each 1 + 2^-8 ties back to 1

  Tensor sum(DType::BF16, {});
  cpu->reduce(x, sum, {0}, ReductionKind::Sum);
  EXPECT_EQ(sum.getAsDouble(0), 1 + 0x1p-6); // f32 sum, exact in bf16

  Tensor a = values(DType::F16, {1, 1 + 0x1p-10}),
         b = values(DType::F16, {0x1p-11, 0x1p-11});
  cpu->accumulate(a, b, ReductionKind::Sum);
  EXPECT_EQ(a.getAsDouble(0), 1.0);          // tie to even
  EXPECT_EQ(a.getAsDouble(1), 1 + 0x1p-9);   // tie to even, upwards

  // softmax of bf16 logits: computed wide, rounded once.
  Tensor logits = values(DType::BF16, {0, std::log(3.0)}), p(DType::BF16, {2});
  cpu->softmax(logits, p, 0);
  double e = std::exp(logits.getAsDouble(1));
  EXPECT_EQ(p.getData<uint16_t>()[0], doubleToBF16(1 / (1 + e)));
  EXPECT_EQ(p.getData<uint16_t>()[1], doubleToBF16(e / (1 + e)));
}

// Data movement copies 2-byte elements unchanged.
TEST(HalfKernelsTest, DataMovementBySize) {
  std::unique_ptr<Backend> cpu = createCpuBackend();
  Tensor x = makeSeededTensor(DType::BF16, {3, 5}, 9, 0), t(DType::BF16, {5, 3});
  cpu->transpose(x, t, {1, 0});
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j)
      ASSERT_EQ(t.getData<uint16_t>()[j * 3 + i], x.getData<uint16_t>()[i * 5 + j]);
  Tensor col(DType::BF16, {3, 1});
  cpu->extractSlice(x, col, {0, 2}, {3, 1}, {1, 1});
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(col.getData<uint16_t>()[i], x.getData<uint16_t>()[i * 5 + 2]);
  Tensor f(DType::F16, {7}), v = values(DType::F32, {0.1});
  cpu->fill(f, v);
  for (int64_t i = 0; i < 7; ++i)
    EXPECT_EQ(f.getData<uint16_t>()[i], floatToF16(0.1f));
  Tensor padded(DType::BF16, {5, 7}), zero = values(DType::BF16, {-2});
  cpu->pad(x, zero, padded, {1, 1});
  EXPECT_EQ(padded.getAsDouble(0), -2.0);
  EXPECT_EQ(padded.getData<uint16_t>()[1 * 7 + 1], x.getData<uint16_t>()[0]);
  Tensor idx(DType::I64, {2, 1}), rows(DType::BF16, {2, 5});
  idx.setFromInt(0, 2);
  idx.setFromInt(1, 0);
  cpu->gather(x, idx, rows, {0});
  EXPECT_EQ(rows.getData<uint16_t>()[0], x.getData<uint16_t>()[10]);
  EXPECT_EQ(rows.getData<uint16_t>()[5], x.getData<uint16_t>()[0]);
}
