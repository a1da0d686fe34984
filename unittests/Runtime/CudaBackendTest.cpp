//===- CudaBackendTest.cpp - Every Backend kernel against the CPU one -----===//
//
// Each test runs one kernel on a backend under test (uploaded inputs,
// downloaded results) and on the CPU backend (the reference) with the same
// seeded data. The suite is instantiated twice: "cuda" (skipped with the
// reason when no GPU is visible) and "cpu", which runs everywhere and keeps
// the test's own specs, shapes and expected errors honest on machines
// without a GPU.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/CudaBackend.h"
#include "autoshard/Runtime/Executor.h"
#include "autoshard/Runtime/HostIO.h"
#include "TestPrograms.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

using namespace autoshard;
using namespace autoshard::rt;

namespace {

Tensor seeded(DType t, Shape s, uint64_t key) {
  return makeSeededTensor(t, std::move(s), /*seed=*/7, key);
}

/// Equal element for element: exact for integers and where both backends
/// evaluate in the same order; `rtol` bounds |got - want| / max(1, |want|)
/// for GEMMs and transcendental functions.
void expectClose(const Tensor &got, const Tensor &want, double rtol = 0) {
  ASSERT_EQ(got.getDType(), want.getDType());
  ASSERT_EQ(got.getShape(), want.getShape());
  for (int64_t i = 0; i < want.getNumElements(); ++i) {
    if (!isFloatDType(want.getDType())) {
      ASSERT_EQ(got.getAsInt(i), want.getAsInt(i)) << "element " << i;
      continue;
    }
    double g = got.getAsDouble(i), w = want.getAsDouble(i);
    if (g == w) // also equal infinities
      continue;
    if (std::isnan(w)) {
      ASSERT_TRUE(std::isnan(g)) << "element " << i;
      continue;
    }
    ASSERT_LE(std::fabs(g - w), rtol * std::max(1.0, std::fabs(w)))
        << "element " << i << ": got " << g << ", want " << w;
  }
}

ScalarInst inst(ScalarOp op, DType type, int32_t dst, int32_t a = -1,
                int32_t b = -1, int32_t c = -1, int64_t imm = 0,
                double fimm = 0) {
  ScalarInst in;
  in.op = op;
  in.type = type;
  in.srcType = type;
  in.dst = dst;
  in.a = a;
  in.b = b;
  in.c = c;
  in.imm = imm;
  in.fimm = fimm;
  return in;
}

/// rows[r] = coefficients per loop, then an optional constant.
AffineMapSpec map(int64_t numLoops, std::vector<std::vector<int64_t>> rows) {
  AffineMapSpec m;
  m.numResults = static_cast<int64_t>(rows.size());
  for (auto &row : rows) {
    for (int64_t l = 0; l < numLoops; ++l)
      m.coeffs.push_back(row[l]);
    m.consts.push_back(
        static_cast<int64_t>(row.size()) > numLoops ? row[numLoops] : 0);
  }
  return m;
}

class BackendVsCpuTest : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    cpu = createCpuBackend();
    if (GetParam() == "cpu") {
      dut = createCpuBackend();
      return;
    }
    if (!isCudaAvailable())
      GTEST_SKIP() << "CUDA backend not tested: " << getCudaUnavailableReason();
    dut = createCudaBackend(0);
  }

  Tensor up(const Tensor &t) { return dut->upload(t); }
  Tensor down(const Tensor &t) { return dut->download(t); }
  /// Runs `queue` and waits for it: a device raises data faults (bad
  /// gather or tensor.extract indices, integer division by zero) at its
  /// next synchronising call, the CPU backend at the call itself.
  template <typename Fn> void synced(Fn queue) {
    queue();
    dut->synchronize();
  }
  /// A host-side deep copy, so the reference never shares the DUT's input.
  static Tensor host(const Tensor &t) { return t.clone(); }

  /// Runs `spec` on both backends; outputs start from `inits`.
  void checkGeneric(const GenericSpec &spec, const std::vector<Tensor> &ins,
                    const std::vector<Tensor> &caps,
                    const std::vector<Tensor> &inits, double rtol = 0) {
    std::vector<Tensor> dIns, dCaps, dOuts, rOuts;
    std::vector<const Tensor *> dInPtrs, dCapPtrs, rInPtrs, rCapPtrs;
    std::vector<Tensor *> dOutPtrs, rOutPtrs;
    for (const Tensor &t : ins)
      dIns.push_back(up(t));
    for (const Tensor &t : caps)
      dCaps.push_back(up(t));
    for (const Tensor &t : inits) {
      dOuts.push_back(up(host(t)));
      rOuts.push_back(host(t));
    }
    for (size_t k = 0; k < ins.size(); ++k) {
      dInPtrs.push_back(&dIns[k]);
      rInPtrs.push_back(&ins[k]);
    }
    for (size_t k = 0; k < caps.size(); ++k) {
      dCapPtrs.push_back(&dCaps[k]);
      rCapPtrs.push_back(&caps[k]);
    }
    for (size_t k = 0; k < inits.size(); ++k) {
      dOutPtrs.push_back(&dOuts[k]);
      rOutPtrs.push_back(&rOuts[k]);
    }
    dut->generic(spec, dInPtrs, dCapPtrs, dOutPtrs);
    cpu->generic(spec, rInPtrs, rCapPtrs, rOutPtrs);
    for (size_t k = 0; k < inits.size(); ++k)
      expectClose(down(dOuts[k]), rOuts[k], rtol);
  }

  std::unique_ptr<Backend> cpu, dut;
};

