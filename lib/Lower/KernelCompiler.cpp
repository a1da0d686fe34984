//===- KernelCompiler.cpp - Loop nests -> native CPU kernels --------------===//

#include "autoshard/Lower/KernelCompiler.h"

#include "Contraction.h"
#include "GemmEpilogue.h"
#include "HalfEmulation.h"
#include "InterpreterSemantics.h"

#include "autoshard/Runtime/KernelLibrary.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <mutex>

using namespace mlir;
using namespace autoshard;

/// Bump when the generated code changes for the same kernel module.
static constexpr const char *kPipelineVersion = "autoshard-kernels-3";

std::optional<KernelMode> autoshard::parseKernelMode(StringRef text) {
  if (text == "auto")
    return KernelMode::Auto;
  if (text == "compiled")
    return KernelMode::Compiled;
  if (text == "interpreted")
    return KernelMode::Interpreted;
  return std::nullopt;
}

std::string autoshard::getKernelCacheDir(const KernelOptions &options) {
  if (!options.cacheDir.empty())
    return options.cacheDir;
  if (std::optional<std::string> dir =
          llvm::sys::Process::GetEnv("AUTOSHARD_KERNEL_CACHE");
      dir && !dir->empty())
    return *dir;
  SmallString<256> path;
  if (std::optional<std::string> xdg =
          llvm::sys::Process::GetEnv("XDG_CACHE_HOME");
      xdg && !xdg->empty()) {
    path = *xdg;
  } else if (llvm::sys::path::home_directory(path)) {
    llvm::sys::path::append(path, ".cache");
  } else {
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/false, path);
  }
  llvm::sys::path::append(path, "autoshard", "kernels");
  return std::string(path);
}

//===----------------------------------------------------------------------===//
// Elementwise fusion
//===----------------------------------------------------------------------===//

/// The ops GEMMs fold as their epilogues (after groupGemmEpilogues): a
/// loop nest must not take them in, nor they another op.
static llvm::SmallPtrSet<Operation *, 16> getEpilogueOps(Operation *func) {
  llvm::SmallPtrSet<Operation *, 16> ops;
  func->walk([&](linalg::LinalgOp op) {
    for (Operation *absorbed : lower::getGemmEpilogueOps(op))
      ops.insert(absorbed);
  });
  return ops;
}

LogicalResult autoshard::fuseElementwiseOps(Operation *func) {
  MLIRContext *ctx = func->getContext();
  // The epilogue match sees GEMM -> bias add -> activation before fusion
  // mixes those ops with their neighbours (a residual add after them
  // still fuses with what follows it).
  lower::groupGemmEpilogues(func);
  llvm::SmallPtrSet<Operation *, 16> epilogueOps;
  if (lower::gemmEpiloguesEnabled())
    epilogueOps = getEpilogueOps(func);
  linalg::ControlFusionFn control = [&epilogueOps](OpOperand *fused) {
    Value v = fused->get();
    auto producer = v.getDefiningOp<linalg::GenericOp>();
    auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
    if (!producer || !consumer || !v.hasOneUse() ||
        producer->getBlock() != consumer->getBlock() ||
        epilogueOps.contains(producer) || epilogueOps.contains(consumer))
      return false;
    if (producer.getNumParallelLoops() != producer.getNumLoops())
      return false;
    // A reduction with several inputs may be a contraction (BLAS).
    if (consumer.getNumParallelLoops() != consumer.getNumLoops() &&
        consumer.getNumDpsInputs() != 1)
      return false;
    // Fused into a consumer that reads it under a broadcast, the producer's
    // body runs once per consumer point: fine for arithmetic, not for
    // transcendentals.
    bool heavy = false;
    producer.getRegion().walk([&](Operation *op) {
      if (isa<math::MathDialect>(op->getDialect()) ||
          isa<arith::DivFOp, arith::RemFOp>(op))
        heavy = true;
    });
    return !heavy || consumer.getMatchingIndexingMap(fused).isPermutation();
  };
  RewritePatternSet patterns(ctx);
  linalg::populateElementwiseOpsFusionPatterns(patterns, control);
  GreedyRewriteConfig config;
  config.enableFolding(false).setRegionSimplificationLevel(
      GreedySimplifyRegionLevel::Disabled);
  // Not converging is harmless: every step kept the program equivalent.
  (void)applyPatternsGreedily(func, std::move(patterns), config);
  return success();
}

