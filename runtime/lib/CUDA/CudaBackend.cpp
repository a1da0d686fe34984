//===- CudaBackend.cpp - The CUDA backend (cuBLAS + kernels) --------------===//
//
// Host half of the CUDA backend: argument checks (the same ones, with the
// same messages, as the CPU backend), shape arithmetic folded into the
// by-value descriptors of CudaKernels.h, and cuBLAS(Lt) for GEMMs. All work is
// queued on the backend's stream; only download() and synchronize() wait for
// the device. Kernels that can fail on data (gather, generic bodies with
// tensor.extract or integer division) record the fault in a device word that
// those two calls read afterwards, so such kernels can be recorded into a
// CUDA graph like the rest.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/CudaBackend.h"
#include "../BufferPool.h"
#include "../KernelChecks.h"
#include "CudaContext.h"
#include "CudaGemm.h"
#include "CudaKernels.h"
#include "CudnnConv.h"
#include "GemmEpilogue.h"
#include "WindowKernels.h"

#include <cublas_v2.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

using namespace autoshard;
using namespace autoshard::rt;
using namespace autoshard::rt::cuda;

void autoshard::rt::cuda::check(cudaError_t status, const char *call) {
  if (status != cudaSuccess)
    throw Error(std::string("CUDA error in ") + call + ": " +
                cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}

static void checkBlas(cublasStatus_t status, const char *call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS error in ") + call + ": " +
                cublasGetStatusName(status) + ": " +
                cublasGetStatusString(status));
}
#define AUTOSHARD_CUBLAS_CHECK(call) checkBlas((call), #call)

//===----------------------------------------------------------------------===//
// Availability
//===----------------------------------------------------------------------===//

std::string autoshard::rt::getCudaUnavailableReason() {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  (void)cudaGetLastError(); // do not leave the error sticky for others
  if (status != cudaSuccess)
    return std::string("no usable CUDA device (cudaGetDeviceCount: ") +
           cudaGetErrorString(status) + ")";
  if (count == 0)
    return "no CUDA device is visible to this process";
  return "";
}

bool autoshard::rt::isCudaAvailable() {
  return getCudaUnavailableReason().empty();
}

int autoshard::rt::getCudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError(); // do not leave the error sticky for others
    return 0;
  }
  return count;
}

int autoshard::rt::pickCudaDevice(int64_t rank) {
  int64_t local = rank;
  for (const char *var :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *value = std::getenv(var)) {
      local = std::atoll(value);
      break;
    }
  int count = getCudaDeviceCount();
  return count > 0 ? static_cast<int>(local % count) : 0;
}

//===----------------------------------------------------------------------===//
// Context and device buffers
//===----------------------------------------------------------------------===//

namespace {

/// Everything that must outlive the last device buffer: buffers free
/// themselves on this stream, so tensors may outlive the backend object.
struct Context {
  StreamInfo info{0, nullptr};
  cublasHandle_t blas = nullptr;
  std::unique_ptr<LtGemm> lt; // made on the first f32/bf16/f16 GEMM
  DeviceFault *fault = nullptr;
  /// What each fault site names (DeviceFault::site): the kernel, the source
  /// tensor's type and the instruction's location, made once per distinct
  /// triple so that recorded graphs keep valid site numbers.
  struct FaultSite {
    std::string what, source, location;
  };
  std::vector<FaultSite> faultSites;
  std::unordered_map<std::string, int32_t> faultSiteIds;
  /// A kernel that can fault was queued (or replayed) since the last check.
  bool faultArmed = false;
  /// Uploaded generic bodies by content (a spec's address may be reused).
  std::unordered_map<std::string, void *> bodies;
  /// Loaded Program::gpuModule PTX by content, and their kernels by name.
  std::unordered_map<std::string, cudaLibrary_t> libraries;
  std::unordered_map<std::string, cudaKernel_t> generated;

  ~Context() {
    // Destructors must not throw; errors here have nowhere to go.
    cudaSetDevice(info.device);
    if (info.stream)
      cudaStreamSynchronize(info.stream);
    for (auto &entry : bodies)
      cudaFree(entry.second);
    for (auto &entry : libraries)
      cudaLibraryUnload(entry.second);
    if (fault)
      cudaFree(fault);
    lt.reset();
    if (blas)
      cublasDestroy(blas);
    if (info.stream)
      cudaStreamDestroy(info.stream);
  }
};

uint8_t *devicePtr(const Tensor &t, const char *what) {
  if (t.isNull())
    throw Error(std::string(what) + ": missing tensor");
  if (t.getSpace() != MemorySpace::Device)
    throw Error(std::string(what) + ": " + t.getTypeString() +
                " is in host memory; the CUDA backend needs device tensors "
                "(upload them first)");
  return static_cast<uint8_t *>(t.getRawData());
}

void checkMaxRank(int64_t rank, const char *what) {
  if (rank > kMaxRank)
    throw Error(std::string(what) + ": rank " + std::to_string(rank) +
                " exceeds the CUDA backend's limit of " +
                std::to_string(kMaxRank));
}

int toBlasInt(int64_t v, const char *what) {
  if (v < 0 || v > INT_MAX)
    throw Error(std::string(what) + ": dimension " + std::to_string(v) +
                " exceeds cuBLAS's int range");
  return static_cast<int>(v);
}

/// Flattens an affine map of one generic operand into a base offset plus a
/// stride per loop, rejecting out-of-bounds accesses up front (the index is
/// affine, so its extremes over the iteration box are at corners).
GenericOperand foldMap(const AffineMapSpec &map, const Tensor &t,
                       const std::vector<int64_t> &ranges, int operand) {
  int64_t numLoops = static_cast<int64_t>(ranges.size());
  if (map.numResults != t.getRank() ||
      static_cast<int64_t>(map.coeffs.size()) != map.numResults * numLoops ||
      static_cast<int64_t>(map.consts.size()) != map.numResults)
    throw Error("generic: indexing map of operand " + std::to_string(operand) +
                " does not match its rank-" + std::to_string(t.getRank()) +
                " tensor " + t.getTypeString());
  Shape strides = getStrides(t.getShape());
  GenericOperand acc;
  std::memset(&acc, 0, sizeof(acc));
  acc.data = devicePtr(t, "generic");
  acc.type = t.getDType();
  for (int64_t r = 0; r < map.numResults; ++r) {
    int64_t lo = map.consts[r], hi = map.consts[r];
    for (int64_t l = 0; l < numLoops; ++l) {
      int64_t c = map.coeffs[r * numLoops + l];
      int64_t span = c * (ranges[l] - 1);
      (span < 0 ? lo : hi) += span;
      acc.loopStrides[l] += c * strides[r];
    }
    if (lo < 0 || hi >= t.getDim(r))
      throw Error("generic: operand " + std::to_string(operand) +
                  " is accessed out of bounds in dim " + std::to_string(r) +
                  " (index range [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "] of " + t.getTypeString() + ")");
    acc.base += map.consts[r] * strides[r];
  }
  return acc;
}