TEST_P(BackendVsCpuTest, UploadDownloadAllocateCopyFill) {
  for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64, DType::I1}) {
    Tensor x = seeded(t, {3, 5}, 1);
    expectClose(down(up(x)), x);
    Tensor z = dut->allocate(t, {4, 2});
    expectClose(down(z), Tensor(t, {4, 2}));
    Tensor c = dut->allocate(t, {15});
    dut->copy(up(x).reshaped({15}), c);
    expectClose(down(c), x.reshaped({15}));
  }
  // fill converts the scalar to the destination type like the CPU backend.
  for (DType valueType : {DType::F32, DType::F64, DType::I32, DType::I64}) {
    Tensor value(valueType, {});
    value.setFromDouble(0, -2.75);
    for (DType t :
         {DType::F32, DType::F64, DType::I32, DType::I64, DType::I1}) {
      Tensor d = dut->allocate(t, {7}), r(t, {7});
      dut->fill(d, up(value));
      cpu->fill(r, value);
      expectClose(down(d), r);
    }
  }
  Tensor notScalar = seeded(DType::F32, {2}, 2);
  Tensor d = dut->allocate(DType::F32, {3});
  EXPECT_THROW(dut->fill(d, up(notScalar)), Error);
}

TEST_P(BackendVsCpuTest, MatmulAllTransposes) {
  for (DType t : {DType::F32, DType::F64})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        int64_t m = 37, k = 19, n = 23;
        Tensor a = seeded(t, ta ? Shape{k, m} : Shape{m, k}, 3);
        Tensor b = seeded(t, tb ? Shape{n, k} : Shape{k, n}, 4);
        Tensor c0 = seeded(t, {m, n}, 5); // c += a b accumulates
        Tensor dc = up(host(c0)), rc = host(c0);
        dut->matmul(up(a), up(b), dc, ta, tb, true);
        cpu->matmul(a, b, rc, ta, tb, true);
        expectClose(down(dc), rc, t == DType::F32 ? 1e-5 : 1e-12);
      }
}

TEST_P(BackendVsCpuTest, BatchMatmulAllTransposes) {
  for (DType t : {DType::F32, DType::F64})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        int64_t batch = 3, m = 9, k = 33, n = 6;
        Tensor a = seeded(t, ta ? Shape{batch, k, m} : Shape{batch, m, k}, 6);
        Tensor b = seeded(t, tb ? Shape{batch, n, k} : Shape{batch, k, n}, 7);
        Tensor c0 = seeded(t, {batch, m, n}, 8);
        Tensor dc = up(host(c0)), rc = host(c0);
        dut->batchMatmul(up(a), up(b), dc, ta, tb, true);
        cpu->batchMatmul(a, b, rc, ta, tb, true);
        expectClose(down(dc), rc, t == DType::F32 ? 1e-5 : 1e-12);
      }
}

TEST_P(BackendVsCpuTest, MatmulRejectsBadOperands) {
  Tensor a = up(seeded(DType::F32, {4, 3}, 1));
  Tensor b = up(seeded(DType::F32, {4, 2}, 2)); // k mismatch
  Tensor c = dut->allocate(DType::F32, {4, 2});
  EXPECT_THROW(dut->matmul(a, b, c, false, false, true), Error);
  Tensor ia = up(seeded(DType::I32, {2, 2}, 1));
  Tensor ic = dut->allocate(DType::I32, {2, 2});
  EXPECT_THROW(dut->matmul(ia, ia, ic, false, false, true), Error);
  Tensor b3 = up(seeded(DType::F32, {2, 3, 2}, 3));
  Tensor a3 = up(seeded(DType::F32, {3, 4, 3}, 4)); // batch mismatch
  Tensor c3 = dut->allocate(DType::F32, {3, 4, 2});
  EXPECT_THROW(dut->batchMatmul(a3, b3, c3, false, false, true), Error);
}

TEST_P(BackendVsCpuTest, GenericBroadcastElementwise) {
  // out[i, j] = exp(a[i, j]) * b[j] + out[i, j]
  GenericSpec g;
  g.loopRanges = {5, 7};
  g.numInputs = 2;
  g.numOutputs = 1;
  g.maps = {map(2, {{1, 0}, {0, 1}}), map(2, {{0, 1}}),
            map(2, {{1, 0}, {0, 1}})};
  g.body = {inst(ScalarOp::Exp, DType::F32, 3, 0),
            inst(ScalarOp::Mul, DType::F32, 4, 3, 1),
            inst(ScalarOp::Add, DType::F32, 5, 4, 2)};
  g.numRegs = 6;
  g.yields = {5};
  checkGeneric(g, {seeded(DType::F32, {5, 7}, 1), seeded(DType::F32, {7}, 2)},
               {}, {seeded(DType::F32, {5, 7}, 3)}, 1e-6);
}

TEST_P(BackendVsCpuTest, GenericReductionMatchesInOrder) {
  // c[i, j] += a[i, k] * b[k, j] over loops (i, k, j): k is a reduction
  // interleaved between parallel loops; same order, so bit-exact.
  for (DType t : {DType::F32, DType::F64}) {
    GenericSpec g;
    g.loopRanges = {4, 6, 5};
    g.numInputs = 2;
    g.numOutputs = 1;
    g.maps = {map(3, {{1, 0, 0}, {0, 1, 0}}), map(3, {{0, 1, 0}, {0, 0, 1}}),
              map(3, {{1, 0, 0}, {0, 0, 1}})};
    g.body = {inst(ScalarOp::Mul, t, 3, 0, 1), inst(ScalarOp::Add, t, 4, 2, 3)};
    g.numRegs = 5;
    g.yields = {4};
    checkGeneric(g, {seeded(t, {4, 6}, 1), seeded(t, {6, 5}, 2)}, {},
                 {seeded(t, {4, 5}, 3)});
  }
  // A max-reduction into a rank-0 output: no parallel loop at all.
  GenericSpec g;
  g.loopRanges = {3, 8};
  g.numInputs = 1;
  g.numOutputs = 1;
  g.maps = {map(2, {{1, 0}, {0, 1}}), AffineMapSpec{0, {}, {}}};
  g.body = {inst(ScalarOp::Max, DType::F32, 2, 0, 1)};
  g.numRegs = 3;
  g.yields = {2};
  Tensor init(DType::F32, {});
  init.setFromDouble(0, -1e30);
  checkGeneric(g, {seeded(DType::F32, {3, 8}, 4)}, {}, {init});
}