//===----------------------------------------------------------------------===//
// Outlining
//===----------------------------------------------------------------------===//

namespace {

/// bf16/f16 tensors are emulated (HalfEmulation.h): i16 storage, f32 math.
bool isKernelElementType(Type t) {
  return t.isF32() || t.isF64() || isHalfType(t) || t.isInteger(1) ||
         t.isInteger(32) || t.isInteger(64) || t.isIndex();
}

/// The kernel argument type of a tensor (or scalar, as rank 0) operand.
MemRefType toMemRef(Type type) {
  if (auto ranked = dyn_cast<RankedTensorType>(type)) {
    if (!ranked.hasStaticShape() ||
        !isKernelElementType(ranked.getElementType()))
      return {};
    return MemRefType::get(ranked.getShape(), ranked.getElementType());
  }
  if (isa<ShapedType>(type) || !isKernelElementType(type))
    return {};
  return MemRefType::get({}, type);
}

/// Appends the kernel argument types of `values`; false if one has none.
bool appendArgTypes(ValueRange values, SmallVectorImpl<Type> &types) {
  for (Value v : values) {
    MemRefType t = toMemRef(v.getType());
    if (!t)
      return false;
    types.push_back(t);
  }
  return true;
}

/// Bodies of scalar arith/math ops (what the interpreter runs, minus
/// tensor.extract, whose bounds it checks, and ops that may trap).
bool isKernelBody(Region &region) {
  bool ok = true;
  region.walk([&](Operation *op) {
    if ((!isa<linalg::IndexOp, linalg::YieldOp>(op) &&
         !isa<arith::ArithDialect, math::MathDialect>(op->getDialect())) ||
        !canEmulateHalf(op) || mayTrap(op))
      ok = false;
    for (Type t : op->getResultTypes())
      if (!isKernelElementType(t))
        ok = false;
  });
  return ok;
}

} // namespace

struct KernelCompiler::Impl {
  MLIRContext *context;
  KernelOptions options;
  OwningOpRef<ModuleOp> module;
  llvm::StringMap<std::string> symbolOf; // printed body -> symbol
  std::vector<std::string> symbols;

  /// Starts `@k(args)` with noalias memref arguments at the module's end.
  func::FuncOp startKernel(OpBuilder &b, Location loc, TypeRange args) {
    b.setInsertionPointToEnd(module->getBody());
    auto fn = func::FuncOp::create(b, loc, "k", b.getFunctionType(args, {}));
    for (unsigned i = 0; i < args.size(); ++i)
      fn.setArgAttr(i, "llvm.noalias", b.getUnitAttr());
    b.setInsertionPointToStart(fn.addEntryBlock());
    return fn;
  }