/// The loops one thread per point may own: those every output indexes
/// through a result of their own (so distinct points write distinct
/// elements). Empty when some output also depends on another loop, e.g.
/// out[i + j]: then one thread runs the whole nest sequentially.
std::vector<bool> findParallelLoops(const GenericSpec &spec) {
  size_t numLoops = spec.loopRanges.size();
  std::vector<bool> parallel(numLoops, spec.numOutputs > 0);
  std::vector<bool> used(numLoops, false);
  for (int32_t o = 0; o < spec.numOutputs; ++o) {
    const AffineMapSpec &map = spec.maps[spec.numInputs + o];
    std::vector<bool> pure(numLoops, false);
    for (int64_t r = 0; r < map.numResults; ++r) {
      int64_t only = -1, nonzero = 0;
      for (size_t l = 0; l < numLoops; ++l)
        if (map.coeffs[r * numLoops + l] != 0) {
          used[l] = true;
          only = static_cast<int64_t>(l);
          ++nonzero;
        }
      if (nonzero == 1)
        pure[only] = true;
    }
    for (size_t l = 0; l < numLoops; ++l)
      parallel[l] = parallel[l] && pure[l];
  }
  for (size_t l = 0; l < numLoops; ++l)
    if (used[l] && !parallel[l])
      return std::vector<bool>(numLoops, false);
  return parallel;
}

bool canFault(const GenericSpec &spec) {
  for (const ScalarInst &in : spec.body) {
    if (in.op == ScalarOp::Captured)
      return true;
    bool division = in.op == ScalarOp::Div || in.op == ScalarOp::Rem ||
                    in.op == ScalarOp::DivU || in.op == ScalarOp::RemU;
    if (division && !isFloatDType(in.type))
      return true;
  }
  return false;
}

