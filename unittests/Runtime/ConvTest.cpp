//===- ConvTest.cpp - oneDNN conv and pool kernels against naive loops ----===//
//
// The CPU backend's Conv2D / Pool2D kernels (runtime/lib/CpuConv.cpp) on
// strided, dilated and padded windows, accumulating into a non-zero init as
// the ops do, against the definition written out as loops.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/Backend.h"
#include "autoshard/Runtime/HostIO.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace autoshard;
using namespace autoshard::rt;

namespace {

struct Window {
  int64_t stride[2], dilation[2], pad[2];
};

/// x[n, c, h, w] with `pad` zero rows/columns around it (what tensor.pad
/// gives the op), as the padded tensor the kernels read.
Tensor padded(Backend &cpu, const Tensor &x, const Window &w) {
  Shape s = x.getShape();
  Shape p = {s[0], s[1], s[2] + 2 * w.pad[0], s[3] + 2 * w.pad[1]};
  Tensor out = cpu.allocate(DType::F32, p);
  Tensor zero = cpu.allocate(DType::F32, {});
  cpu.pad(x, zero, out, {0, 0, w.pad[0], w.pad[1]});
  return out;
}

/// out[n, f, oh, ow] += sum over c, kh, kw of x[n, c, oh*s + kh*d - pad, ...]
/// * wt[f, c, kh, kw], reading zeros outside x.
void naiveConv(const Tensor &x, const Tensor &wt, Tensor &out,
               const Window &w) {
  Shape xs = x.getShape(), ws = wt.getShape(), os = out.getShape();
  const float *X = x.getData<float>(), *W = wt.getData<float>();
  float *O = out.getData<float>();
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t f = 0; f < os[1]; ++f)
      for (int64_t oh = 0; oh < os[2]; ++oh)
        for (int64_t ow = 0; ow < os[3]; ++ow) {
          double acc = O[((n * os[1] + f) * os[2] + oh) * os[3] + ow];
          // Grouped: filter f reads the ws[1] channels of its group.
          int64_t first = f / (os[1] / (xs[1] / ws[1])) * ws[1];
          for (int64_t c = 0; c < ws[1]; ++c)
            for (int64_t kh = 0; kh < ws[2]; ++kh)
              for (int64_t kw = 0; kw < ws[3]; ++kw) {
                int64_t h = oh * w.stride[0] + kh * w.dilation[0] - w.pad[0];
                int64_t v = ow * w.stride[1] + kw * w.dilation[1] - w.pad[1];
                if (h < 0 || h >= xs[2] || v < 0 || v >= xs[3])
                  continue;
                acc += double(X[((n * xs[1] + first + c) * xs[2] + h) *
                                    xs[3] +
                                v]) *
                       W[((f * ws[1] + c) * ws[2] + kh) * ws[3] + kw];
              }
          O[((n * os[1] + f) * os[2] + oh) * os[3] + ow] = float(acc);
        }
}

/// out = max(out, window max) or out += window sum, over the unpadded x.
void naivePool(const Tensor &x, Tensor &out, int64_t kh, int64_t kw,
               const Window &w, bool isMax) {
  Shape xs = x.getShape(), os = out.getShape();
  const float *X = x.getData<float>();
  float *O = out.getData<float>();
  for (int64_t nc = 0; nc < os[0] * os[1]; ++nc)
    for (int64_t oh = 0; oh < os[2]; ++oh)
      for (int64_t ow = 0; ow < os[3]; ++ow) {
        float &o = O[(nc * os[2] + oh) * os[3] + ow];
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            float v = X[(nc * xs[2] + oh * w.stride[0] + i * w.dilation[0]) *
                            xs[3] +
                        ow * w.stride[1] + j * w.dilation[1]];
            o = isMax ? std::max(o, v) : o + v;
          }
      }
}

int64_t outSize(int64_t in, int64_t k, const Window &w, int i) {
  return (in + 2 * w.pad[i] - (k - 1) * w.dilation[i] - 1) / w.stride[i] + 1;
}

