//===- CudaGemm.cpp - GEMMs through cuBLASLt ------------------------------===//

#include "CudaGemm.h"
#include "CudaContext.h"

#include <cstring>

using namespace autoshard;
using namespace autoshard::rt;
using namespace autoshard::rt::cuda;

namespace {
void checkLt(cublasStatus_t status, const char *call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLASLt error in ") + call + ": " +
                cublasGetStatusName(status) + ": " +
                cublasGetStatusString(status));
}
#define AUTOSHARD_LT_CHECK(call) checkLt((call), #call)

/// NVIDIA's advice for Hopper: 32 MiB lets every algorithm run.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

template <typename T>
void setAttr(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t a,
             T value) {
  AUTOSHARD_LT_CHECK(
      cublasLtMatrixLayoutSetAttribute(layout, a, &value, sizeof(value)));
}

cublasLtMatrixLayout_t makeLayout(cudaDataType_t type, int64_t rows,
                                  int64_t cols, int64_t ld, int64_t batch,
                                  int64_t stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  AUTOSHARD_LT_CHECK(cublasLtMatrixLayoutCreate(&layout, type, rows, cols, ld));
  if (batch > 1) {
    setAttr(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
            static_cast<int32_t>(batch));
    setAttr(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride);
  }
  return layout;
}
} // namespace

bool LtProblem::operator==(const LtProblem &o) const {
  return inType == o.inType && outType == o.outType && compute == o.compute &&
         transA == o.transA && transB == o.transB && m == o.m && n == o.n &&
         k == o.k && lda == o.lda && ldb == o.ldb && ldc == o.ldc &&
         batch == o.batch && strideA == o.strideA && strideB == o.strideB &&
         strideC == o.strideC && alignA == o.alignA && alignB == o.alignB &&
         alignC == o.alignC && epilogue == o.epilogue &&
         alignBias == o.alignBias;
}

uint32_t autoshard::rt::cuda::getLtAlignment(const void *p,
                                             int64_t strideBytes) {
  uint64_t bits = reinterpret_cast<uintptr_t>(p) | 256 |
                  static_cast<uint64_t>(strideBytes);
  return static_cast<uint32_t>(bits & (~bits + 1)); // the lowest set bit
}

struct LtGemm::Plan {
  LtProblem problem;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo;
  bool found = true; // false: no algorithm has the epilogue

  ~Plan() {
    if (c)
      cublasLtMatrixLayoutDestroy(c);
    if (b)
      cublasLtMatrixLayoutDestroy(b);
    if (a)
      cublasLtMatrixLayoutDestroy(a);
    if (desc)
      cublasLtMatmulDescDestroy(desc);
  }
};

LtGemm::LtGemm(cudaStream_t stream) : stream(stream) {
  AUTOSHARD_LT_CHECK(cublasLtCreate(&handle));
  AUTOSHARD_CUDA_CHECK(cudaMalloc(&workspace, kWorkspaceBytes));
  workspaceBytes = kWorkspaceBytes;
}

LtGemm::~LtGemm() {
  plans.clear();
  if (workspace)
    cudaFree(workspace); // synchronises with the device's work
  if (handle)
    cublasLtDestroy(handle);
}

/// Whether cuBLASLt's epilogue `e` reads CUBLASLT_MATMUL_DESC_BIAS_POINTER.
static bool readsBias(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS ||
         e == CUBLASLT_EPILOGUE_GELU_BIAS;
}

static void setBiasPointer(cublasLtMatmulDesc_t desc, const void *bias) {
  AUTOSHARD_LT_CHECK(cublasLtMatmulDescSetAttribute(
      desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
}

const LtGemm::Plan &LtGemm::getPlan(const LtProblem &p, const void *bias) {
  if (last && last->problem == p)
    return *last;
  for (const std::unique_ptr<Plan> &plan : plans)
    if (plan->problem == p)
      return *(last = plan.get());
  auto plan = std::make_unique<Plan>();
  plan->problem = p;
  AUTOSHARD_LT_CHECK(cublasLtMatmulDescCreate(&plan->desc, p.compute,
                                              CUDA_R_32F));
  cublasOperation_t opA = p.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = p.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  AUTOSHARD_LT_CHECK(cublasLtMatmulDescSetAttribute(
      plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
  AUTOSHARD_LT_CHECK(cublasLtMatmulDescSetAttribute(
      plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
  if (p.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    AUTOSHARD_LT_CHECK(cublasLtMatmulDescSetAttribute(
        plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &p.epilogue,
        sizeof(p.epilogue)));
    // The heuristic takes the bias's alignment from its pointer; the bias
    // type is D's (the attribute's default).
    if (readsBias(p.epilogue))
      setBiasPointer(plan->desc, bias);
  }
  // Stored (not transposed) shapes: op(A) is m x k, op(B) is k x n.
  plan->a = makeLayout(p.inType, p.transA ? p.k : p.m, p.transA ? p.m : p.k,
                       p.lda, p.batch, p.strideA);
  plan->b = makeLayout(p.inType, p.transB ? p.n : p.k, p.transB ? p.k : p.n,
                       p.ldb, p.batch, p.strideB);
  plan->c = makeLayout(p.outType, p.m, p.n, p.ldc, p.batch, p.strideC);

  cublasLtMatmulPreference_t pref = nullptr;
  AUTOSHARD_LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  auto setPref = [&](cublasLtMatmulPreferenceAttributes_t attr, auto value) {
    AUTOSHARD_LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value,
                                                            sizeof(value)));
  };
  setPref(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(workspaceBytes));
  setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, p.alignA);
  setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, p.alignB);
  setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, p.alignC);
  setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, p.alignC);
  cublasLtMatmulHeuristicResult_t result = {};
  int found = 0;
  cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle, plan->desc, plan->a, plan->b, plan->c, plan->c, pref, 1, &result,
      &found);
  cublasLtMatmulPreferenceDestroy(pref);
  checkLt(status, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0 && p.epilogue == CUBLASLT_EPILOGUE_DEFAULT)
    throw Error("matmul: cuBLASLt has no algorithm for this GEMM (m " +
                std::to_string(p.m) + ", n " + std::to_string(p.n) + ", k " +
                std::to_string(p.k) + ", batch " + std::to_string(p.batch) +
                ")");
  plan->found = found != 0;
  plan->algo = result.algo;
  plans.push_back(std::move(plan));
  return *(last = plans.back().get());
}

bool LtGemm::run(const LtProblem &p, float alpha, const void *a,
                 const void *b, float beta, void *c, const void *bias) {
  bool withBias = readsBias(p.epilogue);
  if (withBias && !bias)
    throw Error("matmul: the epilogue needs a bias");
  // A program's GEMMs repeat run after run: the last plan, compared here,
  // saves the call and the search through the others.
  const Plan &plan = last && last->problem == p ? *last : getPlan(p, bias);
  if (!plan.found)
    return false;
  // The plan is kept per problem; the bias moves between calls.
  if (withBias)
    setBiasPointer(plan.desc, bias);
  AUTOSHARD_LT_CHECK(cublasLtMatmul(handle, plan.desc, &alpha, a, plan.a, b,
                                    plan.b, &beta, c, plan.c, c, plan.c,
                                    &plan.algo, workspace, workspaceBytes,
                                    stream));
  return true;
}