class CudaBackend final : public Backend {
public:
  explicit CudaBackend(int device) : ctx(std::make_shared<Context>()) {
    std::string why = getCudaUnavailableReason();
    if (!why.empty())
      throw Error("cannot use the CUDA backend: " + why);
    int count = getCudaDeviceCount();
    if (device < 0 || device >= count)
      throw Error("CUDA device " + std::to_string(device) +
                  " does not exist (" + std::to_string(count) + " visible)");
    ctx->info.device = device;
    AUTOSHARD_CUDA_CHECK(cudaSetDevice(device));
    AUTOSHARD_CUDA_CHECK(
        cudaStreamCreateWithFlags(&ctx->info.stream, cudaStreamNonBlocking));
    // Keep freed blocks in the stream-ordered pool: the executor frees
    // every value after its last use and reallocates the same sizes.
    cudaMemPool_t streamPool;
    AUTOSHARD_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&streamPool, device));
    uint64_t keep = UINT64_MAX;
    AUTOSHARD_CUDA_CHECK(cudaMemPoolSetAttribute(
        streamPool, cudaMemPoolAttrReleaseThreshold, &keep));
    AUTOSHARD_CUBLAS_CHECK(cublasCreate(&ctx->blas));
    AUTOSHARD_CUBLAS_CHECK(cublasSetStream(ctx->blas, ctx->info.stream));
    AUTOSHARD_CUDA_CHECK(cudaMalloc(&ctx->fault, sizeof(DeviceFault)));
    AUTOSHARD_CUDA_CHECK(cudaMemset(ctx->fault, 0, sizeof(DeviceFault)));
    // Freed buffers are reused without synchronising: every kernel, copy
    // and NCCL call runs on this one stream, in order. Blocks go back to
    // the stream-ordered pool when the last buffer and the backend are gone.
    std::shared_ptr<Context> c = ctx;
    pool = BufferPool::create(
        MemorySpace::Device,
        [c](size_t bytes) {
          void *block = nullptr;
          AUTOSHARD_CUDA_CHECK(cudaMallocAsync(&block, bytes, c->info.stream));
          return block;
        },
        [c](void *block) { cudaFreeAsync(block, c->info.stream); });
  }

  const StreamInfo &getInfo() const { return ctx->info; }

  std::string getName() const override {
    return "cuda:" + std::to_string(ctx->info.device);
  }

  Tensor allocate(DType type, const Shape &shape) override {
    Tensor t = allocateUninitialized(type, shape);
    if (t.getBytes() > 0)
      AUTOSHARD_CUDA_CHECK(
          cudaMemsetAsync(t.getRawData(), 0, t.getBytes(), stream()));
    return t;
  }

  Tensor upload(const Tensor &host) override {
    if (host.getSpace() == MemorySpace::Device)
      return host;
    Tensor t = allocateUninitialized(host.getDType(), host.getShape());
    if (t.getBytes() > 0) {
      AUTOSHARD_CUDA_CHECK(cudaMemcpyAsync(t.getRawData(), host.getRawData(),
                                           t.getBytes(), cudaMemcpyHostToDevice,
                                           stream()));
      // The host tensor may be freed as soon as we return.
      AUTOSHARD_CUDA_CHECK(cudaStreamSynchronize(stream()));
    }
    return t;
  }

  Tensor download(const Tensor &t) override {
    if (t.getSpace() == MemorySpace::Host)
      return t;
    Tensor host(t.getDType(), t.getShape());
    if (t.getBytes() > 0)
      AUTOSHARD_CUDA_CHECK(cudaMemcpyAsync(host.getRawData(), t.getRawData(),
                                           t.getBytes(), cudaMemcpyDeviceToHost,
                                           stream()));
    AUTOSHARD_CUDA_CHECK(cudaStreamSynchronize(stream()));
    checkFaults(); // the data may come from a kernel that faulted
    return host;
  }

  void synchronize() override {
    AUTOSHARD_CUDA_CHECK(cudaStreamSynchronize(stream()));
    checkFaults();
  }

  void copy(const Tensor &src, Tensor &dst) override {
    if (src.getBytes() != dst.getBytes() || src.getDType() != dst.getDType())
      throw Error("copy: " + src.getTypeString() + " does not fit " +
                  dst.getTypeString());
    uint8_t *s = devicePtr(src, "copy"), *d = devicePtr(dst, "copy");
    if (s != d && src.getBytes() > 0)
      AUTOSHARD_CUDA_CHECK(cudaMemcpyAsync(d, s, src.getBytes(),
                                           cudaMemcpyDeviceToDevice, stream()));
  }

  void fill(Tensor &dst, const Tensor &value) override {
    if (value.getNumElements() != 1)
      throw Error("fill: the fill value must be a single element, got " +
                  value.getTypeString());
    Tensor v = upload(value);
    AUTOSHARD_CUDA_CHECK(launchFill(devicePtr(dst, "fill"), dst.getDType(),
                                    dst.getNumElements(), devicePtr(v, "fill"),
                                    v.getDType(), stream()));
  }

  void matmul(const Tensor &a, const Tensor &b, Tensor &c, bool transA,
              bool transB, bool accumulate) override {
    gemm(a, b, c, {false, transA, transB, accumulate, false});
  }

  void batchMatmul(const Tensor &a, const Tensor &b, Tensor &c, bool transA,
                   bool transB, bool accumulate) override {
    gemm(a, b, c, {true, transA, transB, accumulate, false});
  }

  void gemm(const Tensor &a, const Tensor &b, Tensor &c,
            const GemmOptions &o) override {
    int64_t batch = checkGemmOperands(a, b, c, o);
    gemm(a, b, c, o.transA, o.transB, o.accumulate, batch, o.tf32,
         o.epilogue, o.bias);
  }

  void generic(const GenericSpec &spec,
               const std::vector<const Tensor *> &inputs,
               const std::vector<const Tensor *> &captures,
               const std::vector<Tensor *> &outputs) override;

  void prepare(const Program &program) override;

  void transpose(const Tensor &in, Tensor &out,
                 const std::vector<int64_t> &perm) override {
    int64_t rank = in.getRank();
    checkSameType(in, out, "transpose");
    if (static_cast<int64_t>(perm.size()) != rank || out.getRank() != rank)
      throw Error("transpose: permutation does not match " +
                  in.getTypeString());
    checkMaxRank(rank, "transpose");
    Shape inStrides = getStrides(in.getShape());
    Shape outStrides = getStrides(out.getShape());
    std::vector<bool> seen(rank, false);
    CopyBox box;
    box.rank = static_cast<int32_t>(rank);
    for (int64_t k = 0; k < rank; ++k) {
      if (perm[k] < 0 || perm[k] >= rank || seen[perm[k]] ||
          out.getDim(k) != in.getDim(perm[k]))
        throw Error("transpose: invalid permutation for " + in.getTypeString() +
                    " -> " + out.getTypeString());
      seen[perm[k]] = true;
      box.shape[k] = out.getDim(k);
      box.dstStrides[k] = outStrides[k];
      box.srcStrides[k] = inStrides[perm[k]];
    }
    AUTOSHARD_CUDA_CHECK(launchStridedCopy(
        devicePtr(out, "transpose"), devicePtr(in, "transpose"), box,
        getDTypeSize(in.getDType()), stream()));
  }

  void softmax(const Tensor &in, Tensor &out, int64_t dim) override {
    checkSameType(in, out, "softmax");
    if (dim < 0 || dim >= in.getRank() || in.getShape() != out.getShape())
      throw Error("softmax: bad dim " + std::to_string(dim) + " for " +
                  in.getTypeString());
    if (!isFloatDType(in.getDType()))
      throw Error("softmax: unsupported element type in " + in.getTypeString());
    int64_t outer = 1, inner = 1, len = in.getDim(dim);
    for (int64_t d = 0; d < dim; ++d)
      outer *= in.getDim(d);
    for (int64_t d = dim + 1; d < in.getRank(); ++d)
      inner *= in.getDim(d);
    AUTOSHARD_CUDA_CHECK(launchSoftmax(devicePtr(in, "softmax"),
                                       devicePtr(out, "softmax"), in.getDType(),
                                       outer, len, inner, stream()));
  }

  void reduce(const Tensor &in, Tensor &out, const std::vector<int64_t> &dims,
              ReductionKind kind) override {
    checkSameType(in, out, "reduce");
    int64_t rank = in.getRank();
    checkMaxRank(rank, "reduce");
    std::vector<bool> reduced(rank, false);
    for (int64_t d : dims) {
      if (d < 0 || d >= rank || reduced[d])
        throw Error("reduce: bad dims for " + in.getTypeString());
      reduced[d] = true;
    }
    Shape strides = getStrides(in.getShape());
    ReduceBox box;
    int64_t numOut = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[d]) {
        box.redShape[box.redRank] = in.getDim(d);
        box.redStrides[box.redRank++] = strides[d];
      } else {
        box.keptShape[box.keptRank] = in.getDim(d);
        box.keptStrides[box.keptRank++] = strides[d];
        numOut *= in.getDim(d);
      }
    }
    if (out.getNumElements() != numOut)
      throw Error("reduce: result " + out.getTypeString() +
                  " does not match the kept dims of " + in.getTypeString());
    AUTOSHARD_CUDA_CHECK(launchReduce(devicePtr(in, "reduce"),
                                      devicePtr(out, "reduce"), numOut,
                                      in.getDType(), kind, box, stream()));
  }

  void accumulate(Tensor &acc, const Tensor &x, ReductionKind kind) override {
    checkSameType(acc, x, "accumulate");
    if (acc.getNumElements() != x.getNumElements())
      throw Error("accumulate: " + acc.getTypeString() + " and " +
                  x.getTypeString() + " differ in size");
    AUTOSHARD_CUDA_CHECK(launchAccumulate(
        devicePtr(acc, "accumulate"), devicePtr(x, "accumulate"),
        acc.getNumElements(), acc.getDType(), kind, stream()));
  }

  void gather(const Tensor &source, const Tensor &indices, Tensor &out,
              const std::vector<int64_t> &dims) override {
    checkSameType(source, out, "gather");
    int64_t rank = source.getRank();
    checkMaxRank(rank, "gather");
    int64_t nd = static_cast<int64_t>(dims.size());
    if (indices.getRank() < 1 || indices.getDim(indices.getRank() - 1) != nd)
      throw Error("gather: indices " + indices.getTypeString() +
                  " do not end in a dim of size " + std::to_string(nd));
    if (indices.getDType() != DType::I32 && indices.getDType() != DType::I64)
      throw Error("gather: indices must be i32 or i64 integers, got " +
                  indices.getTypeString());
    std::vector<bool> gathered(rank, false);
    for (int64_t d : dims) {
      if (d < 0 || d >= rank || gathered[d])
        throw Error("gather: bad gather dims for " + source.getTypeString());
      gathered[d] = true;
    }
    Shape srcStrides = getStrides(source.getShape());
    GatherBox box;
    box.numIndexDims = static_cast<int32_t>(nd);
    for (int64_t k = 0; k < nd; ++k) {
      box.indexDims[k] = static_cast<int32_t>(dims[k]);
      box.indexDimSizes[k] = source.getDim(dims[k]);
      box.indexDimStrides[k] = srcStrides[dims[k]];
    }
    box.sliceElems = 1;
    for (int64_t d = 0; d < rank; ++d)
      if (!gathered[d]) {
        box.sliceShape[box.sliceRank] = source.getDim(d);
        box.sliceStrides[box.sliceRank++] = srcStrides[d];
        box.sliceElems *= source.getDim(d);
      }
    box.batch =
        nd == 0 ? indices.getNumElements() : indices.getNumElements() / nd;
    if (out.getNumElements() != box.batch * box.sliceElems)
      throw Error("gather: result " + out.getTypeString() +
                  " does not match indices " + indices.getTypeString() +
                  " and source " + source.getTypeString());
    box.site = getFaultSite("gather", source.getTypeString());
    AUTOSHARD_CUDA_CHECK(launchGather(
        devicePtr(source, "gather"), devicePtr(indices, "gather"),
        indices.getDType(), devicePtr(out, "gather"),
        getDTypeSize(source.getDType()), box, ctx->fault, stream()));
    ctx->faultArmed = true;
  }

  void extractSlice(const Tensor &source, Tensor &out,
                    const std::vector<int64_t> &offsets,
                    const std::vector<int64_t> &sizes,
                    const std::vector<int64_t> &strides) override {
    checkSameType(source, out, "extract_slice");
    checkBox(source, offsets, sizes, strides, "extract_slice");
    checkMaxRank(source.getRank(), "extract_slice");
    if (getNumElements(sizes) != out.getNumElements())
      throw Error("extract_slice: result " + out.getTypeString() +
                  " does not match the slice sizes");
    Shape srcStrides = getStrides(source.getShape());
    Shape dstStrides = getStrides(sizes);
    CopyBox box;
    box.rank = static_cast<int32_t>(sizes.size());
    int64_t base = 0;
    for (size_t d = 0; d < sizes.size(); ++d) {
      base += offsets[d] * srcStrides[d];
      box.shape[d] = sizes[d];
      box.srcStrides[d] = strides[d] * srcStrides[d];
      box.dstStrides[d] = dstStrides[d];
    }
    int64_t size = getDTypeSize(source.getDType());
    AUTOSHARD_CUDA_CHECK(launchStridedCopy(
        devicePtr(out, "extract_slice"),
        devicePtr(source, "extract_slice") + base * size, box, size, stream()));
  }

  void insertSlice(const Tensor &source, Tensor &dest,
                   const std::vector<int64_t> &offsets,
                   const std::vector<int64_t> &sizes,
                   const std::vector<int64_t> &strides) override {
    checkSameType(source, dest, "insert_slice");
    checkBox(dest, offsets, sizes, strides, "insert_slice");
    checkMaxRank(dest.getRank(), "insert_slice");
    if (getNumElements(sizes) != source.getNumElements())
      throw Error("insert_slice: source " + source.getTypeString() +
                  " does not match the slice sizes");
    Shape dstStrides = getStrides(dest.getShape());
    Shape srcStrides = getStrides(sizes);
    CopyBox box;
    box.rank = static_cast<int32_t>(sizes.size());
    int64_t base = 0;
    for (size_t d = 0; d < sizes.size(); ++d) {
      base += offsets[d] * dstStrides[d];
      box.shape[d] = sizes[d];
      box.dstStrides[d] = strides[d] * dstStrides[d];
      box.srcStrides[d] = srcStrides[d];
    }
    int64_t size = getDTypeSize(dest.getDType());
    AUTOSHARD_CUDA_CHECK(launchStridedCopy(
        devicePtr(dest, "insert_slice") + base * size,
        devicePtr(source, "insert_slice"), box, size, stream()));
  }

  void concat(const std::vector<const Tensor *> &pieces, Tensor &out,
              int64_t dim) override {
    if (dim < 0 || dim >= out.getRank())
      throw Error("concat: bad dim " + std::to_string(dim) + " for " +
                  out.getTypeString());
    int64_t offset = 0;
    for (const Tensor *p : pieces) {
      checkSameType(*p, out, "concat");
      if (p->getRank() != out.getRank())
        throw Error("concat: rank of " + p->getTypeString() + " differs from " +
                    out.getTypeString());
      std::vector<int64_t> offsets(out.getRank(), 0);
      std::vector<int64_t> strides(out.getRank(), 1);
      offsets[dim] = offset;
      insertSlice(*p, out, offsets, p->getShape(), strides);
      offset += p->getDim(dim);
    }
    if (offset != out.getDim(dim))
      throw Error("concat: pieces do not add up to " + out.getTypeString());
  }

  void pad(const Tensor &source, const Tensor &value, Tensor &out,
           const std::vector<int64_t> &low) override {
    fill(out, value);
    std::vector<int64_t> strides(out.getRank(), 1);
    insertSlice(source, out, low, source.getShape(), strides);
  }

  Tensor allocateUninitialized(DType type, const Shape &shape) override {
    // Checked: negative dims and sizes past int64 are one-line errors.
    return Tensor(type, shape, pool->get(getNumBytes(type, shape)));
  }
  MemoryStats getMemoryStats() const override { return pool->getStats(); }

  bool beginCapture() override;
  std::string getCaptureError() const override { return captureError; }
  std::unique_ptr<CapturedWork> endCapture() override;

  // Conv2D through cuDNN (CudnnConv.cpp), else the direct kernel; Pool2D
  // by the direct kernel (WindowKernels.cu).
  bool hasWindowKernels() const override { return true; }
  void conv2d(const Tensor &in, const Tensor &w, Tensor &out,
              const std::vector<int64_t> &strides,
              const std::vector<int64_t> &dilations) override {
    WindowDims d =
        getWindowDims(in, w.getShape(), out, strides, dilations, "conv2d");
    if (!cudnnTried) {
      // On first use: loading cuDNN takes time a program without convs
      // need not spend. A cuDNN that fails to start leaves the direct
      // kernel.
      cudnnTried = true;
      std::shared_ptr<BufferPool> p = pool;
      try {
        cudnn = CudnnConv::create(stream(),
                                  [p](int64_t bytes) { return p->get(bytes); });
      } catch (const Error &) {
      }
    }
    if (cudnn && cudnn->conv2d(in, w, out, strides, dilations))
      return;
    AUTOSHARD_CUDA_CHECK(launchConv2dDirect(
        reinterpret_cast<const float *>(devicePtr(in, "conv2d")),
        reinterpret_cast<const float *>(devicePtr(w, "conv2d")),
        reinterpret_cast<float *>(devicePtr(out, "conv2d")), d, stream()));
  }
  void pool2d(const Tensor &in, Tensor &out, const std::vector<int64_t> &kernel,
              const std::vector<int64_t> &strides,
              const std::vector<int64_t> &dilations,
              ReductionKind kind) override {
    if (kind != ReductionKind::Max && kind != ReductionKind::Sum)
      throw Error("pool2d: only max and sum pooling");
    if (kernel.size() != 2)
      throw Error("pool2d: expects 2 kernel sizes");
    WindowDims d =
        getWindowDims(in, {in.getRank() == 4 ? in.getDim(1) : 1, 1, kernel[0],
                       kernel[1]},
                      out,
                      strides, dilations, "pool2d");
    AUTOSHARD_CUDA_CHECK(launchPool2d(
        reinterpret_cast<const float *>(devicePtr(in, "pool2d")),
        reinterpret_cast<float *>(devicePtr(out, "pool2d")), d,
        kind == ReductionKind::Max, stream()));
  }