  /// Gives `fn` the interpreter's values where MLIR has none, emulates
  /// bf16/f16, verifies it and names it, reusing an identical kernel's
  /// symbol.
  std::string finishKernel(func::FuncOp fn) {
    {
      ScopedDiagnosticHandler quiet(context,
                                    [](Diagnostic &) { return success(); });
      rewriteToInterpreterSemantics(fn);
      if (failed(emulateHalfTypes(fn)) || failed(verify(fn))) {
        fn.erase();
        return "";
      }
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    fn.print(os, OpPrintingFlags().useLocalScope());
    auto [it, inserted] = symbolOf.try_emplace(text, "");
    if (!inserted) {
      fn.erase();
      return it->second;
    }
    it->second = "autoshard_kernel_" + std::to_string(symbols.size());
    fn.setSymName(it->second);
    symbols.push_back(it->second);
    return it->second;
  }

  FailureOr<SmallVector<char, 0>> compileObject(const std::string &text,
                                                std::string &error);
};

KernelCompiler::KernelCompiler(MLIRContext *context, KernelOptions options)
    : impl(std::make_unique<Impl>()) {
  impl->context = context;
  impl->options = std::move(options);
  if (impl->options.mode == KernelMode::Interpreted)
    return;
  context->getOrLoadDialect<memref::MemRefDialect>();
  context->getOrLoadDialect<func::FuncDialect>();
  context->getOrLoadDialect<linalg::LinalgDialect>();
  impl->module = ModuleOp::create(UnknownLoc::get(context));
}

KernelCompiler::~KernelCompiler() = default;

int64_t KernelCompiler::getNumKernels() const { return impl->symbols.size(); }

ModuleOp KernelCompiler::getKernelModule() const {
  return impl->module ? *impl->module : ModuleOp();
}

bool KernelCompiler::wants(int64_t iterations) const {
  switch (impl->options.mode) {
  case KernelMode::Interpreted:
    return false;
  case KernelMode::Compiled:
    return true;
  case KernelMode::Auto:
    return iterations >= impl->options.compileThreshold;
  }
  return false;
}

std::string KernelCompiler::addLinalg(linalg::LinalgOp op,
                                      ArrayRef<std::pair<Value, int>> captures,
                                      int numCaptures) {
  Operation *raw = op.getOperation();
  if (!op.hasPureTensorSemantics() || raw->getNumRegions() != 1 ||
      !raw->getRegion(0).hasOneBlock() || !isKernelBody(raw->getRegion(0)))
    return "";
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t iterations = 1;
  for (int64_t r : ranges) {
    if (ShapedType::isDynamic(r))
      return "";
    iterations *= r;
  }
  if (!wants(iterations))
    return "";
  SmallVector<Type> argTypes;
  if (!appendArgTypes(raw->getOperands(), argTypes))
    return "";
  int numOperands = argTypes.size();
  SmallVector<Type> captureTypes(numCaptures);
  for (auto [v, k] : captures) {
    MemRefType t = toMemRef(v.getType());
    if (!t || t.getRank() != 0 || k < 0 || k >= numCaptures)
      return "";
    captureTypes[k] = t;
  }
  for (Type t : captureTypes) {
    if (!t)
      return "";
    argTypes.push_back(t);
  }

  OpBuilder b(impl->context);
  Location loc = raw->getLoc();
  func::FuncOp fn = impl->startKernel(b, loc, argTypes);
  Block &entry = fn.getBody().front();
  IRMapping mapping;
  for (auto [v, k] : captures) {
    if (auto c = v.getDefiningOp<arith::ConstantOp>())
      mapping.map(v, b.clone(*c)->getResult(0));
    else
      mapping.map(v, memref::LoadOp::create(
                         b, loc, entry.getArgument(numOperands + k)));
  }
  SmallVector<Value> ins, outs;
  for (OpOperand *o : op.getDpsInputOperands())
    ins.push_back(entry.getArgument(o->getOperandNumber()));
  for (OpOperand &o : op.getDpsInitsMutable())
    outs.push_back(entry.getArgument(o.getOperandNumber()));
  auto generic = linalg::GenericOp::create(
      b, loc, ValueRange(ins), ValueRange(outs), op.getIndexingMapsArray(),
      op.getIteratorTypesArray());
  raw->getRegion(0).cloneInto(&generic.getRegion(), mapping);
  // linalg.map's body has no arguments for its inits.
  Block &body = generic.getRegion().front();
  for (unsigned i = body.getNumArguments(); i < raw->getNumOperands(); ++i)
    body.addArgument(getElementTypeOrSelf(raw->getOperand(i).getType()), loc);
  func::ReturnOp::create(b, loc);
  return impl->finishKernel(fn);
}

std::string KernelCompiler::addElementwise(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0 ||
      !canEmulateHalf(op) || mayTrap(op))
    return "";
  Type resultType = op->getResult(0).getType();
  auto ranked = dyn_cast<RankedTensorType>(resultType);
  int64_t rank = ranked ? ranked.getRank() : 0;
  int64_t iterations = ranked ? ranked.getNumElements() : 1;
  if ((ranked && !ranked.hasStaticShape()) || !wants(iterations))
    return "";
  MLIRContext *ctx = impl->context;
  SmallVector<Type> argTypes;
  if (!appendArgTypes(op->getOperands(), argTypes))
    return "";
  SmallVector<AffineMap> maps;
  for (Value v : op->getOperands()) {
    auto tensor = dyn_cast<RankedTensorType>(v.getType());
    maps.push_back(tensor && tensor.getRank() == rank
                       ? AffineMap::getMultiDimIdentityMap(rank, ctx)
                       : AffineMap::get(rank, 0, {}, ctx));
  }
  MemRefType resultMemRef = toMemRef(resultType);
  if (!resultMemRef)
    return "";
  argTypes.push_back(resultMemRef);
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));

  OpBuilder b(ctx);
  Location loc = op->getLoc();
  func::FuncOp fn = impl->startKernel(b, loc, argTypes);
  Block &entry = fn.getBody().front();
  unsigned numInputs = op->getNumOperands();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, loc, entry.getArguments().take_front(numInputs),
      entry.getArguments().drop_front(numInputs), maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        OperationState state(nloc, op->getName());
        state.addOperands(args.take_front(numInputs));
        state.addTypes(resultMemRef.getElementType());
        state.addAttributes(op->getAttrs());
        Operation *scalar = nb.create(state);
        linalg::YieldOp::create(nb, nloc, scalar->getResult(0));
      });
  func::ReturnOp::create(b, loc);
  return impl->finishKernel(fn);
}

