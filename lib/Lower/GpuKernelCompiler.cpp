//===- GpuKernelCompiler.cpp - Loop nests -> CUDA kernels (PTX) -----------===//

#include "autoshard/Lower/GpuKernelCompiler.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace autoshard;

static std::string getCudaPath(const KernelOptions &options) {
  if (!options.cudaPath.empty())
    return options.cudaPath;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (std::optional<std::string> dir = llvm::sys::Process::GetEnv(var);
        dir && !dir->empty())
      return *dir;
  return "/usr/local/cuda";
}

static std::string getChip(const KernelOptions &options) {
  if (!options.gpuChip.empty())
    return options.gpuChip;
  if (std::optional<std::string> chip =
          llvm::sys::Process::GetEnv("AUTOSHARD_CUDA_ARCH");
      chip && !chip->empty())
    return *chip;
  return "sm_90";
}

FailureOr<std::string> autoshard::findLibdevice(const KernelOptions &options,
                                                std::string &error) {
  SmallString<256> path(getCudaPath(options));
  llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
  if (!llvm::sys::fs::is_regular_file(path)) {
    error = "no libdevice at '" + std::string(path) +
            "' (set CUDA_HOME to the CUDA toolkit, or use "
            "--kernels=interpreted)";
    return failure();
  }
  return std::string(path);
}

namespace {

/// Interchanges `generic`'s loops so its parallel dims come first (in their
/// order, then the reductions): linalg-to-parallel-loops then makes one
/// scf.parallel over all of them. Returns the number of parallel points.
int64_t putParallelDimsFirst(linalg::GenericOp generic) {
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  SmallVector<unsigned> perm;
  int64_t points = 1;
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (iterators[i] == utils::IteratorType::parallel) {
      perm.push_back(i);
      points *= ranges[i];
    }
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (iterators[i] != utils::IteratorType::parallel)
      perm.push_back(i);
  if (!llvm::equal(perm, llvm::seq<unsigned>(0, perm.size()))) {
    IRRewriter rewriter(generic.getContext());
    rewriter.setInsertionPoint(generic);
    (void)linalg::interchangeGenericOp(rewriter, generic, perm);
  }
  return points;
}

/// Replaces the scf.parallel of a kernel body by one thread per point:
/// `if (id < points) { ivs = delinearize(id); body }`.
LogicalResult mapParallelToThreads(scf::ParallelOp loop, int64_t points) {
  for (auto [lb, step] : llvm::zip(loop.getLowerBound(), loop.getStep()))
    if (getConstantIntValue(lb) != 0 || getConstantIntValue(step) != 1)
      return loop.emitError("non-unit parallel loop");
  SmallVector<int64_t> ubs;
  for (Value ub : loop.getUpperBound()) {
    std::optional<int64_t> c = getConstantIntValue(ub);
    if (!c)
      return loop.emitError("dynamic parallel loop");
    ubs.push_back(*c);
  }
  IRRewriter b(loop.getContext());
  b.setInsertionPoint(loop);
  Location loc = loop.getLoc();
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value bdim = gpu::BlockDimOp::create(b, loc, gpu::Dimension::x);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value id = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, bid, bdim), tid);
  Value inRange = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ult, id,
      arith::ConstantIndexOp::create(b, loc, points));
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  b.setInsertionPointToStart(guard.thenBlock());
  // Last dim fastest: neighbouring threads, neighbouring elements.
  SmallVector<Value> ivs(ubs.size());
  Value rest = id;
  for (int64_t k = ubs.size() - 1; k >= 0; --k) {
    Value ub = arith::ConstantIndexOp::create(b, loc, ubs[k]);
    ivs[k] = k == 0 ? rest : arith::RemUIOp::create(b, loc, rest, ub);
    if (k > 0)
      rest = arith::DivUIOp::create(b, loc, rest, ub);
  }
  Block *body = loop.getBody();
  b.eraseOp(body->getTerminator()); // scf.reduce without operands
  b.inlineBlockBefore(body, guard.thenBlock()->getTerminator(), ivs);
  b.eraseOp(loop);
  return success();
}