private:
  cudaStream_t stream() const { return ctx->info.stream; }

  /// The fault site of a kernel queued now (DeviceFault::site): `what`
  /// (the kernel), `source` (its source tensor's type, for gathers) and the
  /// location the executor set.
  int32_t getFaultSite(const char *what, const std::string &source) {
    std::string where = location ? *location : std::string();
    std::string key = std::string(what) + '\0' + source + '\0' + where;
    auto it = ctx->faultSiteIds.find(key);
    if (it != ctx->faultSiteIds.end())
      return it->second;
    auto id = static_cast<int32_t>(ctx->faultSites.size());
    ctx->faultSites.push_back({what, source, std::move(where)});
    ctx->faultSiteIds.emplace(std::move(key), id);
    return id;
  }

  /// After a stream synchronize: turns the first fault a kernel recorded
  /// since the last check into a DeviceFaultError naming its site (and
  /// resets the word for the next run). Reads nothing when no kernel that
  /// can fault ran since.
  void checkFaults() {
    if (!ctx->faultArmed)
      return;
    ctx->faultArmed = false;
    DeviceFault fault;
    AUTOSHARD_CUDA_CHECK(cudaMemcpyAsync(&fault, ctx->fault, sizeof(fault),
                                         cudaMemcpyDeviceToHost, stream()));
    AUTOSHARD_CUDA_CHECK(cudaStreamSynchronize(stream()));
    if (fault.code == kNoFault)
      return;
    AUTOSHARD_CUDA_CHECK(
        cudaMemsetAsync(ctx->fault, 0, sizeof(DeviceFault), stream()));
    Context::FaultSite site;
    if (fault.site >= 0 &&
        static_cast<size_t>(fault.site) < ctx->faultSites.size())
      site = ctx->faultSites[fault.site];
    std::string at =
        site.location.empty() ? "" : " (at " + site.location + ")";
    switch (fault.code) {
    case kCapturedIndexOutOfBounds:
      throw DeviceFaultError("tensor.extract index " +
                             std::to_string(fault.value) +
                             " out of bounds for dim " +
                             std::to_string(fault.dim) + " of size " +
                             std::to_string(fault.bound) + at);
    case kIntegerDivisionByZero:
      throw DeviceFaultError("integer division by zero" + at);
    case kGatherIndexOutOfBounds:
      throw DeviceFaultError(
          site.what + ": index " + std::to_string(fault.value) +
          " out of bounds for dim " + std::to_string(fault.dim) + " of " +
          (site.source.empty() ? std::string("source") : site.source) + at);
    default:
      throw DeviceFaultError(
          (site.what.empty() ? std::string("kernel") : site.what) +
          ": device fault " + std::to_string(fault.code) + at);
    }
  }

  void launchGenerated(const GenericSpec &spec,
                       const std::vector<const Tensor *> &inputs,
                       const std::vector<const Tensor *> &captures,
                       const std::vector<Tensor *> &outputs);

  const GenericInst *uploadBody(const std::vector<GenericInst> &insts) {
    if (insts.empty())
      return nullptr;
    std::string key(reinterpret_cast<const char *>(insts.data()),
                    insts.size() * sizeof(GenericInst));
    auto it = ctx->bodies.find(key);
    if (it != ctx->bodies.end())
      return static_cast<const GenericInst *>(it->second);
    void *body = nullptr;
    AUTOSHARD_CUDA_CHECK(cudaMalloc(&body, key.size()));
    // Synchronous once per distinct body; later runs reuse the upload.
    AUTOSHARD_CUDA_CHECK(
        cudaMemcpy(body, key.data(), key.size(), cudaMemcpyHostToDevice));
    ctx->bodies.emplace(std::move(key), body);
    return static_cast<const GenericInst *>(body);
  }

  /// c += op(a) op(b), row-major, as column-major C^T = op(B)^T op(A)^T:
  /// f64 through cublasDgemm, the rest through cuBLASLt (CudaGemm.h).
  void gemm(const Tensor &a, const Tensor &b, Tensor &c, bool transA,
            bool transB, bool accumulate, int64_t batch, bool tf32 = false,
            GemmEpilogue epilogue = GemmEpilogue::None,
            const Tensor *bias = nullptr) {
    DType ta = a.getDType(), tc = c.getDType();
    bool half = ta == DType::BF16 || ta == DType::F16;
    if (half && (b.getDType() != ta || (tc != DType::F32 && tc != ta)))
      throw Error("matmul: unsupported element types " + a.getTypeString() +
                  " x " + b.getTypeString() + " -> " + c.getTypeString() +
                  " (bf16/f16 operands must match; the result is f32 or "
                  "their type)");
    if (!half) {
      checkSameType(a, c, "matmul");
      checkSameType(b, c, "matmul");
    }
    int64_t r = a.getRank();
    int64_t m = transA ? a.getDim(r - 1) : a.getDim(r - 2);
    int64_t k = transA ? a.getDim(r - 2) : a.getDim(r - 1);
    int64_t kb = transB ? b.getDim(r - 1) : b.getDim(r - 2);
    int64_t n = transB ? b.getDim(r - 2) : b.getDim(r - 1);
    if (k != kb || c.getDim(r - 2) != m || c.getDim(r - 1) != n)
      throw Error("matmul: shapes do not agree: " + a.getTypeString() + " x " +
                  b.getTypeString() + " -> " + c.getTypeString());
    if (!half && tc != DType::F32 && tc != DType::F64)
      throw Error("matmul: cuBLAS path needs f32, f64, bf16 or f16, got " +
                  c.getTypeString());
    const void *pa = devicePtr(a, "matmul"), *pb = devicePtr(b, "matmul");
    void *pc = devicePtr(c, "matmul");
    if (m == 0 || n == 0 || batch == 0)
      return;
    if (k == 0) { // an empty sum: cuBLAS would not touch c
      if (epilogue != GemmEpilogue::None)
        return epilogueAfter(c, accumulate, epilogue, bias, batch * m * n, n,
                             [](void *) {});
      if (!accumulate)
        AUTOSHARD_CUDA_CHECK(
            cudaMemsetAsync(pc, 0, c.getBytes(), stream()));
      return;
    }
    int64_t sa = a.getDim(r - 2) * a.getDim(r - 1);
    int64_t sb = b.getDim(r - 2) * b.getDim(r - 1);
    if (tc == DType::F64)
      return dgemm(pa, pb, pc, transA, transB, accumulate, batch, m, n, k,
                   a.getDim(r - 1), b.getDim(r - 1), sa, sb);
    // Column-major: A is b, B is a, C^T is n x m.
    LtProblem p;
    p.inType = getLtType(ta);
    p.outType = getLtType(tc);
    p.compute = tc == DType::F32 && !half && tf32
                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                    : CUBLAS_COMPUTE_32F;
    p.transA = transB;
    p.transB = transA;
    p.m = n;
    p.n = m;
    p.k = k;
    p.lda = b.getDim(r - 1);
    p.ldb = a.getDim(r - 1);
    p.ldc = n;
    p.batch = batch;
    p.strideA = sb;
    p.strideB = sa;
    p.strideC = m * n;
    int64_t inSize = getDTypeSize(ta), outSize = getDTypeSize(tc);
    p.alignA = getLtAlignment(pb, batch > 1 ? sb * inSize : 0);
    p.alignB = getLtAlignment(pa, batch > 1 ? sa * inSize : 0);
    p.alignC = getLtAlignment(pc, batch > 1 ? m * n * outSize : 0);
    const void *pbias = bias ? devicePtr(*bias, "matmul") : nullptr;
    p.epilogue = getLtEpilogue(epilogue);
    p.alignBias = getLtAlignment(pbias, 0);
    if (!ctx->lt)
      ctx->lt = std::make_unique<LtGemm>(stream());
    // A bf16/f16 result takes the kernel too: on an H200, cuBLASLt's
    // epilogue into fp16 missed the one-rounding bound (1.46 of it in
    // GemmEpilogueEachPrecision, as if the product were rounded before the
    // bias), where the kernel's FP32 epilogue stays within it (0.96).
    bool halfOut =
        c.getDType() == DType::BF16 || c.getDType() == DType::F16;
    // (The environment is read only for epilogues: getenv per plain GEMM
    // is host time a launch-bound program pays per run.)
    // cuBLASLt has no erf GELU (its GELU epilogue is the tanh form).
    bool erf = epilogue == GemmEpilogue::GeluErf ||
               epilogue == GemmEpilogue::BiasGeluErf;
    bool forceKernel = epilogue != GemmEpilogue::None &&
                       (halfOut || erf || askedForEpilogueKernel());
    if (!forceKernel &&
        ctx->lt->run(p, 1.0f, pb, pa, accumulate ? 1.0f : 0.0f, pc, pbias))
      return;
    // No cuBLASLt algorithm has the epilogue for this problem (or a test
    // asked for the kernel): the plain GEMM into FP32, then the epilogue.
    LtProblem plain = p;
    plain.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    plain.alignBias = 256;
    epilogueAfter(c, accumulate, epilogue, bias, batch * m * n, n,
                  [&](void *acc) {
                    bool inPlace = acc == pc;
                    plain.outType = CUDA_R_32F;
                    plain.alignC = getLtAlignment(
                        acc, batch > 1 ? m * n * int64_t(sizeof(float)) : 0);
                    ctx->lt->run(plain, 1.0f, pb, pa,
                                 inPlace && accumulate ? 1.0f : 0.0f, acc);
                  });
  }

  static bool askedForEpilogueKernel() {
    const char *kernel = std::getenv("AUTOSHARD_CUDA_EPILOGUE_KERNEL");
    return kernel && std::strcmp(kernel, "1") == 0;
  }

  /// c = epilogue(gemm + (c if accumulate) + bias) through an FP32 buffer
  /// `gemm(acc)` writes the product into (c itself when it is f32).
  template <typename Gemm>
  void epilogueAfter(Tensor &c, bool accumulate, GemmEpilogue epilogue,
                     const Tensor *bias, int64_t total, int64_t n,
                     Gemm gemm) {
    void *pc = devicePtr(c, "matmul");
    const void *pbias = bias ? devicePtr(*bias, "matmul") : nullptr;
    bool f32 = c.getDType() == DType::F32;
    Tensor scratch;
    void *acc = pc;
    if (!f32) {
      scratch = allocateUninitialized(DType::F32, c.getShape());
      acc = devicePtr(scratch, "matmul");
    }
    // An empty product (gemm does nothing) adds nothing.
    if (!f32 || !accumulate)
      AUTOSHARD_CUDA_CHECK(cudaMemsetAsync(acc, 0, total * sizeof(float),
                                           stream()));
    gemm(acc);
    AUTOSHARD_CUDA_CHECK(launchGemmEpilogue(
        static_cast<const float *>(acc), pc, c.getDType(), pbias,
        !f32 && accumulate, total, n, epilogue, stream()));
  }

  /// The bias (row-major C's last dim) is cuBLASLt's per-row vector of the
  /// column-major C^T it computes.
  static cublasLtEpilogue_t getLtEpilogue(GemmEpilogue e) {
    switch (e) {
    case GemmEpilogue::None:
      return CUBLASLT_EPILOGUE_DEFAULT;
    case GemmEpilogue::Bias:
      return CUBLASLT_EPILOGUE_BIAS;
    case GemmEpilogue::Relu:
      return CUBLASLT_EPILOGUE_RELU;
    case GemmEpilogue::BiasRelu:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
    case GemmEpilogue::Gelu:
      return CUBLASLT_EPILOGUE_GELU;
    case GemmEpilogue::BiasGelu:
      return CUBLASLT_EPILOGUE_GELU_BIAS;
    case GemmEpilogue::GeluErf: // the FP32 kernel: never asked of cuBLASLt
    case GemmEpilogue::BiasGeluErf:
      return CUBLASLT_EPILOGUE_DEFAULT;
    }
    return CUBLASLT_EPILOGUE_DEFAULT;
  }

  static cudaDataType_t getLtType(DType t) {
    switch (t) {
    case DType::BF16:
      return CUDA_R_16BF;
    case DType::F16:
      return CUDA_R_16F;
    default:
      return CUDA_R_32F;
    }
  }

  void dgemm(const void *pa, const void *pb, void *pc, bool transA,
             bool transB, bool accumulate, int64_t batch, int64_t m,
             int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t sa,
             int64_t sb) {
    int im = toBlasInt(m, "matmul"), in = toBlasInt(n, "matmul"),
        ik = toBlasInt(k, "matmul");
    int ilda = toBlasInt(lda, "matmul"), ildb = toBlasInt(ldb, "matmul");
    cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    const double one = 1.0, beta = accumulate ? 1.0 : 0.0;
    auto *da = static_cast<const double *>(pa);
    auto *db = static_cast<const double *>(pb);
    auto *dc = static_cast<double *>(pc);
    if (batch == 1)
      AUTOSHARD_CUBLAS_CHECK(cublasDgemm(ctx->blas, opB, opA, in, im, ik, &one,
                                         db, ildb, da, ilda, &beta, dc, in));
    else
      AUTOSHARD_CUBLAS_CHECK(cublasDgemmStridedBatched(
          ctx->blas, opB, opA, in, im, ik, &one, db, ildb, sb, da, ilda, sa,
          &beta, dc, in, m * n, toBlasInt(batch, "batch_matmul")));
  }

  std::shared_ptr<Context> ctx;
  std::shared_ptr<BufferPool> pool; // made once the stream exists
  std::unique_ptr<CudnnConv> cudnn; // null without cuDNN
  bool cudnnTried = false;
  bool capturing = false; // between beginCapture and endCapture
  std::string captureError; // why the last beginCapture/endCapture failed
  bool armedBeforeCapture = false; // Context::faultArmed at beginCapture
};