//===----------------------------------------------------------------------===//
// Compiling and caching
//===----------------------------------------------------------------------===//

namespace {

struct HostTarget {
  std::string triple, cpu, features;
};

const HostTarget &getHostTarget() {
  static HostTarget host = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    HostTarget h;
    h.triple = llvm::sys::getProcessTriple();
    h.cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures features;
    for (const auto &f : llvm::sys::getHostCPUFeatures())
      features.AddFeature(f.getKey(), f.getValue());
    h.features = features.getString();
    return h;
  }();
  return host;
}

/// A C compiler driver to link shared libraries: $AUTOSHARD_KERNEL_CC, else
/// cc, gcc, clang, clang-22 on PATH.
std::optional<std::string> findLinker(std::string &tried) {
  SmallVector<std::string> names;
  if (std::optional<std::string> cc =
          llvm::sys::Process::GetEnv("AUTOSHARD_KERNEL_CC");
      cc && !cc->empty())
    names.push_back(*cc);
  else
    names = {"cc", "gcc", "clang", "clang-22"};
  for (const std::string &name : names) {
    tried += (tried.empty() ? "" : ", ") + name;
    if (llvm::sys::path::is_absolute(name)) {
      if (llvm::sys::fs::can_execute(name))
        return name;
      continue;
    }
    if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name))
      return *path;
  }
  return std::nullopt;
}

/// Whether `path` loads and defines every kernel.
bool isUsableLibrary(const std::string &path, ArrayRef<std::string> symbols) {
  try {
    std::shared_ptr<rt::KernelLibrary> lib = rt::KernelLibrary::open(path);
    for (const std::string &s : symbols)
      lib->lookup(s);
    return true;
  } catch (const rt::Error &) {
    return false;
  }
}

/// An exclusive lock on `path` (created if needed) for this scope.
class FileLock {
public:
  explicit FileLock(const Twine &path) {
    if (llvm::sys::fs::openFileForReadWrite(
            path, fd, llvm::sys::fs::CD_OpenAlways, llvm::sys::fs::OF_None) ||
        llvm::sys::fs::lockFile(fd)) {
      if (fd >= 0)
        llvm::sys::Process::SafelyCloseFileDescriptor(fd);
      fd = -1;
    }
  }
  ~FileLock() {
    if (fd < 0)
      return;
    (void)llvm::sys::fs::unlockFile(fd);
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  bool isLocked() const { return fd >= 0; }

private:
  int fd = -1;
};

} // namespace

std::string autoshard::getFirstLine(StringRef text) {
  text = text.trim();
  return text.substr(0, text.find('\n')).trim().str();
}

FirstErrorHandler::FirstErrorHandler(MLIRContext *context, std::string &error)
    : ScopedDiagnosticHandler(context, [&error](Diagnostic &d) {
        if (error.empty() && d.getSeverity() == DiagnosticSeverity::Error)
          error = getFirstLine(d.str());
        return success();
      }) {}