/// Moves kernel `fn` (its body already loops) into `gpuModule` as a
/// gpu.func kernel of the same name and arguments.
LogicalResult outlineToGpu(func::FuncOp fn, gpu::GPUModuleOp gpuModule,
                           int64_t points) {
  OpBuilder b(gpuModule.getBodyRegion());
  b.setInsertionPointToEnd(gpuModule.getBody());
  auto kernel = gpu::GPUFuncOp::create(b, fn.getLoc(), fn.getSymName(),
                                       fn.getFunctionType());
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    kernel.setArgAttrs(i, fn.getArgAttrDict(i));
  kernel.getBody().takeBody(fn.getBody());
  Block &entry = kernel.getBody().front();
  Operation *ret = entry.getTerminator();
  b.setInsertionPoint(ret);
  gpu::ReturnOp::create(b, ret->getLoc());
  ret->erase();
  fn.erase();
  SmallVector<scf::ParallelOp> loops(entry.getOps<scf::ParallelOp>());
  if (loops.size() > 1)
    return kernel.emitError("several parallel loop nests in one kernel");
  // No parallel dims (a full reduction): the one thread launched runs it.
  if (loops.empty())
    return success();
  return mapParallelToThreads(loops.front(), points);
}

DialectRegistry makeRegistry() {
  DialectRegistry registry;
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  cf::ControlFlowDialect, func::FuncDialect, gpu::GPUDialect,
                  index::IndexDialect, linalg::LinalgDialect,
                  LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
                  NVVM::NVVMDialect, scf::SCFDialect, ub::UBDialect>();
  // convert-gpu-to-nvvm lowers every other dialect through these.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  return registry;
}

/// The PTX of the module's gpu.binary (format=isa).
FailureOr<std::string> extractPtx(ModuleOp module, std::string &error) {
  std::string ptx;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute a : binary.getObjects())
      if (auto object = dyn_cast<gpu::ObjectAttr>(a))
        ptx = object.getObject().getValue().str();
  });
  if (ptx.empty()) {
    error = "the NVPTX backend produced no PTX";
    return failure();
  }
  return ptx;
}

} // namespace

FailureOr<GpuKernels>
autoshard::compileGpuKernels(ModuleOp kernels, const KernelOptions &options,
                             std::string &error) {
  FailureOr<std::string> libdevice = findLibdevice(options, error);
  if (failed(libdevice))
    return failure();
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    kernels.print(os);
  }
  MLIRContext ctx(makeRegistry(), MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  FirstErrorHandler handler(&ctx, error);
  OwningOpRef<ModuleOp> module = parseKernelModule(text, &ctx);
  if (!module)
    return failure();

  GpuKernels result;
  std::string suffix = llvm::utohexstr(llvm::xxh3_64bits(text), true);
  SmallVector<func::FuncOp> fns(module->getOps<func::FuncOp>());
  for (func::FuncOp fn : fns) {
    SmallVector<linalg::GenericOp> generics(fn.getOps<linalg::GenericOp>());
    if (generics.size() != 1) {
      error = "kernel '" + fn.getSymName().str() + "' is not one loop nest";
      return failure();
    }
    GpuKernels::Entry &entry = result.kernels[fn.getSymName()];
    entry.name = (fn.getSymName() + "_" + suffix).str();
    entry.threads = putParallelDimsFirst(generics.front());
    fn.setSymName(entry.name);
  }

  {
    PassManager pm(&ctx);
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
    if (failed(pm.run(*module))) {
      if (error.empty())
        error = "lowering the kernels to loops failed";
      return failure();
    }
  }
  OpBuilder b(&ctx);
  b.setInsertionPointToEnd(module->getBody());
  auto target = NVVM::NVVMTargetAttr::get(&ctx, /*optLevel=*/3,
                                          "nvptx64-nvidia-cuda",
                                          getChip(options));
  auto gpuModule =
      gpu::GPUModuleOp::create(b, module->getLoc(), "autoshard_kernels",
                               b.getArrayAttr({target}));
  module->getOperation()->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                                  b.getUnitAttr());
  llvm::StringMap<int64_t> threadsOf;
  for (const auto &entry : result.kernels)
    threadsOf[entry.second.name] = entry.second.threads;
  for (func::FuncOp fn : fns)
    if (failed(outlineToGpu(fn, gpuModule, threadsOf[fn.getSymName()]))) {
      if (error.empty())
        error = "mapping the loops to GPU threads failed";
      return failure();
    }

  PassManager pm(&ctx);
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // The interpreter computes rsqrt as 1 / sqrt.
  math::MathExpandOpsPassOptions expand;
  expand.opMnemonics = {"rsqrt"};
  pm.addPass(math::createMathExpandOpsPass(expand));
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(nvvm));
  pm.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = getCudaPath(options);
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  if (failed(pm.run(*module))) {
    if (error.empty())
      error = "lowering the kernels to PTX failed";
    return failure();
  }
  FailureOr<std::string> ptx = extractPtx(*module, error);
  if (failed(ptx))
    return failure();
  for (const auto &entry : result.kernels)
    if (ptx->find(".entry " + entry.second.name + "(") == std::string::npos) {
      error = "kernel '" + entry.second.name + "' is missing from the PTX";
      return failure();
    }
  result.ptx = std::move(*ptx);
  return result;
}