/// A recorded run (Backend::endCapture): the instantiated CUDA graph and
/// the pool blocks reserved to it. Destroying it while a replay is in
/// flight is safe: CUDA frees the graph when the replay completes, and
/// work queued later on the stream (the blocks' next users) runs after it.
class CudaGraph final : public CapturedWork {
public:
  CudaGraph(std::shared_ptr<Context> ctx, cudaGraphExec_t exec,
            std::shared_ptr<BufferPool::Reservation> blocks, bool canFault)
      : ctx(std::move(ctx)), exec(exec), blocks(std::move(blocks)),
        canFault(canFault) {}
  ~CudaGraph() override { cudaGraphExecDestroy(exec); }
  void replay() override {
    AUTOSHARD_CUDA_CHECK(cudaGraphLaunch(exec, ctx->info.stream));
    // Its gathers and loop nests record faults as the recorded run would.
    ctx->faultArmed = ctx->faultArmed || canFault;
  }

private:
  std::shared_ptr<Context> ctx; // the stream
  cudaGraphExec_t exec;
  std::shared_ptr<BufferPool::Reservation> blocks;
  bool canFault; // it holds a kernel that can record a fault
};

/// Thread-local capture mode: a call of this thread that could wait for
/// the device (cudaMalloc, a synchronous copy, a stream synchronize) fails
/// and ends the recording instead of being recorded wrongly; the pool
/// refuses to obtain new blocks meanwhile (BufferPool::beginReserving).
bool CudaBackend::beginCapture() {
  if (capturing) {
    captureError = "a recording is already in progress";
    return false;
  }
  pool->beginReserving();
  cudaError_t status =
      cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal);
  if (status != cudaSuccess) {
    captureError = std::string("cudaStreamBeginCapture: ") +
                   cudaGetErrorString(status);
    (void)cudaGetLastError();
    pool->endReserving(/*keep=*/false);
    return false;
  }
  capturing = true;
  // Kernels recorded from here arm the check of the graph, not of now.
  armedBeforeCapture = ctx->faultArmed;
  ctx->faultArmed = false;
  return true;
}

