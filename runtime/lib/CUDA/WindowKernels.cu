//===- WindowKernels.cu - Direct conv and pool kernels on the GPU ---------===//
//
// See WindowKernels.h. Each thread sums its window in the loop nest's order
// (c, kh, kw) in f32.
//
//===----------------------------------------------------------------------===//

#include "WindowKernels.h"

#include <string>

using namespace autoshard;
using namespace autoshard::rt;
using namespace autoshard::rt::cuda;

namespace {

constexpr int kThreads = 256;

__global__ void conv2dDirect(const float *in, const float *weight, float *out,
                             WindowDims d, int64_t total) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total)
    return;
  int64_t ow = i % d.ow, oh = (i / d.ow) % d.oh, f = (i / (d.ow * d.oh)) % d.f,
          n = i / (d.ow * d.oh * d.f);
  int64_t cg = d.c / d.groups, fg = d.f / d.groups, g = f / fg;
  float acc = 0.0f;
  for (int64_t c = 0; c < cg; ++c) {
    const float *x = in + ((n * d.c + g * cg + c) * d.h) * d.w;
    const float *k = weight + ((f * cg + c) * d.kh) * d.kw;
    for (int64_t kh = 0; kh < d.kh; ++kh)
      for (int64_t kw = 0; kw < d.kw; ++kw)
        acc += x[(oh * d.strideH + kh * d.dilationH) * d.w + ow * d.strideW +
                 kw * d.dilationW] *
               k[kh * d.kw + kw];
  }
  out[i] += acc;
}

__global__ void pool2d(const float *in, float *out, WindowDims d, bool isMax,
                       int64_t total) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total)
    return;
  int64_t ow = i % d.ow, oh = (i / d.ow) % d.oh, nc = i / (d.ow * d.oh);
  const float *x = in + nc * d.h * d.w;
  float acc = out[i];
  for (int64_t kh = 0; kh < d.kh; ++kh)
    for (int64_t kw = 0; kw < d.kw; ++kw) {
      float v = x[(oh * d.strideH + kh * d.dilationH) * d.w + ow * d.strideW +
                  kw * d.dilationW];
      acc = isMax ? fmaxf(acc, v) : acc + v;
    }
  out[i] = acc;
}

unsigned blocks(int64_t total) {
  return unsigned((total + kThreads - 1) / kThreads);
}

} // namespace

cudaError_t autoshard::rt::cuda::launchConv2dDirect(const float *in,
                                                    const float *weight,
                                                    float *out, WindowDims d,
                                                    cudaStream_t stream) {
  int64_t total = d.n * d.f * d.oh * d.ow;
  if (total == 0)
    return cudaSuccess;
  conv2dDirect<<<blocks(total), kThreads, 0, stream>>>(in, weight, out, d,
                                                       total);
  return cudaGetLastError();
}

cudaError_t autoshard::rt::cuda::launchPool2d(const float *in, float *out,
                                              WindowDims d, bool isMax,
                                              cudaStream_t stream) {
  int64_t total = d.n * d.c * d.oh * d.ow;
  if (total == 0)
    return cudaSuccess;
  pool2d<<<blocks(total), kThreads, 0, stream>>>(in, out, d, isMax, total);
  return cudaGetLastError();
}

WindowDims autoshard::rt::cuda::getWindowDims(
    const Tensor &in, const Shape &weight, const Tensor &out,
    const std::vector<int64_t> &strides, const std::vector<int64_t> &dilations,
    const char *op) {
  auto fail = [&](const std::string &why) {
    return Error(std::string(op) + ": " + why);
  };
  for (const Tensor *t : {&in, &out})
    if (t->getDType() != DType::F32 || t->getRank() != 4)
      throw fail("expects 4-D f32 tensors, not " + t->getTypeString());
  if (weight.size() != 4 || strides.size() != 2 || dilations.size() != 2)
    throw fail("expects a 4-D window, 2 strides and 2 dilations");
  const Shape &x = in.getShape(), &y = out.getShape();
  WindowDims d{x[0], x[1], x[2], x[3], weight[0], 1, weight[2], weight[3],
               y[2], y[3], strides[0], strides[1], dilations[0],
               dilations[1]};
  if (weight[1] < 1 || d.c % weight[1] || d.kh < 1 || d.kw < 1)
    throw fail("a weight of [" + std::to_string(weight[0]) + ", " +
               std::to_string(weight[1]) + ", ...] does not fit " +
               in.getTypeString());
  d.groups = d.c / weight[1];
  for (int64_t v : {d.strideH, d.strideW, d.dilationH, d.dilationW})
    if (v < 1)
      throw fail("non-positive stride or dilation");
  if (d.f % d.groups || y[0] != d.n || y[1] != d.f ||
      (d.oh > 0 && (d.oh - 1) * d.strideH + (d.kh - 1) * d.dilationH >= d.h) ||
      (d.ow > 0 && (d.ow - 1) * d.strideW + (d.kw - 1) * d.dilationW >= d.w))
    throw fail(out.getTypeString() + " is not the window op's output on " +
               in.getTypeString());
  return d;
}
