//===- CudnnConv.cpp - 2-D convolution through cuDNN -----------------------===//
//
// See CudnnConv.h. The algorithm is cuDNN's own heuristic choice
// (cudnnGetConvolutionForwardAlgorithm_v7: no trial runs, so no timing
// noise and no device memory spent choosing), the first one it rates
// supported. Math is CUDNN_FMA_MATH: full f32, no TF32 tensor cores, so
// results stay within f32 rounding of the CPU's oneDNN kernel.
//
//===----------------------------------------------------------------------===//

#include "CudnnConv.h"

#ifdef AUTOSHARD_HAVE_CUDNN

#include "CudaContext.h"

#include <cudnn.h>

#include <map>

using namespace autoshard;
using namespace autoshard::rt;
using namespace autoshard::rt::cuda;

namespace {

/// A shape's descriptors and chosen algorithm, made once.
struct Plan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspaceBytes = 0;
  /// False: cuDNN declined this shape; the loop nest runs it.
  bool usable = false;

  ~Plan() {
    if (x)
      cudnnDestroyTensorDescriptor(x);
    if (y)
      cudnnDestroyTensorDescriptor(y);
    if (w)
      cudnnDestroyFilterDescriptor(w);
    if (conv)
      cudnnDestroyConvolutionDescriptor(conv);
  }
};

class CudnnConvImpl final : public CudnnConv {
public:
  CudnnConvImpl(cudaStream_t stream, Workspace workspace)
      : workspace(std::move(workspace)) {
    cudnnStatus_t status = cudnnCreate(&handle);
    if (status != CUDNN_STATUS_SUCCESS)
      throw Error(std::string("cuDNN error in cudnnCreate: ") +
                  cudnnGetErrorString(status));
    status = cudnnSetStream(handle, stream);
    if (status != CUDNN_STATUS_SUCCESS)
      throw Error(std::string("cuDNN error in cudnnSetStream: ") +
                  cudnnGetErrorString(status));
  }
  ~CudnnConvImpl() override {
    plans.clear();
    if (handle)
      cudnnDestroy(handle);
  }

  bool conv2d(const Tensor &in, const Tensor &w, Tensor &out,
              const std::vector<int64_t> &strides,
              const std::vector<int64_t> &dilations) override;

private:
  /// Builds `plan` for the shapes; false when cuDNN declines them.
  bool build(Plan &plan, const Shape &xs, const Shape &ws, const Shape &ys,
             const std::vector<int64_t> &strides,
             const std::vector<int64_t> &dilations);

  cudnnHandle_t handle = nullptr;
  Workspace workspace;
  std::map<std::vector<int64_t>, std::unique_ptr<Plan>> plans;
};

bool ok(cudnnStatus_t s) { return s == CUDNN_STATUS_SUCCESS; }

bool fitsInt(const Shape &s) {
  for (int64_t d : s)
    if (d <= 0 || d > INT32_MAX)
      return false;
  return true;
}