std::unique_ptr<CapturedWork> CudaBackend::endCapture() {
  if (!capturing) {
    captureError = "no recording in progress";
    return nullptr;
  }
  capturing = false;
  bool canFault = ctx->faultArmed;
  ctx->faultArmed = armedBeforeCapture;
  cudaGraph_t graph = nullptr;
  cudaError_t status = cudaStreamEndCapture(stream(), &graph);
  const char *call = "cudaStreamEndCapture";
  cudaGraphExec_t exec = nullptr;
  if (status == cudaSuccess && graph) {
    call = "cudaGraphInstantiate";
    status = cudaGraphInstantiate(&exec, graph, 0);
  }
  if (graph)
    cudaGraphDestroy(graph); // the executable graph is a copy
  if (status != cudaSuccess || !exec) {
    captureError = std::string(call) + ": " +
                   (status != cudaSuccess ? cudaGetErrorString(status)
                                          : "no graph recorded");
    (void)cudaGetLastError(); // an invalidated capture is not sticky
    pool->endReserving(/*keep=*/false);
    return nullptr;
  }
  return std::make_unique<CudaGraph>(
      ctx, exec, pool->endReserving(/*keep=*/true), canFault);
}

/// Loads the program's generated kernels (PTX, JIT-compiled by the driver
/// for this GPU) once per distinct module; their kernels are looked up by
/// name on first launch (names carry a hash of their module, so programs
/// sharing a backend never mix them up).
void CudaBackend::prepare(const Program &program) {
  if (program.gpuModule.empty() || ctx->libraries.count(program.gpuModule))
    return;
  AUTOSHARD_CUDA_CHECK(cudaSetDevice(ctx->info.device));
  char log[4096] = "";
  cudaJitOption options[] = {cudaJitErrorLogBuffer,
                             cudaJitErrorLogBufferSizeBytes};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log))};
  cudaLibrary_t library = nullptr;
  cudaError_t status =
      cudaLibraryLoadData(&library, program.gpuModule.c_str(), options,
                          values, 2, nullptr, nullptr, 0);
  if (status != cudaSuccess) {
    cudaGetLastError(); // not sticky: clear it
    std::string detail(log, strnlen(log, sizeof(log)));
    detail = detail.substr(0, detail.find('\n'));
    throw Error("cannot load the program's generated CUDA kernels (PTX of " +
                std::to_string(program.gpuModule.size()) +
                " bytes): " + cudaGetErrorString(status) +
                (detail.empty() ? "" : ": " + detail));
  }
  ctx->libraries.emplace(program.gpuModule, library);
}