OwningOpRef<ModuleOp> autoshard::parseKernelModule(StringRef text,
                                                   MLIRContext *context) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, context);
  if (module)
    promoteF32MathToF64(*module);
  return module;
}

/// The interpreter evaluates f32 math functions in double and rounds the
/// result to f32; so do the kernels (libm's double functions), which makes
/// them bit-exact with it rather than within an ulp or two.
void autoshard::promoteF32MathToF64(ModuleOp module) {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp, math::Log2Op,
            math::Log1pOp, math::TanhOp, math::SinOp, math::CosOp, math::TanOp,
            math::ErfOp, math::AtanOp, math::Atan2Op, math::PowFOp,
            math::RsqrtOp, math::FmaOp>(op) &&
        op->getResult(0).getType().isF32())
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Type f64 = b.getF64Type();
    OperationState state(loc, op->getName());
    for (Value v : op->getOperands())
      state.addOperands(arith::ExtFOp::create(b, loc, f64, v).getResult());
    state.addTypes(f64);
    state.addAttributes(op->getAttrs());
    Operation *wide = b.create(state);
    Value narrow =
        arith::TruncFOp::create(b, loc, b.getF32Type(), wide->getResult(0));
    op->getResult(0).replaceAllUsesWith(narrow);
    op->erase();
  }
}

FailureOr<SmallVector<char, 0>>
KernelCompiler::Impl::compileObject(const std::string &text,
                                    std::string &error) {
  DialectRegistry registry;
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  cf::ControlFlowDialect, func::FuncDialect,
                  linalg::LinalgDialect, LLVM::LLVMDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  FirstErrorHandler handler(&ctx, error);
  OwningOpRef<ModuleOp> module = parseKernelModule(text, &ctx);
  if (!module)
    return failure();

  PassManager pm(&ctx);
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // libm first: MathToLLVM would approximate expm1/log1p. libm has no
  // rsqrt: 1 / sqrt(x).
  math::MathExpandOpsPassOptions expand;
  expand.opMnemonics = {"rsqrt"};
  pm.addPass(math::createMathExpandOpsPass(expand));
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (failed(pm.run(*module))) {
    if (error.empty())
      error = "lowering to the LLVM dialect failed";
    return failure();
  }

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "autoshard_kernels");
  if (!llvmModule) {
    if (error.empty())
      error = "translation to LLVM IR failed";
    return failure();
  }

  const HostTarget &host = getHostTarget();
  llvm::Triple triple(host.triple);
  std::string lookupError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target) {
    error = "no LLVM target for " + host.triple + ": " + lookupError;
    return failure();
  }
  llvm::TargetOptions targetOptions;
  // IEEE semantics: a*b+c stays two rounded operations.
  targetOptions.AllowFPOpFusion = llvm::FPOpFusion::Strict;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, host.cpu, host.features, targetOptions, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine) {
    error = "cannot create an LLVM target machine for " + host.triple;
    return failure();
  }
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);

  // `void NAME_packed(void **args)` around every kernel.
  auto *ptrType = llvm::PointerType::getUnqual(llvmContext);
  auto *packedType = llvm::FunctionType::get(llvm::Type::getVoidTy(llvmContext),
                                             {ptrType}, false);
  for (const std::string &name : symbols) {
    llvm::Function *kernel = llvmModule->getFunction(name);
    if (!kernel) {
      error = "kernel '" + name + "' vanished during lowering";
      return failure();
    }
    auto *packed =
        llvm::Function::Create(packedType, llvm::GlobalValue::ExternalLinkage,
                               name + "_packed", *llvmModule);
    llvm::IRBuilder<> builder(
        llvm::BasicBlock::Create(llvmContext, "entry", packed));
    SmallVector<llvm::Value *> args;
    for (unsigned i = 0; i < kernel->arg_size(); ++i)
      args.push_back(builder.CreateLoad(
          ptrType, builder.CreateConstGEP1_64(ptrType, packed->getArg(0), i)));
    builder.CreateCall(kernel, args);
    builder.CreateRetVoid();
    kernel->setLinkage(llvm::GlobalValue::InternalLinkage);
  }

  auto optimize = makeOptimizingTransformer(3, 0, machine.get());
  if (llvm::Error e = optimize(llvmModule.get())) {
    error = "LLVM optimisation failed: " + llvm::toString(std::move(e));
    return failure();
  }
  SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the LLVM target cannot emit object files";
    return failure();
  }
  codegen.run(*llvmModule);
  return object;
}