TEST_P(BackendVsCpuTest, GenericIntegerOpsIndexSelectTwoOutputs) {
  // y[i] = x[i] < i % 3 ? x[i] * (i % 3) : i ; z[i] = sqrt(f64(y[i]))
  GenericSpec g;
  g.loopRanges = {33};
  g.numInputs = 1;
  g.numOutputs = 2;
  g.maps = {map(1, {{1}}), map(1, {{1}}), map(1, {{1}})};
  ScalarInst widen = inst(ScalarOp::ICast, DType::I64, 7, 0);
  widen.srcType = DType::I32;
  ScalarInst lt = inst(ScalarOp::CmpI, DType::I1, 9, 7, 6, -1, /*slt=*/2);
  lt.srcType = DType::I64;
  ScalarInst toF = inst(ScalarOp::IToF, DType::F64, 11, 10);
  toF.srcType = DType::I64;
  g.body = {inst(ScalarOp::Index, DType::I64, 3, -1, -1, -1, 0),
            inst(ScalarOp::Const, DType::I64, 5, -1, -1, -1, 3),
            inst(ScalarOp::Rem, DType::I64, 6, 3, 5),
            widen,
            inst(ScalarOp::Mul, DType::I64, 8, 7, 6),
            lt,
            inst(ScalarOp::Select, DType::I64, 10, 9, 8, 3),
            toF,
            inst(ScalarOp::Sqrt, DType::F64, 12, 11)};
  g.numRegs = 13;
  g.yields = {10, 12};
  checkGeneric(g, {seeded(DType::I32, {33}, 1)}, {},
               {Tensor(DType::I64, {33}), Tensor(DType::F64, {33})});
}

TEST_P(BackendVsCpuTest, GenericTranscendentals) {
  GenericSpec g;
  g.loopRanges = {64};
  g.numInputs = 2;
  g.numOutputs = 1;
  g.maps = {map(1, {{1}}), map(1, {{1}}), map(1, {{1}})};
  g.body = {inst(ScalarOp::Tanh, DType::F32, 3, 0),
            inst(ScalarOp::Erf, DType::F32, 4, 1),
            inst(ScalarOp::Abs, DType::F32, 5, 0),
            inst(ScalarOp::Log1p, DType::F32, 6, 5),
            inst(ScalarOp::Atan2, DType::F32, 7, 3, 4),
            inst(ScalarOp::Pow, DType::F32, 8, 5, 1),
            inst(ScalarOp::Fma, DType::F32, 9, 6, 7, 8),
            inst(ScalarOp::Rsqrt, DType::F32, 10, 5),
            inst(ScalarOp::MinNum, DType::F32, 11, 9, 10)};
  g.numRegs = 12;
  g.yields = {11};
  checkGeneric(g, {seeded(DType::F32, {64}, 1), seeded(DType::F32, {64}, 2)},
               {}, {Tensor(DType::F32, {64})}, 1e-6);
}

TEST_P(BackendVsCpuTest, GenericCapturedTensorAndItsBounds) {
  // out[i] = table[idx[i], 1]
  GenericSpec g;
  g.loopRanges = {6};
  g.numInputs = 1;
  g.numOutputs = 1;
  g.numCaptures = 1;
  g.maps = {map(1, {{1}}), map(1, {{1}})};
  ScalarInst load = inst(ScalarOp::Captured, DType::F32, 3, -1, -1, -1, 0);
  load.args = {0, 2};
  g.body = {inst(ScalarOp::Const, DType::I64, 2, -1, -1, -1, 1), load};
  g.numRegs = 4;
  g.yields = {3};
  Tensor idx(DType::I64, {6});
  for (int64_t i = 0; i < 6; ++i)
    idx.setFromInt(i, (i * 3) % 4);
  Tensor table = seeded(DType::F32, {4, 3}, 1);
  checkGeneric(g, {idx}, {table}, {Tensor(DType::F32, {6})});

  idx.setFromInt(4, 9);
  Tensor dIdx = up(idx), dTable = up(table);
  Tensor out = dut->allocate(DType::F32, {6});
  EXPECT_THROW(synced([&] { dut->generic(g, {&dIdx}, {&dTable}, {&out}); }),
               Error);
  // The backend stays usable after a data fault.
  idx.setFromInt(4, 0);
  checkGeneric(g, {idx}, {table}, {Tensor(DType::F32, {6})});
}

TEST_P(BackendVsCpuTest, GenericNonInjectiveOutputRunsSequentially) {
  // out[i + j] += a[i, j]: parallel threads would race; results must still
  // match the sequential order.
  GenericSpec g;
  g.loopRanges = {4, 5};
  g.numInputs = 1;
  g.numOutputs = 1;
  g.maps = {map(2, {{1, 0}, {0, 1}}), map(2, {{1, 1}})};
  g.body = {inst(ScalarOp::Add, DType::F32, 2, 1, 0)};
  g.numRegs = 3;
  g.yields = {2};
  checkGeneric(g, {seeded(DType::F32, {4, 5}, 1)}, {},
               {seeded(DType::F32, {8}, 2)});
}

TEST_P(BackendVsCpuTest, GenericErrors) {
  GenericSpec g;
  g.loopRanges = {4};
  g.numInputs = 2;
  g.numOutputs = 1;
  g.maps = {map(1, {{1}}), map(1, {{1}}), map(1, {{1}})};
  g.body = {inst(ScalarOp::Div, DType::I32, 3, 0, 1)};
  g.numRegs = 4;
  g.yields = {3};
  Tensor a = up(seeded(DType::I32, {4}, 1));
  Tensor zero = dut->allocate(DType::I32, {4});
  Tensor out = dut->allocate(DType::I32, {4});
  EXPECT_THROW(synced([&] { dut->generic(g, {&a, &zero}, {}, {&out}); }),
               Error);
  // Out-of-bounds map: loop range 5 over a 4-element operand.
  g.loopRanges = {5};
  Tensor b = up(seeded(DType::I32, {4}, 2));
  EXPECT_THROW(dut->generic(g, {&a, &b}, {}, {&out}), Error);
  // Malformed bytecode.
  g.loopRanges = {4};
  g.body[0].dst = 99;
  EXPECT_THROW(dut->generic(g, {&a, &b}, {}, {&out}), Error);
}