/// `spec.gpuKernel` over spec.gpuThreads threads, its parameters the device
/// pointers of inputs, outputs and captures (KernelLibrary.h's order).
void CudaBackend::launchGenerated(const GenericSpec &spec,
                                  const std::vector<const Tensor *> &inputs,
                                  const std::vector<const Tensor *> &captures,
                                  const std::vector<Tensor *> &outputs) {
  auto it = ctx->generated.find(spec.gpuKernel);
  if (it == ctx->generated.end()) {
    cudaKernel_t kernel = nullptr;
    for (auto &entry : ctx->libraries)
      if (cudaLibraryGetKernel(&kernel, entry.second,
                               spec.gpuKernel.c_str()) == cudaSuccess)
        break;
    cudaGetLastError();
    if (!kernel)
      throw Error("generic: generated CUDA kernel '" + spec.gpuKernel +
                  "' is in no loaded program module (was the program's "
                  "gpuModule loaded?)");
    it = ctx->generated.emplace(spec.gpuKernel, kernel).first;
  }
  std::vector<void *> pointers;
  for (const Tensor *t : inputs)
    pointers.push_back(devicePtr(*t, "generic"));
  for (Tensor *t : outputs)
    pointers.push_back(devicePtr(*t, "generic"));
  for (const Tensor *t : captures)
    pointers.push_back(devicePtr(*t, "generic"));
  std::vector<void *> params;
  for (void *&p : pointers)
    params.push_back(&p);
  if (spec.gpuThreads <= 0)
    return; // an empty loop nest
  constexpr int64_t kBlock = 256;
  int64_t blocks = (spec.gpuThreads + kBlock - 1) / kBlock;
  if (blocks > INT_MAX)
    throw Error("generic: " + std::to_string(spec.gpuThreads) +
                " threads exceed one CUDA grid");
  dim3 block(static_cast<unsigned>(std::min(kBlock, spec.gpuThreads)));
  AUTOSHARD_CUDA_CHECK(
      cudaLaunchKernel(reinterpret_cast<const void *>(it->second),
                       dim3(static_cast<unsigned>(blocks)), block,
                       params.data(), 0, stream()));
}