/// --kernels=compiled: an error; auto: a warning and "" (every loop nest is
/// then interpreted: a read-only cache or a missing compiler must not stop a
/// run the interpreter can do).
FailureOr<std::string> autoshard::reportKernelFailure(Location loc,
                                                     bool autoMode,
                                                     const std::string &msg) {
  if (autoMode) {
    emitWarning(loc, "autoshard: compiled kernels: ")
        << msg << "; interpreting every loop nest";
    return std::string();
  }
  emitError(loc, "autoshard: compiled kernels: ") << msg;
  return failure();
}

FailureOr<std::string> KernelCompiler::finish(Location loc) {
  if (impl->symbols.empty())
    return std::string();
  bool autoMode = impl->options.mode == KernelMode::Auto;
  auto fail = [&](const Twine &msg) {
    return reportKernelFailure(loc, autoMode, msg.str());
  };

  std::string text;
  {
    llvm::raw_string_ostream os(text);
    impl->module->print(os);
  }
  const HostTarget &host = getHostTarget();
  llvm::SHA256 sha;
  for (StringRef part :
       {StringRef(kPipelineVersion), StringRef(LLVM_VERSION_STRING),
        StringRef(host.triple), StringRef(host.cpu), StringRef(host.features),
        StringRef(text)}) {
    sha.update(part);
    sha.update(StringRef("\n"));
  }
  std::array<uint8_t, 32> digest = sha.final();
  std::string key =
      llvm::toHex(ArrayRef<uint8_t>(digest.data(), 16), /*LowerCase=*/true);

  std::string dir = getKernelCacheDir(impl->options);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return fail("cannot create the cache directory '" + dir +
                "': " + ec.message());
  SmallString<256> libPath(dir);
  llvm::sys::path::append(libPath, "autoshard-" + key + ".so");
  std::string lib(libPath);

  // Ranks loading the same program: the first builds, the others wait.
  FileLock lock(lib + ".lock");
  if (!lock.isLocked())
    return fail("cannot lock '" + lib + ".lock' in the cache directory");
  if (llvm::sys::fs::exists(lib) && isUsableLibrary(lib, impl->symbols))
    return lib;

  std::string tried;
  std::optional<std::string> linker = findLinker(tried);
  if (!linker) {
    std::string msg = "no C compiler driver (" + tried +
                      ") on PATH to link them; set AUTOSHARD_KERNEL_CC or "
                      "use --kernels=interpreted";
    return fail(msg);
  }

  std::string error;
  FailureOr<SmallVector<char, 0>> object = impl->compileObject(text, error);
  if (failed(object))
    return fail(error);

  std::string stem =
      lib + "." + std::to_string(llvm::sys::Process::getProcessId());
  std::string objPath = stem + ".o", tmpLib = stem + ".so",
              logPath = stem + ".log";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objPath, ec);
    if (ec)
      return fail("cannot write '" + objPath + "': " + ec.message());
    os.write(object->data(), object->size());
  }
  SmallVector<StringRef> argv = {*linker, "-shared", "-o",
                                 tmpLib,  objPath,   "-lm"};
  std::optional<StringRef> redirects[] = {std::nullopt, logPath, logPath};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(*linker, argv, std::nullopt, redirects, 0,
                                     0, &execError);
  std::string log;
  if (auto buf = llvm::MemoryBuffer::getFile(logPath))
    log = getFirstLine((*buf)->getBuffer());
  llvm::sys::fs::remove(objPath);
  llvm::sys::fs::remove(logPath);
  if (rc != 0) {
    llvm::sys::fs::remove(tmpLib);
    return fail("linking with '" + *linker + "' failed" +
                (log.empty() ? (execError.empty() ? "" : ": " + execError)
                             : ": " + log));
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmpLib, lib)) {
    llvm::sys::fs::remove(tmpLib);
    return fail("cannot move the library into '" + lib + "': " + ec.message());
  }
  return lib;
}