TEST_P(BackendVsCpuTest, Transpose) {
  for (DType t : {DType::F32, DType::I64, DType::I1}) {
    Tensor x = seeded(t, {3, 4, 5}, 1);
    Tensor d = dut->allocate(t, {5, 3, 4}), r(t, {5, 3, 4});
    dut->transpose(up(x), d, {2, 0, 1});
    cpu->transpose(x, r, {2, 0, 1});
    expectClose(down(d), r);
  }
  Tensor x = up(seeded(DType::F32, {3, 4}, 1));
  Tensor bad = dut->allocate(DType::F32, {3, 4});
  EXPECT_THROW(dut->transpose(x, bad, {1, 0}), Error);
}

TEST_P(BackendVsCpuTest, SoftmaxEveryDim) {
  for (DType t : {DType::F32, DType::F64})
    for (int64_t dim = 0; dim < 3; ++dim) {
      Tensor x = seeded(t, {3, 4, 5}, 10 + dim);
      Tensor d = dut->allocate(t, {3, 4, 5}), r(t, {3, 4, 5});
      dut->softmax(up(x), d, dim);
      cpu->softmax(x, r, dim);
      expectClose(down(d), r, t == DType::F32 ? 1e-6 : 1e-14);
    }
}

TEST_P(BackendVsCpuTest, ReduceEveryKindAndType) {
  std::vector<std::vector<int64_t>> dimSets = {{1}, {0, 2}, {}, {0, 1, 2}};
  for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64, DType::I1})
    for (ReductionKind kind : {ReductionKind::Sum, ReductionKind::Max,
                               ReductionKind::Min, ReductionKind::Product})
      for (const auto &dims : dimSets) {
        Tensor x = seeded(t, {3, 4, 5}, 20);
        Shape outShape;
        for (int64_t d = 0; d < 3; ++d)
          if (std::find(dims.begin(), dims.end(), d) == dims.end())
            outShape.push_back(x.getDim(d));
        Tensor d = dut->allocate(t, outShape), r(t, outShape);
        dut->reduce(up(x), d, dims, kind);
        cpu->reduce(x, r, dims, kind);
        expectClose(down(d), r);
      }
  Tensor x = up(seeded(DType::F32, {3, 4}, 1));
  Tensor wrong = dut->allocate(DType::F32, {4});
  EXPECT_THROW(dut->reduce(x, wrong, {1}, ReductionKind::Sum), Error);
}

TEST_P(BackendVsCpuTest, AccumulateEveryKind) {
  for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64, DType::I1})
    for (ReductionKind kind : {ReductionKind::Sum, ReductionKind::Max,
                               ReductionKind::Min, ReductionKind::Product}) {
      Tensor acc = seeded(t, {9, 2}, 30), x = seeded(t, {9, 2}, 31);
      Tensor d = up(host(acc)), r = host(acc);
      dut->accumulate(d, up(x), kind);
      cpu->accumulate(r, x, kind);
      expectClose(down(d), r);
    }
}

TEST_P(BackendVsCpuTest, GatherAndItsBounds) {
  Tensor source = seeded(DType::F32, {5, 4, 3}, 1);
  // One gathered dim, i64 indices [2, 3, 1].
  Tensor idx(DType::I64, {2, 3, 1});
  for (int64_t i = 0; i < 6; ++i)
    idx.setFromInt(i, (i * 5) % 4);
  Tensor d = dut->allocate(DType::F32, {2, 3, 5, 1, 3});
  Tensor r(DType::F32, {2, 3, 5, 1, 3});
  dut->gather(up(source), up(idx), d, {1});
  cpu->gather(source, idx, r, {1});
  expectClose(down(d), r);
  // Two gathered dims, i32 indices.
  Tensor idx2(DType::I32, {4, 2});
  for (int64_t i = 0; i < 4; ++i) {
    idx2.setFromInt(2 * i, (i * 3) % 5);
    idx2.setFromInt(2 * i + 1, i % 3);
  }
  Tensor d2 = dut->allocate(DType::F32, {4, 4}), r2(DType::F32, {4, 4});
  dut->gather(up(source), up(idx2), d2, {0, 2});
  cpu->gather(source, idx2, r2, {0, 2});
  expectClose(down(d2), r2);
  idx2.setFromInt(2, 5); // dim 0 has size 5
  EXPECT_THROW(synced([&] { dut->gather(up(source), up(idx2), d2, {0, 2}); }),
               Error);
}

TEST_P(BackendVsCpuTest, SlicesConcatPad) {
  for (DType t : {DType::F32, DType::I64, DType::I1}) {
    Tensor x = seeded(t, {6, 7, 4}, 40);
    std::vector<int64_t> offsets = {1, 0, 2}, sizes = {2, 3, 2},
                         strides = {2, 3, 1};
    Tensor d = dut->allocate(t, {2, 3, 2}), r(t, {2, 3, 2});
    dut->extractSlice(up(x), d, offsets, sizes, strides);
    cpu->extractSlice(x, r, offsets, sizes, strides);
    expectClose(down(d), r);

    Tensor piece = seeded(t, {2, 3, 2}, 41);
    Tensor dd = up(host(x)), rd = host(x);
    dut->insertSlice(up(piece), dd, offsets, sizes, strides);
    cpu->insertSlice(piece, rd, offsets, sizes, strides);
    expectClose(down(dd), rd);

    Tensor p0 = seeded(t, {2, 7, 4}, 42), p1 = seeded(t, {3, 7, 4}, 43);
    Tensor dp0 = up(p0), dp1 = up(p1);
    Tensor dc = dut->allocate(t, {5, 7, 4}), rc(t, {5, 7, 4});
    dut->concat({&dp0, &dp1}, dc, 0);
    cpu->concat({&p0, &p1}, rc, 0);
    expectClose(down(dc), rc);

    Tensor value(t, {});
    value.setFromInt(0, 1);
    Tensor dpad = dut->allocate(t, {8, 9, 5}), rpad(t, {8, 9, 5});
    dut->pad(up(x), up(value), dpad, {1, 2, 0});
    cpu->pad(x, value, rpad, {1, 2, 0});
    expectClose(down(dpad), rpad);
  }
  Tensor x = up(seeded(DType::F32, {4, 4}, 1));
  Tensor out = dut->allocate(DType::F32, {2, 2});
  EXPECT_THROW(dut->extractSlice(x, out, {3, 0}, {2, 2}, {1, 1}), Error);
}