void CudaBackend::generic(const GenericSpec &spec,
                          const std::vector<const Tensor *> &inputs,
                          const std::vector<const Tensor *> &captures,
                          const std::vector<Tensor *> &outputs) {
  if (static_cast<int32_t>(inputs.size()) != spec.numInputs ||
      static_cast<int32_t>(outputs.size()) != spec.numOutputs ||
      static_cast<int32_t>(captures.size()) != spec.numCaptures ||
      static_cast<int32_t>(spec.maps.size()) !=
          spec.numInputs + spec.numOutputs ||
      static_cast<int32_t>(spec.yields.size()) != spec.numOutputs ||
      spec.numRegs < spec.numInputs + spec.numOutputs)
    throw Error("generic: operand counts do not match the loop nest");
  if (!spec.gpuKernel.empty())
    return launchGenerated(spec, inputs, captures, outputs);
  for (const ScalarInst &in : spec.body)
    if (in.dst < 0 || in.dst >= spec.numRegs || in.a >= spec.numRegs ||
        in.b >= spec.numRegs || in.c >= spec.numRegs ||
        ((in.op == ScalarOp::Fma || in.op == ScalarOp::Select) && in.c < 0) ||
        (in.op == ScalarOp::Captured &&
         (in.imm < 0 || in.imm >= spec.numCaptures ||
          static_cast<int64_t>(in.args.size()) !=
              captures[in.imm]->getRank())) ||
        (in.op == ScalarOp::Index &&
         (in.imm < 0 ||
          in.imm >= static_cast<int64_t>(spec.loopRanges.size()))))
      throw Error("generic: malformed body bytecode");
  for (int32_t y : spec.yields)
    if (y < 0 || y >= spec.numRegs)
      throw Error("generic: malformed body bytecode");

  auto limit = [](int64_t value, int64_t max, const char *what) {
    if (value > max)
      throw Error(std::string("generic: ") + std::to_string(value) + " " +
                  what + " exceed the CUDA backend's limit of " +
                  std::to_string(max));
  };
  int32_t numOperands = spec.numInputs + spec.numOutputs;
  int64_t numLoops = static_cast<int64_t>(spec.loopRanges.size());
  limit(numLoops, kMaxLoops, "loops");
  limit(numOperands, kMaxOperands, "operands");
  limit(spec.numCaptures, kMaxCaptures, "captured tensors");
  limit(spec.numRegs, kMaxRegs, "registers");

  GenericLaunch g;
  std::memset(&g, 0, sizeof(g));
  g.numLoops = static_cast<int32_t>(numLoops);
  g.numInputs = spec.numInputs;
  g.numOutputs = spec.numOutputs;
  g.numRegs = spec.numRegs;
  for (int64_t l = 0; l < numLoops; ++l) {
    if (spec.loopRanges[l] < 0)
      throw Error("generic: negative loop range");
    g.ranges[l] = spec.loopRanges[l];
  }
  for (int32_t k = 0; k < numOperands; ++k) {
    const Tensor &t =
        k < spec.numInputs ? *inputs[k] : *outputs[k - spec.numInputs];
    g.operands[k] = foldMap(spec.maps[k], t, spec.loopRanges, k);
  }
  for (int32_t k = 0; k < spec.numCaptures; ++k) {
    const Tensor &t = *captures[k];
    checkMaxRank(t.getRank(), "generic capture");
    g.captures[k].data = devicePtr(t, "generic");
    g.captures[k].type = t.getDType();
    g.captures[k].rank = static_cast<int32_t>(t.getRank());
    for (int64_t d = 0; d < t.getRank(); ++d)
      g.captures[k].dims[d] = t.getDim(d);
  }
  for (int32_t o = 0; o < spec.numOutputs; ++o)
    g.yields[o] = spec.yields[o];

  std::vector<bool> parallel = findParallelLoops(spec);
  g.parallelTotal = 1;
  g.sequentialTotal = 1;
  for (int64_t l = 0; l < numLoops; ++l) {
    if (parallel[l]) {
      g.parallelLoops[g.numParallel++] = static_cast<int32_t>(l);
      g.parallelTotal *= spec.loopRanges[l];
    } else {
      g.sequentialLoops[g.numSequential++] = static_cast<int32_t>(l);
      g.sequentialTotal *= spec.loopRanges[l];
    }
  }

  std::vector<GenericInst> insts(spec.body.size());
  std::memset(static_cast<void *>(insts.data()), 0,
              insts.size() * sizeof(GenericInst));
  for (size_t n = 0; n < spec.body.size(); ++n) {
    const ScalarInst &in = spec.body[n];
    GenericInst &out = insts[n];
    out.op = in.op;
    out.type = in.type;
    out.srcType = in.srcType;
    out.dst = in.dst;
    out.a = in.a;
    out.b = in.b;
    out.c = in.c;
    out.imm = in.imm;
    out.fimm = in.fimm;
    limit(static_cast<int64_t>(in.args.size()), kMaxRank,
          "tensor.extract indices");
    out.numArgs = static_cast<int32_t>(in.args.size());
    for (size_t k = 0; k < in.args.size(); ++k) {
      if (in.args[k] < 0 || in.args[k] >= spec.numRegs)
        throw Error("generic: malformed body bytecode");
      out.args[k] = in.args[k];
    }
  }
  g.numInsts = static_cast<int32_t>(insts.size());
  bool faults = canFault(spec);
  if (faults)
    g.site = getFaultSite("generic", "");
  const GenericInst *body = uploadBody(insts);
  AUTOSHARD_CUDA_CHECK(launchGeneric(g, body, ctx->fault, stream()));
  ctx->faultArmed = ctx->faultArmed || faults;
}

} // namespace

const StreamInfo *autoshard::rt::cuda::getStreamInfo(Backend &backend) {
  auto *cuda = dynamic_cast<CudaBackend *>(&backend);
  return cuda ? &cuda->getInfo() : nullptr;
}

std::unique_ptr<Backend> autoshard::rt::createCudaBackend(int device) {
  return std::make_unique<CudaBackend>(device);
}