bool CudnnConvImpl::build(Plan &plan, const Shape &xs, const Shape &ws,
                          const Shape &ys, const std::vector<int64_t> &strides,
                          const std::vector<int64_t> &dilations) {
  if (!fitsInt(xs) || !fitsInt(ws) || !fitsInt(ys) || xs[1] % ws[1])
    return false;
  int groups = int(xs[1] / ws[1]);
  if (ws[0] % groups)
    return false;
  if (!ok(cudnnCreateTensorDescriptor(&plan.x)) ||
      !ok(cudnnCreateTensorDescriptor(&plan.y)) ||
      !ok(cudnnCreateFilterDescriptor(&plan.w)) ||
      !ok(cudnnCreateConvolutionDescriptor(&plan.conv)))
    return false;
  if (!ok(cudnnSetTensor4dDescriptor(plan.x, CUDNN_TENSOR_NCHW,
                                     CUDNN_DATA_FLOAT, int(xs[0]), int(xs[1]),
                                     int(xs[2]), int(xs[3]))) ||
      !ok(cudnnSetTensor4dDescriptor(plan.y, CUDNN_TENSOR_NCHW,
                                     CUDNN_DATA_FLOAT, int(ys[0]), int(ys[1]),
                                     int(ys[2]), int(ys[3]))) ||
      !ok(cudnnSetFilter4dDescriptor(plan.w, CUDNN_DATA_FLOAT,
                                     CUDNN_TENSOR_NCHW, int(ws[0]), int(ws[1]),
                                     int(ws[2]), int(ws[3]))) ||
      !ok(cudnnSetConvolution2dDescriptor(
          plan.conv, 0, 0, int(strides[0]), int(strides[1]),
          int(dilations[0]), int(dilations[1]), CUDNN_CROSS_CORRELATION,
          CUDNN_DATA_FLOAT)) ||
      !ok(cudnnSetConvolutionGroupCount(plan.conv, groups)) ||
      !ok(cudnnSetConvolutionMathType(plan.conv, CUDNN_FMA_MATH)))
    return false;
  // cuDNN's own output shape must be the op's (else the op is not a plain
  // unpadded convolution of these operands).
  int n, c, h, wd;
  if (!ok(cudnnGetConvolution2dForwardOutputDim(plan.conv, plan.x, plan.w, &n,
                                                &c, &h, &wd)) ||
      Shape{n, c, h, wd} != ys)
    return false;
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  if (!ok(cudnnGetConvolutionForwardAlgorithm_v7(
          handle, plan.x, plan.w, plan.conv, plan.y,
          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf)))
    return false;
  for (int i = 0; i < found; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS)
      continue;
    size_t bytes = 0;
    if (!ok(cudnnGetConvolutionForwardWorkspaceSize(
            handle, plan.x, plan.w, plan.conv, plan.y, perf[i].algo, &bytes)))
      continue;
    plan.algo = perf[i].algo;
    plan.workspaceBytes = bytes;
    return true;
  }
  return false;
}

bool CudnnConvImpl::conv2d(const Tensor &in, const Tensor &w, Tensor &out,
                           const std::vector<int64_t> &strides,
                           const std::vector<int64_t> &dilations) {
  auto isNCHW = [](const Tensor &t) {
    return t.getDType() == DType::F32 && t.getShape().size() == 4 &&
           t.getSpace() == MemorySpace::Device;
  };
  if (!isNCHW(in) || !isNCHW(w) || !isNCHW(out) || strides.size() != 2 ||
      dilations.size() != 2) {
    ++numDeclined;
    return false;
  }
  std::vector<int64_t> key = in.getShape();
  for (const auto *v : {&w.getShape(), &out.getShape(), &strides, &dilations})
    key.insert(key.end(), v->begin(), v->end());
  std::unique_ptr<Plan> &plan = plans[key];
  if (!plan) {
    plan = std::make_unique<Plan>();
    plan->usable = build(*plan, in.getShape(), w.getShape(), out.getShape(),
                         strides, dilations);
  }
  if (!plan->usable) {
    ++numDeclined;
    return false;
  }
  // The buffer goes back to the pool when this returns; the pool's blocks
  // are reused in stream order, after the convolution queued here.
  std::shared_ptr<Buffer> space;
  if (plan->workspaceBytes)
    space = workspace(int64_t(plan->workspaceBytes));
  const float one = 1.0f;
  cudnnStatus_t status = cudnnConvolutionForward(
      handle, &one, plan->x, in.getRawData(), plan->w, w.getRawData(),
      plan->conv, plan->algo, space ? space->getData() : nullptr,
      plan->workspaceBytes, &one, plan->y, out.getRawData());
  if (status != CUDNN_STATUS_SUCCESS)
    throw Error(std::string("cuDNN error in cudnnConvolutionForward: ") +
                cudnnGetErrorString(status));
  ++numRun;
  return true;
}

} // namespace

std::unique_ptr<CudnnConv> CudnnConv::create(cudaStream_t stream,
                                             Workspace workspace) {
  return std::make_unique<CudnnConvImpl>(stream, std::move(workspace));
}

#else

std::unique_ptr<autoshard::rt::cuda::CudnnConv>
autoshard::rt::cuda::CudnnConv::create(cudaStream_t, Workspace) {
  return nullptr;
}

#endif
