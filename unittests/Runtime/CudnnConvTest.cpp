//===- CudnnConvTest.cpp - cuDNN and GPU window kernels vs the CPU's ------===//
//
// The CUDA backend's Conv2D (cuDNN 9, runtime/lib/CUDA/CudnnConv.cpp) and
// its direct fallback and pool kernels (WindowKernels.cu) on strided,
// dilated and grouped windows, accumulating into a non-zero init as the
// ops do, against the CPU backend's oneDNN kernels. Each case also checks
// that cuDNN itself ran it (not the fallback). Skipped with the reason when
// no GPU is visible or the runtime has no CUDA.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/CudaBackend.h"
#include "autoshard/Runtime/HostIO.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>

#ifdef AUTOSHARD_HAVE_CUDA
#include "../../runtime/lib/CUDA/CudnnConv.h"
#include "../../runtime/lib/CUDA/WindowKernels.h"
#endif

using namespace autoshard;
using namespace autoshard::rt;

namespace {

/// A conv's shapes: input [n, c, h, w] (already padded), weight
/// [f, c / groups, kh, kw].
struct ConvCase {
  const char *name;
  int64_t n, c, h, w, f, groups, kh, kw;
  int64_t stride[2], dilation[2];
  Shape in() const { return {n, c, h, w}; }
  Shape weight() const { return {f, c / groups, kh, kw}; }
  Shape out() const {
    return {n, f, (h - (kh - 1) * dilation[0] - 1) / stride[0] + 1,
            (w - (kw - 1) * dilation[1] - 1) / stride[1] + 1};
  }
  std::vector<int64_t> strides() const { return {stride[0], stride[1]}; }
  std::vector<int64_t> dilations() const {
    return {dilation[0], dilation[1]};
  }
};

const ConvCase kCases[] = {
    {"plain3x3", 2, 8, 16, 16, 16, 1, 3, 3, {1, 1}, {1, 1}},
    {"strided", 2, 8, 17, 15, 12, 1, 3, 3, {2, 3}, {1, 1}},
    {"dilated", 2, 6, 20, 18, 10, 1, 3, 3, {1, 1}, {2, 3}},
    {"strided_dilated", 1, 4, 23, 21, 8, 1, 5, 3, {3, 2}, {2, 2}},
    {"grouped", 2, 8, 14, 14, 12, 4, 3, 3, {1, 1}, {1, 1}},
    {"depthwise", 2, 16, 12, 12, 16, 16, 3, 3, {2, 2}, {1, 1}},
    {"pointwise", 4, 32, 7, 7, 64, 1, 1, 1, {1, 1}, {1, 1}},
    {"resnet_stem", 2, 3, 38, 38, 16, 1, 7, 7, {2, 2}, {1, 1}},
};

void expectClose(const Tensor &got, const Tensor &want, double tol,
                 const char *what) {
  ASSERT_EQ(got.getShape(), want.getShape()) << what;
  for (int64_t i = 0; i < want.getNumElements(); ++i) {
    double g = got.getAsDouble(i), w = want.getAsDouble(i);
    ASSERT_LE(std::fabs(g - w), tol * std::max(1.0, std::fabs(w)))
        << what << ": element " << i << ": got " << g << ", want " << w;
  }
}

class CudnnConvTest : public ::testing::TestWithParam<ConvCase> {
protected:
  void SetUp() override {
#ifndef AUTOSHARD_HAVE_CUDA
    GTEST_SKIP() << "this runtime was built without CUDA";
#else
    if (!isCudaAvailable())
      GTEST_SKIP() << "CUDA not tested: " << getCudaUnavailableReason();
    cpu = createCpuBackend();
    if (!cpu->hasWindowKernels())
      GTEST_SKIP() << "the CPU reference needs oneDNN";
    gpu = createCudaBackend(0);
#endif
  }

  /// The CPU's oneDNN result of out += conv(in, w) from the seeded init.
  Tensor reference(const ConvCase &c, const Tensor &x, const Tensor &wt) {
    Tensor want = makeSeededTensor(DType::F32, c.out(), 11, 3);
    cpu->conv2d(x, wt, want, c.strides(), c.dilations());
    return want;
  }