void expectNear(const Tensor &a, const Tensor &b, double tol) {
  ASSERT_EQ(a.getShape(), b.getShape());
  for (int64_t i = 0; i < a.getNumElements(); ++i)
    ASSERT_NEAR(a.getAsDouble(i), b.getAsDouble(i), tol) << "element " << i;
}

class ConvTest : public ::testing::TestWithParam<Window> {
protected:
  std::unique_ptr<Backend> cpu = createCpuBackend();
};

/// Plain, grouped and depthwise weights [F, C / groups, KH, KW] (ONNX's
/// layout, what CudnnConvTest compares cuDNN with).
TEST_P(ConvTest, Conv2DMatchesLoops) {
  if (!cpu->hasWindowKernels())
    GTEST_SKIP() << "built without oneDNN";
  Window w = GetParam();
  struct Channels {
    int64_t in, out, groups;
  };
  for (Channels c : {Channels{3, 5, 1}, Channels{6, 12, 2},
                     Channels{6, 12, 3}, Channels{6, 12, 6}}) {
    Tensor x = makeSeededTensor(DType::F32, {2, c.in, 9, 8}, 42, 1);
    Tensor wt =
        makeSeededTensor(DType::F32, {c.out, c.in / c.groups, 3, 2}, 42, 2);
    Shape os = {2, c.out, outSize(9, 3, w, 0), outSize(8, 2, w, 1)};
    // A non-zero init: the op accumulates into it.
    Tensor got = makeSeededTensor(DType::F32, os, 42, 3);
    Tensor want = makeSeededTensor(DType::F32, os, 42, 3);
    cpu->conv2d(padded(*cpu, x, w), wt, got, {w.stride[0], w.stride[1]},
                {w.dilation[0], w.dilation[1]});
    naiveConv(x, wt, want, w);
    expectNear(got, want, 1e-4);
  }
}

TEST_P(ConvTest, Pool2DMatchesLoops) {
  if (!cpu->hasWindowKernels())
    GTEST_SKIP() << "built without oneDNN";
  Window w = GetParam();
  w.pad[0] = w.pad[1] = 0;
  Tensor x = makeSeededTensor(DType::F32, {2, 3, 9, 8}, 42, 4);
  Shape os = {2, 3, outSize(9, 3, w, 0), outSize(8, 2, w, 1)};
  for (bool isMax : {true, false}) {
    Tensor got = makeSeededTensor(DType::F32, os, 42, 5);
    Tensor want = makeSeededTensor(DType::F32, os, 42, 5);
    cpu->pool2d(x, got, {3, 2}, {w.stride[0], w.stride[1]},
                {w.dilation[0], w.dilation[1]},
                isMax ? ReductionKind::Max : ReductionKind::Sum);
    naivePool(x, want, 3, 2, w, isMax);
    expectNear(got, want, 1e-4);
  }
}

TEST(ConvErrors, RejectsNon4DTensors) {
  std::unique_ptr<Backend> cpu = createCpuBackend();
  if (!cpu->hasWindowKernels())
    GTEST_SKIP() << "built without oneDNN";
  Tensor x = makeSeededTensor(DType::F32, {3, 9, 8}, 42, 1);
  Tensor wt = makeSeededTensor(DType::F32, {5, 3, 3, 2}, 42, 2);
  Tensor out = cpu->allocate(DType::F32, {1, 5, 7, 7});
  EXPECT_THROW(cpu->conv2d(x, wt, out, {1, 1}, {1, 1}), Error);
  // 4 input channels do not group into weights of 3.
  Tensor x4 = makeSeededTensor(DType::F32, {1, 4, 9, 8}, 42, 1);
  EXPECT_THROW(cpu->conv2d(x4, wt, out, {1, 1}, {1, 1}), Error);
}

// stride, dilation, padding per spatial dim.
INSTANTIATE_TEST_SUITE_P(
    Windows, ConvTest,
    ::testing::Values(Window{{1, 1}, {1, 1}, {0, 0}},
                      Window{{1, 1}, {1, 1}, {1, 1}},
                      Window{{2, 1}, {1, 1}, {1, 0}},
                      Window{{1, 2}, {2, 1}, {2, 1}},
                      Window{{2, 2}, {2, 2}, {1, 2}}));

} // namespace