/// relu(x @ w)^T through the Executor: the kernels chained on one stream,
/// values freed and inits reused as the executor decides.
TEST_P(BackendVsCpuTest, ExecutorRunsAProgram) {
  test::ProgramBuilder b;
  ValueId x = b.input(DType::F32, {16, 24}), w = b.input(DType::F32, {24, 8});
  ValueId c = b.add(OpKind::Empty, {}, DType::F32, {16, 8}).results[0];
  ValueId m = b.add(OpKind::Matmul, {x, w, c}, DType::F32, {16, 8}).results[0];
  auto g = std::make_shared<GenericSpec>();
  g->loopRanges = {16, 8};
  g->numInputs = 1;
  g->numOutputs = 1;
  g->maps = {map(2, {{1, 0}, {0, 1}}), map(2, {{1, 0}, {0, 1}})};
  g->body = {inst(ScalarOp::Const, DType::F32, 2),
             inst(ScalarOp::MaxNum, DType::F32, 3, 0, 2)};
  g->numRegs = 4;
  g->yields = {3};
  b.add(OpKind::Generic, {m, m}, DType::F32, {16, 8}).generic = g;
  ValueId relu = b.last();
  ValueId tInit = b.add(OpKind::Empty, {}, DType::F32, {8, 16}).results[0];
  b.add(OpKind::Transpose, {relu, tInit}, DType::F32, {8, 16}).perm = {1, 0};
  b.output(b.last());
  Program p = b.take();

  Tensor hx = seeded(DType::F32, {16, 24}, 50),
         hw = seeded(DType::F32, {24, 8}, 51);
  auto localCpu = createLocalCommunicator(p.mesh);
  auto localDut = createLocalCommunicator(p.mesh);
  Executor ref(p, *cpu, *localCpu), run(p, *dut, *localDut);
  std::vector<Tensor> want = ref.run({hx, hw});
  std::vector<Tensor> got = run.run({up(hx), up(hw)});
  ASSERT_EQ(got.size(), 1u);
  expectClose(down(got[0]), want[0], 1e-5);
  // A second run reuses the cached generic body and pooled memory.
  got = run.run({up(hx), up(hw)});
  expectClose(down(got[0]), want[0], 1e-5);
}

//===----------------------------------------------------------------------===//
// Precisions: GEMMs in fp32, tf32, bf16 and fp16 against an FP64 reference
// of the (already rounded) inputs; bf16/f16 storage through every kernel.
//===----------------------------------------------------------------------===//

namespace {
struct GemmPrecision {
  const char *name;
  DType in;   // A and B
  bool tf32;
  /// Bound on |got - want| / sum_k |a_ik b_kj|: FP32 accumulation (plus
  /// TF32's 10-bit inputs: each product within 2^-10).
  double tol;
};
const GemmPrecision kGemmPrecisions[] = {{"fp32", DType::F32, false, 1e-6},
                                         {"tf32", DType::F32, true, 2e-3},
                                         {"bf16", DType::BF16, false, 1e-6},
                                         {"fp16", DType::F16, false, 1e-6}};

/// c (f32 or the inputs' type) against c0 + op(a) op(b) in double.
void expectGemm(const Tensor &got, const Tensor &a, const Tensor &b,
                const Tensor &c0, bool ta, bool tb, bool accumulate,
                double tol, const std::string &what) {
  bool batched = a.getRank() == 3;
  int64_t batch = batched ? a.getDim(0) : 1, r = a.getRank();
  int64_t m = got.getDim(r - 2), n = got.getDim(r - 1);
  int64_t k = ta ? a.getDim(r - 2) : a.getDim(r - 1);
  // bf16/f16 results are rounded once: half an ulp of the type.
  double outTol = got.getDType() == DType::BF16  ? 0x1p-8
                  : got.getDType() == DType::F16 ? 0x1p-11
                                                 : 0;
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0, mag = 0;
        for (int64_t l = 0; l < k; ++l) {
          int64_t ia = q * a.getDim(r - 2) * a.getDim(r - 1) +
                       (ta ? l * m + i : i * k + l);
          int64_t ib = q * b.getDim(r - 2) * b.getDim(r - 1) +
                       (tb ? j * k + l : l * n + j);
          double p = a.getAsDouble(ia) * b.getAsDouble(ib);
          acc += p;
          mag += std::fabs(p);
        }
        int64_t ic = (q * m + i) * n + j;
        double c = accumulate ? c0.getAsDouble(ic) : 0;
        double want = c + acc;
        double bound = tol * (mag + std::fabs(c)) + 1e-30 +
                       outTol * std::fabs(want) * 1.01;
        ASSERT_LE(std::fabs(got.getAsDouble(ic) - want), bound)
            << what << " element " << ic << ": got " << got.getAsDouble(ic)
            << ", want " << want;
      }
}
} // namespace

TEST_P(BackendVsCpuTest, GemmEachPrecisionPlainTransposedBatched) {
  for (const GemmPrecision &prec : kGemmPrecisions)
    for (bool batched : {false, true})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (bool accumulate : {true, false}) {
            int64_t batch = batched ? 3 : 1, m = 37, k = 70, n = 23;
            auto shape = [&](int64_t rows, int64_t cols) {
              return batched ? Shape{batch, rows, cols} : Shape{rows, cols};
            };
            Tensor a = seeded(prec.in, ta ? shape(k, m) : shape(m, k), 3);
            Tensor b = seeded(prec.in, tb ? shape(n, k) : shape(k, n), 4);
            // f32 results; bf16/f16 also into their own type.
            std::vector<DType> outs = {DType::F32};
            if (prec.in != DType::F32)
              outs.push_back(prec.in);
            for (DType out : outs) {
              Tensor c0 = seeded(out, shape(m, n), 5);
              Tensor dc = up(host(c0));
              GemmOptions o;
              o.batched = batched;
              o.transA = ta;
              o.transB = tb;
              o.accumulate = accumulate;
              o.tf32 = prec.tf32;
              dut->gemm(up(a), up(b), dc, o);
              std::string what = std::string(prec.name) +
                                 (batched ? " batched" : "") +
                                 (ta ? " ta" : "") + (tb ? " tb" : "") +
                                 (accumulate ? " +=" : " =") + " -> " +
                                 std::string(stringifyDType(out));
              expectGemm(down(dc), a, b, c0, ta, tb, accumulate, prec.tol,
                         what);
            }
          }
  // Mixed or integer operands are one-line errors.
  Tensor bf = up(seeded(DType::BF16, {4, 4}, 1));
  Tensor f16 = up(seeded(DType::F16, {4, 4}, 2));
  Tensor c64 = dut->allocate(DType::F64, {4, 4});
  Tensor c32 = dut->allocate(DType::F32, {4, 4});
  EXPECT_THROW(dut->matmul(bf, f16, c32, false, false, true), Error);
  EXPECT_THROW(dut->matmul(bf, bf, c64, false, false, true), Error);
}