  std::unique_ptr<Backend> cpu, gpu;
};

/// Through the backend interface: what the executor calls for Conv2D.
TEST_P(CudnnConvTest, BackendConvMatchesOneDnn) {
  const ConvCase &c = GetParam();
  Tensor x = makeSeededTensor(DType::F32, c.in(), 11, 1);
  Tensor wt = makeSeededTensor(DType::F32, c.weight(), 11, 2);
  Tensor init = makeSeededTensor(DType::F32, c.out(), 11, 3);
  ASSERT_TRUE(gpu->hasWindowKernels());
  Tensor out = gpu->upload(init);
  gpu->conv2d(gpu->upload(x), gpu->upload(wt), out, c.strides(),
              c.dilations());
  expectClose(gpu->download(out), reference(c, x, wt), 1e-4, c.name);
}

#ifdef AUTOSHARD_HAVE_CUDA
/// A device buffer of its own for the direct calls below.
class DeviceBuffer : public Buffer {
public:
  explicit DeviceBuffer(int64_t n) {
    if (cudaMalloc(&data, n) != cudaSuccess)
      throw Error("cudaMalloc failed");
    bytes = n;
    space = MemorySpace::Device;
  }
  ~DeviceBuffer() override { cudaFree(data); }
};

Tensor onDevice(const Tensor &host) {
  auto buf = std::make_shared<DeviceBuffer>(host.getBytes());
  cudaMemcpy(buf->getData(), host.getRawData(), host.getBytes(),
             cudaMemcpyHostToDevice);
  return Tensor(host.getDType(), host.getShape(), buf);
}

Tensor toHost(const Tensor &dev) {
  Tensor host(dev.getDType(), dev.getShape());
  cudaDeviceSynchronize();
  cudaMemcpy(host.getRawData(), dev.getRawData(), dev.getBytes(),
             cudaMemcpyDeviceToHost);
  return host;
}

/// cuDNN itself runs every case (none falls back), and so does the direct
/// kernel; both match oneDNN.
TEST_P(CudnnConvTest, CudnnAndDirectKernelMatchOneDnn) {
  const ConvCase &c = GetParam();
  Tensor x = makeSeededTensor(DType::F32, c.in(), 11, 1);
  Tensor wt = makeSeededTensor(DType::F32, c.weight(), 11, 2);
  Tensor init = makeSeededTensor(DType::F32, c.out(), 11, 3);
  Tensor want = reference(c, x, wt);
  Tensor dx = onDevice(x), dw = onDevice(wt);
  int64_t workspaceAsked = 0;
  std::unique_ptr<cuda::CudnnConv> cudnn = cuda::CudnnConv::create(
      nullptr, [&](int64_t bytes) -> std::shared_ptr<Buffer> {
        workspaceAsked += bytes;
        return std::make_shared<DeviceBuffer>(bytes);
      });
  ASSERT_TRUE(cudnn) << "the CUDA runtime was built without cuDNN";
  Tensor out = onDevice(init);
  ASSERT_TRUE(cudnn->conv2d(dx, dw, out, c.strides(), c.dilations()))
      << c.name << ": cuDNN declined";
  expectClose(toHost(out), want, 1e-4, c.name);
  // Second call: the cached plan.
  Tensor again = onDevice(init);
  ASSERT_TRUE(cudnn->conv2d(dx, dw, again, c.strides(), c.dilations()));
  expectClose(toHost(again), want, 1e-4, c.name);
  EXPECT_EQ(cudnn->getNumRun(), 2);
  EXPECT_EQ(cudnn->getNumDeclined(), 0);
  std::printf("cudnn conv %-16s in [%lld,%lld,%lld,%lld] groups %lld: "
              "cuDNN ran, workspace %lld B, matches oneDNN\n",
              c.name, (long long)c.n, (long long)c.c, (long long)c.h,
              (long long)c.w, (long long)c.groups,
              (long long)(workspaceAsked / 2));

  Tensor direct = onDevice(init);
  cuda::WindowDims d = cuda::getWindowDims(dx, c.weight(), direct,
                                           c.strides(), c.dilations(), "test");
  ASSERT_EQ(cuda::launchConv2dDirect(static_cast<const float *>(
                                         dx.getRawData()),
                                     static_cast<const float *>(
                                         dw.getRawData()),
                                     static_cast<float *>(direct.getRawData()),
                                     d, nullptr),
            cudaSuccess);
  expectClose(toHost(direct), want, 1e-4, c.name);
}

/// An output shape cuDNN does not compute from these operands (a conv that
/// leaves input rows unread) is declined, queueing nothing; the backend
/// then runs the direct kernel, against the definition as loops.
TEST(CudnnConvFallback, DeclinedShapeRunsDirectKernel) {
  if (!isCudaAvailable())
    GTEST_SKIP() << "CUDA not tested: " << getCudaUnavailableReason();
  // 10 input rows, 3x3 kernel, stride 1, but only 4 output rows wanted.
  Tensor x = makeSeededTensor(DType::F32, {1, 2, 10, 6}, 5, 1);
  Tensor wt = makeSeededTensor(DType::F32, {3, 2, 3, 3}, 5, 2);
  Tensor init = makeSeededTensor(DType::F32, {1, 3, 4, 4}, 5, 3);
  std::unique_ptr<cuda::CudnnConv> cudnn = cuda::CudnnConv::create(
      nullptr, [](int64_t b) { return std::make_shared<DeviceBuffer>(b); });
  ASSERT_TRUE(cudnn);
  Tensor dx = onDevice(x), dw = onDevice(wt), out = onDevice(init);
  EXPECT_FALSE(cudnn->conv2d(dx, dw, out, {1, 1}, {1, 1}));
  EXPECT_EQ(cudnn->getNumDeclined(), 1);
  expectClose(toHost(out), init, 0, "untouched after a decline");

  std::unique_ptr<Backend> gpu = createCudaBackend(0);
  Tensor got = gpu->upload(init);
  gpu->conv2d(gpu->upload(x), gpu->upload(wt), got, {1, 1}, {1, 1});
  Tensor want = init.clone();
  const float *X = x.getData<float>(), *W = wt.getData<float>();
  float *O = want.getData<float>();
  for (int64_t f = 0; f < 3; ++f)
    for (int64_t oh = 0; oh < 4; ++oh)
      for (int64_t ow = 0; ow < 4; ++ow) {
        float acc = 0;
        for (int64_t c = 0; c < 2; ++c)
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j)
              acc += X[(c * 10 + oh + i) * 6 + ow + j] *
                     W[((f * 2 + c) * 3 + i) * 3 + j];
        O[(f * 4 + oh) * 4 + ow] += acc;
      }
  expectClose(gpu->download(got), want, 1e-5, "fallback");
  std::printf("cudnn conv declined shape: direct kernel matches\n");
}
#endif

/// The GPU's pool kernel (max and sum, strided and dilated) against oneDNN.
TEST_P(CudnnConvTest, BackendPoolMatchesOneDnn) {
  const ConvCase &c = GetParam();
  Tensor x = makeSeededTensor(DType::F32, c.in(), 13, 1);
  Shape os = c.out();
  os[1] = c.c;
  for (ReductionKind kind : {ReductionKind::Max, ReductionKind::Sum}) {
    Tensor init = makeSeededTensor(DType::F32, os, 13, 2);
    Tensor want = init.clone();
    cpu->pool2d(x, want, {c.kh, c.kw}, c.strides(), c.dilations(), kind);
    Tensor got = gpu->upload(init);
    gpu->pool2d(gpu->upload(x), got, {c.kh, c.kw}, c.strides(),
                c.dilations(), kind);
    expectClose(gpu->download(got), want, 1e-5, c.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Windows, CudnnConvTest, ::testing::ValuesIn(kCases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

} // namespace