namespace {
double geluTanh(double x) {
  return 0.5 * x *
         (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/// c against act(c0 + op(a) op(b) + bias) in double. The GEMM's bound (as
/// expectGemm's) passes through the activation (ReLU 1-Lipschitz, GELU
/// under 1.13, both forms); GELU may be computed with a fast tanh (2^-10
/// of |x| + 1), the erf form in f32 steps (2^-20 of |x| + 1: 1 + erf
/// cancels for x < 0), and a bf16/f16 c is rounded once, after the
/// epilogue. Returns the
/// largest error relative to its bound.
double expectEpilogue(const Tensor &got, const Tensor &a, const Tensor &b,
                      const Tensor &c0, const Tensor *bias, bool tb,
                      bool accumulate, GemmEpilogue epilogue, double tol,
                      const std::string &what) {
  bool batched = a.getRank() == 3;
  int64_t batch = batched ? a.getDim(0) : 1, r = a.getRank();
  int64_t m = got.getDim(r - 2), n = got.getDim(r - 1), k = a.getDim(r - 1);
  double outTol = got.getDType() == DType::BF16  ? 0x1p-8
                  : got.getDType() == DType::F16 ? 0x1p-11
                                                 : 0;
  bool relu = epilogue == GemmEpilogue::Relu ||
              epilogue == GemmEpilogue::BiasRelu;
  bool gelu = epilogue == GemmEpilogue::Gelu ||
              epilogue == GemmEpilogue::BiasGelu;
  bool geluErf = epilogue == GemmEpilogue::GeluErf ||
                 epilogue == GemmEpilogue::BiasGeluErf;
  double worst = 0;
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0, mag = 0;
        for (int64_t l = 0; l < k; ++l) {
          double p = a.getAsDouble((q * m + i) * k + l) *
                     b.getAsDouble(q * k * n + (tb ? j * k + l : l * n + j));
          acc += p;
          mag += std::fabs(p);
        }
        int64_t ic = (q * m + i) * n + j;
        double c = accumulate ? c0.getAsDouble(ic) : 0;
        double bj = bias ? bias->getAsDouble(j) : 0;
        double pre = c + acc + bj;
        double want = relu      ? std::max(pre, 0.0)
                      : gelu    ? geluTanh(pre)
                      : geluErf ? 0.5 * pre * (1 + std::erf(pre * M_SQRT1_2))
                                : pre;
        double bound = 1.13 * tol * (mag + std::fabs(c) + std::fabs(bj)) +
                       (gelu ? 0x1p-10 * (std::fabs(pre) + 1) : 0) +
                       (geluErf ? 0x1p-20 * (std::fabs(pre) + 1) : 0) +
                       outTol * std::fabs(want) * 1.01 + 1e-30;
        double err = std::fabs(got.getAsDouble(ic) - want);
        worst = std::max(worst, err / bound);
        EXPECT_LE(err, bound) << what << " element " << ic << ": got "
                              << got.getAsDouble(ic) << ", want " << want;
        if (err > bound)
          return worst;
      }
  return worst;
}
} // namespace

/// Each cuBLASLt epilogue (bias, ReLU, GELU and their combinations; the erf
/// GELU, which cuBLASLt lacks, always through the backend's kernel) in each
/// precision, plain and batched, beta 0 and 1, against the double reference;
/// then the same through the backend's own epilogue kernel (what it runs
/// where cuBLASLt has no algorithm with the epilogue). The "cpu" instance
/// checks the CPU backend's epilogues the same way.
TEST_P(BackendVsCpuTest, GemmEpilogueEachPrecision) {
  const GemmEpilogue epilogues[] = {GemmEpilogue::Bias, GemmEpilogue::Relu,
                                    GemmEpilogue::BiasRelu, GemmEpilogue::Gelu,
                                    GemmEpilogue::BiasGelu, GemmEpilogue::GeluErf,
                                    GemmEpilogue::BiasGeluErf};
  for (bool kernel : {false, true})
  for (const GemmPrecision &prec : kGemmPrecisions) {
    if (kernel)
      setenv("AUTOSHARD_CUDA_EPILOGUE_KERNEL", "1", 1);
    double worst = 0;
    for (GemmEpilogue epilogue : epilogues)
      for (bool batched : {false, true})
        for (bool tb : {false, true})
          for (bool accumulate : {true, false}) {
            int64_t batch = batched ? 3 : 1, m = 37, k = 70, n = 23;
            auto shape = [&](int64_t rows, int64_t cols) {
              return batched ? Shape{batch, rows, cols} : Shape{rows, cols};
            };
            Tensor a = seeded(prec.in, shape(m, k), 3);
            Tensor b = seeded(prec.in, tb ? shape(n, k) : shape(k, n), 4);
            std::vector<DType> outs = {DType::F32};
            if (prec.in != DType::F32)
              outs.push_back(prec.in);
            for (DType out : outs) {
              Tensor c0 = seeded(out, shape(m, n), 5);
              Tensor bias = seeded(out, {n}, 6), dbias = up(bias);
              Tensor dc = up(host(c0));
              GemmOptions o;
              o.batched = batched;
              o.transB = tb;
              o.accumulate = accumulate;
              o.tf32 = prec.tf32;
              o.epilogue = epilogue;
              o.bias = hasBias(epilogue) ? &dbias : nullptr;
              std::string what =
                  std::string(prec.name) + " " +
                  std::string(stringifyGemmEpilogue(epilogue)) +
                  (batched ? " batched" : "") + (tb ? " tb" : "") +
                  (accumulate ? " +=" : " =") + " -> " +
                  std::string(stringifyDType(out));
              dut->gemm(up(a), up(b), dc, o);
              worst = std::max(
                  worst, expectEpilogue(down(dc), a, b, c0, o.bias ? &bias : nullptr,
                                        tb, accumulate, epilogue, prec.tol,
                                        what));
            }
          }
    unsetenv("AUTOSHARD_CUDA_EPILOGUE_KERNEL");
    std::printf("[ epilogue ] %s %s%s: largest error %.3f of its bound\n",
                GetParam().c_str(), prec.name, kernel ? " (kernel)" : "",
                worst);
  }
  // A missing, misshapen or mistyped bias, and f64, are one-line errors.
  Tensor a = up(seeded(DType::F32, {4, 5}, 1)), b = up(seeded(DType::F32, {5, 3}, 2));
  Tensor c = dut->allocate(DType::F32, {4, 3});
  Tensor shortBias = up(seeded(DType::F32, {2}, 3));
  Tensor halfBias = up(seeded(DType::BF16, {3}, 3));
  GemmOptions o;
  o.epilogue = GemmEpilogue::BiasRelu;
  EXPECT_THROW(dut->gemm(a, b, c, o), Error);
  o.bias = &shortBias;
  EXPECT_THROW(dut->gemm(a, b, c, o), Error);
  o.bias = &halfBias;
  EXPECT_THROW(dut->gemm(a, b, c, o), Error);
  Tensor d = dut->allocate(DType::F64, {4, 3});
  GemmOptions relu;
  relu.epilogue = GemmEpilogue::Relu;
  EXPECT_THROW(dut->gemm(up(seeded(DType::F64, {4, 5}, 1)),
                         up(seeded(DType::F64, {5, 3}, 2)), d, relu),
               Error);
}

/// Every data-movement and reduction kernel on bf16/f16 storage equals the
/// CPU backend's (f32 compute, round to nearest even); softmax to 1 ulp.
TEST_P(BackendVsCpuTest, HalfStorageKernels) {
  for (DType t : {DType::BF16, DType::F16}) {
    SCOPED_TRACE(std::string(stringifyDType(t)));
    double ulp = t == DType::BF16 ? 0x1p-7 : 0x1p-10;
    Tensor x = seeded(t, {3, 4, 5}, 1);
    expectClose(down(up(x)), x);
    Tensor value(DType::F64, {});
    value.setFromDouble(0, 1.0 / 3);
    Tensor df = dut->allocate(t, {7}), rf(t, {7});
    dut->fill(df, up(value));
    cpu->fill(rf, value);
    expectClose(down(df), rf);
    Tensor dt = dut->allocate(t, {5, 3, 4}), rt(t, {5, 3, 4});
    dut->transpose(up(x), dt, {2, 0, 1});
    cpu->transpose(x, rt, {2, 0, 1});
    expectClose(down(dt), rt);
    for (int64_t dim = 0; dim < 3; ++dim) {
      Tensor ds = dut->allocate(t, {3, 4, 5}), rs(t, {3, 4, 5});
      dut->softmax(up(x), ds, dim);
      cpu->softmax(x, rs, dim);
      expectClose(down(ds), rs, ulp);
    }
    for (ReductionKind kind : {ReductionKind::Sum, ReductionKind::Max,
                               ReductionKind::Min, ReductionKind::Product}) {
      Tensor dr = dut->allocate(t, {3, 5}), rr(t, {3, 5});
      dut->reduce(up(x), dr, {1}, kind);
      cpu->reduce(x, rr, {1}, kind);
      expectClose(down(dr), rr);
      Tensor y = seeded(t, {3, 4, 5}, 2);
      Tensor da = up(host(x)), ra = host(x);
      dut->accumulate(da, up(y), kind);
      cpu->accumulate(ra, y, kind);
      expectClose(down(da), ra);
    }
    Tensor idx(DType::I64, {2, 1});
    idx.setFromInt(0, 2);
    idx.setFromInt(1, 0);
    Tensor dg = dut->allocate(t, {2, 4, 5}), rg(t, {2, 4, 5});
    dut->gather(up(x), up(idx), dg, {0});
    cpu->gather(x, idx, rg, {0});
    expectClose(down(dg), rg);
    Tensor de = dut->allocate(t, {2, 2, 5}), re(t, {2, 2, 5});
    dut->extractSlice(up(x), de, {1, 1, 0}, {2, 2, 5}, {1, 1, 1});
    cpu->extractSlice(x, re, {1, 1, 0}, {2, 2, 5}, {1, 1, 1});
    expectClose(down(de), re);
  }
}

/// A bf16 loop nest of the bytecode path: load, compute, store rounded.
TEST_P(BackendVsCpuTest, GenericOnHalfStorage) {
  for (DType t : {DType::BF16, DType::F16}) {
    // out[i, j] = a[i, j] * b[j] + out[i, j], each step rounded to t.
    GenericSpec g;
    g.loopRanges = {5, 7};
    g.numInputs = 2;
    g.numOutputs = 1;
    g.maps = {map(2, {{1, 0}, {0, 1}}), map(2, {{0, 1}}),
              map(2, {{1, 0}, {0, 1}})};
    g.body = {inst(ScalarOp::Mul, t, 3, 0, 1), inst(ScalarOp::Add, t, 4, 3, 2)};
    g.numRegs = 5;
    g.yields = {4};
    checkGeneric(g, {seeded(t, {5, 7}, 1), seeded(t, {7}, 2)}, {},
                 {seeded(t, {5, 7}, 3)});
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendVsCpuTest,
                         ::testing::Values("cuda", "cpu"),
                         [](const auto &info) { return info.param; });

/// What a machine without a GPU (or a runtime without CUDA) must do: say
/// why, and never crash.
TEST(CudaAvailabilityTest, UnavailableIsAnErrorNotACrash) {
  if (isCudaAvailable()) {
    EXPECT_EQ(getCudaUnavailableReason(), "");
    EXPECT_GT(getCudaDeviceCount(), 0);
    EXPECT_THROW(createCudaBackend(getCudaDeviceCount()), Error);
    EXPECT_THROW(createCudaBackend(-1), Error);
    return;
  }
  EXPECT_NE(getCudaUnavailableReason(), "");
  try {
    createCudaBackend(0);
    FAIL() << "createCudaBackend succeeded without a device";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(pickCudaDevice(3), 0);
}

TEST(CudaAvailabilityTest, NcclNeedsTheCudaBackend) {
  std::unique_ptr<Backend> cpu = createCpuBackend();
  DeviceMesh mesh({MeshAxis{"x", 1}});
  EXPECT_THROW(createNcclCommunicator(mesh, *cpu), Error);
}

TEST(CudaAvailabilityTest, HostTensorsAreRejected) {
  if (!isCudaAvailable())
    GTEST_SKIP() << "CUDA backend not tested: " << getCudaUnavailableReason();
  std::unique_ptr<Backend> gpu = createCudaBackend(0);
  Tensor hostTensor = seeded(DType::F32, {4, 4}, 1);
  Tensor out = gpu->allocate(DType::F32, {4, 4});
  EXPECT_THROW(gpu->transpose(hostTensor, out, {1, 0}), Error);
}

/// NCCL on a one-device mesh in a single process: every collective is the
/// identity (or a copy), the same as the local communicator.
TEST(NcclSingleRankTest, EveryCollectiveOnOneRank) {
  if (!isCudaAvailable())
    GTEST_SKIP() << "NCCL not tested: " << getCudaUnavailableReason();
  std::unique_ptr<Backend> gpu = createCudaBackend(0);
  DeviceMesh mesh({MeshAxis{"x", 1}, MeshAxis{"y", 1}});
  std::unique_ptr<Communicator> comm = createNcclCommunicator(mesh, *gpu);
  AxisList axes = {1};
  comm->prepareGroup(axes);
  Tensor x = seeded(DType::F32, {12}, 1);
  Tensor dx = gpu->upload(x);
  auto fresh = [&] { return gpu->allocate(DType::F32, {12}); };
  // NCCL runs on its own stream: the download waits for it first.
  auto fetch = [&](const Tensor &t) {
    if (std::shared_ptr<Communicator::Completion> done =
            comm->recordCompletion())
      comm->waitFor(*done);
    return gpu->download(t);
  };
  Tensor out = fresh();
  comm->allReduce(dx.getRawData(), out.getRawData(), 12, DType::F32,
                  ReductionKind::Sum, axes);
  expectClose(fetch(out), x);
  out = fresh();
  comm->allGather(dx.getRawData(), out.getRawData(), 48, axes);
  expectClose(fetch(out), x);
  out = fresh();
  comm->allGatherV(dx.getRawData(), out.getRawData(), {48}, axes);
  expectClose(fetch(out), x);
  out = fresh();
  comm->reduceScatter(dx.getRawData(), out.getRawData(), 12, DType::F32,
                      ReductionKind::Max, axes);
  expectClose(fetch(out), x);
  out = fresh();
  comm->reduceScatterV(dx.getRawData(), out.getRawData(), {12}, DType::F32,
                       ReductionKind::Sum, axes);
  expectClose(fetch(out), x);
  out = fresh();
  comm->allToAll(dx.getRawData(), out.getRawData(), 48, axes);
  expectClose(fetch(out), x);
  out = fresh();
  comm->allToAllV(dx.getRawData(), {48}, out.getRawData(), {48}, axes);
  expectClose(fetch(out), x);
  out = fresh();
  comm->sendRecv(dx.getRawData(), 0, out.getRawData(), 0, 48);
  expectClose(fetch(out), x);
  std::vector<std::vector<uint8_t>> all =
      comm->gatherToRoot(dx.getRawData(), 48);
  ASSERT_EQ(all.size(), 1u);
  ASSERT_EQ(all[0].size(), 48u);
  EXPECT_EQ(std::memcmp(all[0].data(), x.getRawData(), 48), 0);
  EXPECT_THROW(
      comm->allGatherV(dx.getRawData(), out.getRawData(), {24, 24}, axes),
      Error);
}

/// Overlap: the executor leaves NCCL exchanges in flight on the
/// communication stream while the compute stream goes on, and waits where a
/// result is first read. With overlap on and off (the same kernels) the
/// outputs are identical, and equal the CPU backend's to GEMM rounding.
TEST(NcclSingleRankTest, OverlapKeepsResultsRight) {
  if (!isCudaAvailable())
    GTEST_SKIP() << "NCCL not tested: " << getCudaUnavailableReason();
  Program p = test::makeOverlapProgram(1024);
  ASSERT_EQ(p.verify(), "");
  Tensor x = seeded(DType::F32, {1024, 1024}, 1);
  std::unique_ptr<Backend> cpu = createCpuBackend();
  std::unique_ptr<Communicator> local = createLocalCommunicator(p.mesh);
  std::vector<Tensor> want = Executor(p, *cpu, *local).run({x});
  std::unique_ptr<Backend> gpu = createCudaBackend(0);
  std::vector<std::vector<Tensor>> got;
  for (bool overlap : {true, false}) {
    std::unique_ptr<Communicator> comm =
        createNcclCommunicator(p.mesh, *gpu, overlap);
    EXPECT_EQ(comm->isAsynchronous(), overlap);
    Executor exec(p, *gpu, *comm);
    std::vector<Tensor> outs;
    for (int run = 0; run < 3; ++run) // pooled buffers are reused
      outs = exec.run({gpu->upload(x)});
    got.emplace_back();
    for (const Tensor &t : outs)
      got.back().push_back(gpu->download(t));
  }
  for (size_t k = 0; k < want.size(); ++k) {
    expectClose(got[0][k], got[1][k]);
    expectClose(got[0][k], want[k], k == 0 ? 1e-4 : 0);
  }
}

} // namespace
