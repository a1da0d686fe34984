//===- ProgramLoader.cpp - Partitioned MLIR module -> runtime Program -----===//

#include "autoshard/Lower/ProgramLoader.h"
#include "autoshard/Lower/GpuKernelCompiler.h"
#include "autoshard/Lower/KernelCompiler.h"

#include "Contraction.h"
#include "GemmEpilogue.h"

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "autoshard/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace autoshard;
namespace rt = autoshard::rt;

std::optional<rt::DType> lower::toDType(Type type) {
  if (type.isF32())
    return rt::DType::F32;
  if (type.isF64())
    return rt::DType::F64;
  if (type.isBF16())
    return rt::DType::BF16;
  if (type.isF16())
    return rt::DType::F16;
  if (type.isIndex() || type.isInteger(64))
    return rt::DType::I64;
  if (type.isInteger(32))
    return rt::DType::I32;
  if (type.isInteger(1))
    return rt::DType::I1;
  return std::nullopt;
}

namespace {

std::optional<ReductionKind> toReduction(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum:
    return ReductionKind::Sum;
  case shard::ReductionKind::Max:
    return ReductionKind::Max;
  case shard::ReductionKind::Min:
    return ReductionKind::Min;
  case shard::ReductionKind::Product:
    return ReductionKind::Product;
  default:
    return std::nullopt;
  }
}

/// Decomposes an affine expression into sum(coeffs[l] * d_l) + constant.
LogicalResult linearize(AffineExpr expr, int64_t numLoops,
                        std::vector<int64_t> &coeffs, int64_t &constant,
                        int64_t scale = 1) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    coeffs[dim.getPosition()] += scale;
    return success();
  }
  if (auto cst = dyn_cast<AffineConstantExpr>(expr)) {
    constant += scale * cst.getValue();
    return success();
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!bin)
    return failure();
  if (expr.getKind() == AffineExprKind::Add)
    return success(
        succeeded(linearize(bin.getLHS(), numLoops, coeffs, constant, scale)) &&
        succeeded(linearize(bin.getRHS(), numLoops, coeffs, constant, scale)));
  if (expr.getKind() == AffineExprKind::Mul) {
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
      return linearize(bin.getLHS(), numLoops, coeffs, constant,
                       scale * c.getValue());
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getLHS()))
      return linearize(bin.getRHS(), numLoops, coeffs, constant,
                       scale * c.getValue());
  }
  return failure();
}

class Loader {
public:
  Loader(ModuleOp module, const LowerOptions &options)
      : module(module), options(options) {}
  FailureOr<rt::Program> run(StringRef entry);

private:
  // Values.
  FailureOr<rt::ValueId> define(Value v);
  FailureOr<rt::ValueId> lookup(Value v, Operation *user);
  void alias(Value result, rt::ValueId id) { ids[result] = id; }
  rt::ValueId emitEmpty(Value like);
  rt::Instruction &emit(rt::OpKind kind, Operation *op);
  std::string describe(Operation *op);

  LogicalResult setUpMesh(func::FuncOp func);
  LogicalResult checkTiedOutputs(func::FuncOp func, func::ReturnOp ret);
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerAnnotation(Operation *op);
  LogicalResult lowerProcessMultiIndex(shard::ProcessMultiIndexOp op);
  LogicalResult lowerProcessLinearIndex(Operation *op);
  LogicalResult lowerSoftmax(linalg::SoftmaxOp op);
  FailureOr<rt::Instruction *> emitOnValues(Operation *op, rt::OpKind kind,
                                            ValueRange operands);
  LogicalResult pushWithDynamic(Operation *op, rt::Instruction inst,
                                rt::OpKind kind, std::vector<rt::ValueId> fixed,
                                ArrayRef<rt::ValueId> dynamic);
  LogicalResult lowerExtractSlice(tensor::ExtractSliceOp op);
  LogicalResult lowerInsertSlice(tensor::InsertSliceOp op);
  LogicalResult lowerConcat(tensor::ConcatOp op);
  LogicalResult lowerPad(tensor::PadOp op);
  LogicalResult lowerGather(tensor::GatherOp op);
  LogicalResult lowerExtract(tensor::ExtractOp op);
  LogicalResult lowerDim(tensor::DimOp op);
  LogicalResult lowerConstant(arith::ConstantOp op);
  LogicalResult lowerLinalg(linalg::LinalgOp op);
  LogicalResult lowerElementwise(Operation *op);
  LogicalResult lowerCollective(Operation *op);
  LogicalResult addGeneric(Operation *op, std::vector<int64_t> loopRanges,
                           ArrayRef<AffineMap> maps, ValueRange inputs,
                           ValueRange inits, ResultRange results, Block *body);
  LogicalResult dynamicList(Operation *op, ArrayRef<OpFoldResult> values,
                            std::vector<int64_t> &out,
                            std::vector<rt::ValueId> &dynamic);
  void compileLinalg(linalg::LinalgOp op, rt::GenericSpec &spec,
                     ArrayRef<rt::ValueId> captureIds);
  LogicalResult finishKernels(func::FuncOp func);
  void markWindowOp(linalg::LinalgOp op, rt::Instruction &inst);
  LogicalResult finishGpuKernels(func::FuncOp func);

  ModuleOp module;
  LowerOptions options;
  rt::Program program;
  llvm::DenseMap<Value, rt::ValueId> ids;
  bool partitioned = false;
  /// Compiles loop nests to native kernels (null: all interpreted).
  std::unique_ptr<KernelCompiler> kernels;
  std::vector<std::shared_ptr<rt::GenericSpec>> compiledSpecs;
};

//===----------------------------------------------------------------------===//
// Scalar body compilation
//===----------------------------------------------------------------------===//

/// Compiles the ops of a region (or one elementwise op) into bytecode.
/// Values from outside the region become captures.
class BodyCompiler {
public:
  BodyCompiler(rt::GenericSpec &spec, Region *region,
               std::function<FailureOr<rt::ValueId>(Value, Operation *)> lookup)
      : spec(spec), region(region), lookup(std::move(lookup)) {}

  void bindArg(Value v, int32_t reg) { regs[v] = reg; }
  int32_t newReg() { return spec.numRegs++; }
  std::vector<rt::ValueId> &getCaptures() { return captures; }

  FailureOr<int32_t> getReg(Value v, Operation *user) {
    auto it = regs.find(v);
    if (it != regs.end())
      return it->second;
    // A scalar defined outside the body: read it as a rank-0 capture.
    if (region && region->isAncestor(v.getParentRegion()))
      return user->emitError("value used before its definition in body"),
             failure();
    if (isa<ShapedType>(v.getType()))
      return user->emitError("a whole tensor cannot be used as a scalar in a "
                             "loop body"),
             failure();
    FailureOr<rt::ValueId> id = lookup(v, user);
    if (failed(id))
      return failure();
    auto type = lower::toDType(v.getType());
    rt::ScalarInst in;
    in.op = rt::ScalarOp::Captured;
    in.type = *type;
    in.imm = addCapture(*id);
    in.dst = newReg();
    spec.body.push_back(in);
    regs[v] = in.dst;
    return in.dst;
  }

  int64_t addCapture(rt::ValueId id) {
    for (size_t i = 0; i < captures.size(); ++i)
      if (captures[i] == id)
        return i;
    captures.push_back(id);
    return captures.size() - 1;
  }

  /// Appends the instruction of one op of the body.
  LogicalResult compile(Operation *op);

private:
  /// The instruction's types, or an error for an op that has none.
  FailureOr<rt::ScalarInst> startInst(Operation *op);
  /// Fills in the instruction's op, operands and immediates.
  LogicalResult matchOp(Operation *op, rt::ScalarInst &in,
                        ArrayRef<int32_t> operandRegs);

  rt::GenericSpec &spec;
  Region *region;
  std::function<FailureOr<rt::ValueId>(Value, Operation *)> lookup;
  llvm::DenseMap<Value, int32_t> regs;
  std::vector<rt::ValueId> captures;
};

/// The scalar op of `op` when it reads its operands' registers in order
/// (nullopt: a constant, an index, an extract or unsupported).
static std::optional<rt::ScalarOp> getRegisterOp(Operation *op) {
  using rt::ScalarOp;
  return llvm::TypeSwitch<Operation *, std::optional<ScalarOp>>(op)
      .Case<arith::AddFOp, arith::AddIOp>([](auto) { return ScalarOp::Add; })
      .Case<arith::SubFOp, arith::SubIOp>([](auto) { return ScalarOp::Sub; })
      .Case<arith::MulFOp, arith::MulIOp>([](auto) { return ScalarOp::Mul; })
      .Case<arith::DivFOp, arith::DivSIOp>([](auto) { return ScalarOp::Div; })
      .Case<arith::DivUIOp>([](auto) { return ScalarOp::DivU; })
      .Case<arith::RemFOp, arith::RemSIOp>([](auto) { return ScalarOp::Rem; })
      .Case<arith::RemUIOp>([](auto) { return ScalarOp::RemU; })
      .Case<arith::MaximumFOp, arith::MaxSIOp>(
          [](auto) { return ScalarOp::Max; })
      .Case<arith::MinimumFOp, arith::MinSIOp>(
          [](auto) { return ScalarOp::Min; })
      .Case<arith::MaxNumFOp>([](auto) { return ScalarOp::MaxNum; })
      .Case<arith::MinNumFOp>([](auto) { return ScalarOp::MinNum; })
      .Case<arith::MaxUIOp>([](auto) { return ScalarOp::MaxU; })
      .Case<arith::MinUIOp>([](auto) { return ScalarOp::MinU; })
      .Case<arith::NegFOp>([](auto) { return ScalarOp::Neg; })
      .Case<arith::AndIOp>([](auto) { return ScalarOp::And; })
      .Case<arith::OrIOp>([](auto) { return ScalarOp::Or; })
      .Case<arith::XOrIOp>([](auto) { return ScalarOp::Xor; })
      .Case<arith::ShLIOp>([](auto) { return ScalarOp::Shl; })
      .Case<arith::ShRSIOp>([](auto) { return ScalarOp::ShrS; })
      .Case<arith::ShRUIOp>([](auto) { return ScalarOp::ShrU; })
      .Case<arith::CmpFOp>([](auto) { return ScalarOp::CmpF; })
      .Case<arith::CmpIOp>([](auto) { return ScalarOp::CmpI; })
      .Case<arith::SelectOp>([](auto) { return ScalarOp::Select; })
      .Case<arith::SIToFPOp>([](auto) { return ScalarOp::IToF; })
      .Case<arith::UIToFPOp>([](auto) { return ScalarOp::UIToF; })
      .Case<arith::FPToSIOp>([](auto) { return ScalarOp::FToI; })
      .Case<arith::FPToUIOp>([](auto) { return ScalarOp::FToUI; })
      .Case<arith::ExtFOp, arith::TruncFOp>(
          [](auto) { return ScalarOp::FCast; })
      .Case<arith::ExtSIOp, arith::TruncIOp, arith::IndexCastOp>(
          [](auto) { return ScalarOp::ICast; })
      .Case<arith::ExtUIOp, arith::IndexCastUIOp>(
          [](auto) { return ScalarOp::ZExt; })
      .Case<math::ExpOp>([](auto) { return ScalarOp::Exp; })
      .Case<math::Exp2Op>([](auto) { return ScalarOp::Exp2; })
      .Case<math::ExpM1Op>([](auto) { return ScalarOp::Expm1; })
      .Case<math::LogOp>([](auto) { return ScalarOp::Log; })
      .Case<math::Log2Op>([](auto) { return ScalarOp::Log2; })
      .Case<math::Log1pOp>([](auto) { return ScalarOp::Log1p; })
      .Case<math::SqrtOp>([](auto) { return ScalarOp::Sqrt; })
      .Case<math::RsqrtOp>([](auto) { return ScalarOp::Rsqrt; })
      .Case<math::TanhOp>([](auto) { return ScalarOp::Tanh; })
      .Case<math::SinOp>([](auto) { return ScalarOp::Sin; })
      .Case<math::CosOp>([](auto) { return ScalarOp::Cos; })
      .Case<math::TanOp>([](auto) { return ScalarOp::Tan; })
      .Case<math::ErfOp>([](auto) { return ScalarOp::Erf; })
      .Case<math::AtanOp>([](auto) { return ScalarOp::Atan; })
      .Case<math::Atan2Op>([](auto) { return ScalarOp::Atan2; })
      .Case<math::PowFOp>([](auto) { return ScalarOp::Pow; })
      .Case<math::FloorOp>([](auto) { return ScalarOp::Floor; })
      .Case<math::CeilOp>([](auto) { return ScalarOp::Ceil; })
      .Case<math::RoundOp>([](auto) { return ScalarOp::Round; })
      .Case<math::RoundEvenOp>([](auto) { return ScalarOp::RoundEven; })
      .Case<math::TruncOp>([](auto) { return ScalarOp::Trunc; })
      .Case<math::AbsFOp, math::AbsIOp>([](auto) { return ScalarOp::Abs; })
      .Case<math::FmaOp>([](auto) { return ScalarOp::Fma; })
      .Default([](Operation *) { return std::nullopt; });
}

FailureOr<rt::ScalarInst> BodyCompiler::startInst(Operation *op) {
  if (op->getNumResults() != 1)
    return op->emitError("autoshard-run: unsupported op '")
           << op->getName() << "' in a loop body";
  Type resultType = getElementTypeOrSelf(op->getResult(0).getType());
  std::optional<rt::DType> type = lower::toDType(resultType);
  if (!type)
    return op->emitError("autoshard-run: unsupported scalar type ")
           << resultType << " in a loop body";
  rt::ScalarInst in;
  in.type = *type;
  in.srcType = *type;
  if (op->getNumOperands() > 0) {
    if (auto src =
            lower::toDType(getElementTypeOrSelf(op->getOperand(0).getType())))
      in.srcType = *src;
  }
  return in;
}

LogicalResult BodyCompiler::matchOp(Operation *op, rt::ScalarInst &in,
                                    ArrayRef<int32_t> operandRegs) {
  using rt::ScalarOp;
  if (std::optional<ScalarOp> kind = getRegisterOp(op)) {
    in.op = *kind;
    if (operandRegs.size() > 0)
      in.a = operandRegs[0];
    if (operandRegs.size() > 1)
      in.b = operandRegs[1];
    if (operandRegs.size() > 2)
      in.c = operandRegs[2];
    if (auto c = dyn_cast<arith::CmpFOp>(op))
      in.imm = static_cast<int64_t>(c.getPredicate());
    if (auto c = dyn_cast<arith::CmpIOp>(op))
      in.imm = static_cast<int64_t>(c.getPredicate());
    return success();
  }
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<arith::ConstantOp>([&](arith::ConstantOp c) {
        in.op = ScalarOp::Const;
        if (auto f = dyn_cast<FloatAttr>(c.getValue()))
          in.fimm = f.getValueAsDouble();
        else if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
          in.imm = c.getType().isInteger(1) ? (i.getValue().getBoolValue())
                                            : i.getValue().getSExtValue();
        else
          return failure();
        return success();
      })
      .Case<linalg::IndexOp>([&](linalg::IndexOp i) {
        in.op = ScalarOp::Index;
        in.imm = i.getDim();
        return success();
      })
      .Case<tensor::ExtractOp>([&](tensor::ExtractOp e) -> LogicalResult {
        if (region && region->isAncestor(e.getTensor().getParentRegion()))
          return failure();
        FailureOr<rt::ValueId> id = lookup(e.getTensor(), op);
        if (failed(id))
          return failure();
        in.op = ScalarOp::Captured;
        in.imm = addCapture(*id);
        for (Value ix : e.getIndices()) {
          FailureOr<int32_t> r = getReg(ix, op);
          if (failed(r))
            return failure();
          in.args.push_back(*r);
        }
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

LogicalResult BodyCompiler::compile(Operation *op) {
  FailureOr<rt::ScalarInst> in = startInst(op);
  if (failed(in))
    return failure();
  // Operands to registers (tensor.extract's tensor is handled by matchOp).
  std::vector<int32_t> operandRegs;
  if (!isa<tensor::ExtractOp>(op))
    for (Value v : op->getOperands()) {
      FailureOr<int32_t> r = getReg(v, op);
      if (failed(r))
        return failure();
      operandRegs.push_back(*r);
    }
  if (failed(matchOp(op, *in, operandRegs)))
    return op->emitError("autoshard-run: unsupported op '")
           << op->getName() << "' in a loop body";
  in->dst = newReg();
  spec.body.push_back(*in);
  regs[op->getResult(0)] = in->dst;
  return success();
}

//===----------------------------------------------------------------------===//
// Loader
//===----------------------------------------------------------------------===//

std::string Loader::describe(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
    os << loc.getFilename().getValue() << ":" << loc.getLine() << ":"
       << loc.getColumn() << " ";
  os << op->getName().getStringRef();
  return s;
}

FailureOr<rt::ValueId> Loader::define(Value v) {
  Type type = v.getType();
  rt::Shape shape;
  Type elem = type;
  if (auto ranked = dyn_cast<RankedTensorType>(type)) {
    if (!ranked.hasStaticShape()) {
      emitError(v.getLoc(), "autoshard-run: dynamic shapes are not supported: ")
          << type;
      return failure();
    }
    shape.assign(ranked.getShape().begin(), ranked.getShape().end());
    elem = ranked.getElementType();
  } else if (isa<ShapedType>(type)) {
    emitError(v.getLoc(), "autoshard-run: unsupported type ") << type;
    return failure();
  }
  std::optional<rt::DType> dtype = lower::toDType(elem);
  if (!dtype) {
    emitError(v.getLoc(), "autoshard-run: unsupported element type ")
        << elem << " (supported: f32, f64, bf16, f16, i1, i32, i64, index)";
    return failure();
  }
  // The runtime sizes buffers in int64 bytes: a larger tensor (e.g. a splat
  // of 2^62 f32) would wrap to a small allocation and be written past.
  int64_t bytes = rt::getDTypeSize(*dtype);
  for (int64_t d : shape)
    if (llvm::MulOverflow(bytes, d, bytes)) {
      emitError(v.getLoc(), "autoshard-run: ")
          << type << " has more bytes than a buffer can hold (2^63)";
      return failure();
    }
  rt::ValueId id = program.addValue(*dtype, shape);
  ids[v] = id;
  return id;
}

FailureOr<rt::ValueId> Loader::lookup(Value v, Operation *user) {
  auto it = ids.find(v);
  if (it != ids.end())
    return it->second;
  user->emitError("autoshard-run: operand defined by an unsupported or "
                  "nested construct");
  return failure();
}

rt::Instruction &Loader::emit(rt::OpKind kind, Operation *op) {
  program.instructions.emplace_back();
  rt::Instruction &inst = program.instructions.back();
  inst.kind = kind;
  if (op)
    inst.location = describe(op);
  return inst;
}

rt::ValueId Loader::emitEmpty(Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  rt::ValueId id = program.addValue(
      *lower::toDType(type.getElementType()),
      rt::Shape(type.getShape().begin(), type.getShape().end()));
  rt::Instruction &inst = emit(rt::OpKind::Empty, like.getDefiningOp());
  inst.results = {id};
  return id;
}

LogicalResult Loader::setUpMesh(func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, "dist.global_type"))
      partitioned = true;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (func.getResultAttr(i, "dist.global_type"))
      partitioned = true;
  if (!partitioned) {
    program.mesh = DeviceMesh({MeshAxis{"replica", 1}});
    return success();
  }
  dist::MeshAttr mesh;
  if (auto attr = module->getAttr("dist.mesh"))
    mesh = dyn_cast<dist::MeshAttr>(attr);
  auto fromLayout = [&](Attribute a) {
    if (auto layout = dyn_cast_or_null<dist::LayoutAttr>(a))
      if (!mesh)
        mesh = layout.getMesh();
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    fromLayout(func.getArgAttr(i, "dist.layout"));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    fromLayout(func.getResultAttr(i, "dist.layout"));
  if (!mesh)
    return func.emitError("autoshard-run: partitioned function has no mesh "
                          "(module attribute 'dist.mesh' or 'dist.layout' "
                          "argument attributes)");
  program.mesh = mesh.toDeviceMesh();
  return success();
}

/// `dist.init` on an argument: "zeros" (optimizer state starts at zero) is
/// the only initialiser a program can ask for.
static LogicalResult readArgInit(DictionaryAttr attrs, rt::ProgramIO &io,
                                 Location loc) {
  Attribute init = attrs ? attrs.get("dist.init") : Attribute();
  if (!init)
    return success();
  auto str = dyn_cast<StringAttr>(init);
  if (!str || str.getValue() != "zeros")
    return emitError(loc, "autoshard-run: argument '")
           << io.name << "': dist.init must be \"zeros\", got " << init;
  io.zeroInit = true;
  return success();
}

/// `dist.tied_arg` on a result: the argument it replaces in the next step.
static LogicalResult readTiedArg(DictionaryAttr attrs, unsigned numArgs,
                                 rt::ProgramIO &io, Location loc) {
  Attribute tied = attrs ? attrs.get("dist.tied_arg") : Attribute();
  if (!tied)
    return success();
  auto index = dyn_cast<IntegerAttr>(tied);
  if (!index || index.getInt() < 0 || index.getInt() >= numArgs)
    return emitError(loc, "autoshard-run: result '")
           << io.name << "': dist.tied_arg must be an argument index in [0, "
           << numArgs << "), got " << tied;
  io.tiedInput = index.getInt();
  return success();
}

/// A tied result is fed back as its argument's local shard without any
/// communication, so both must hold the same shard of the same tensor.
LogicalResult Loader::checkTiedOutputs(func::FuncOp func, func::ReturnOp ret) {
  llvm::DenseMap<int, size_t> tiedBy;
  for (size_t i = 0; i < program.outputs.size(); ++i) {
    const rt::ProgramIO &out = program.outputs[i];
    if (out.tiedInput < 0)
      continue;
    const rt::ProgramIO &in = program.inputs[out.tiedInput];
    auto diag = [&]() {
      return emitError(ret.getLoc(), "autoshard-run: result ")
             << i << " ('" << out.name << "') is tied to argument "
             << out.tiedInput << " ('" << in.name << "') by dist.tied_arg but ";
    };
    auto [it, inserted] = tiedBy.try_emplace(out.tiedInput, i);
    if (!inserted)
      return diag() << "so is result " << it->second;
    Type argType = func.getArgument(out.tiedInput).getType();
    Type resultType = ret.getOperand(i).getType();
    if (argType == resultType && out.globalShape == in.globalShape &&
        out.layout == in.layout)
      continue;
    // Both sides in full: the layouts usually explain the local types.
    auto describe = [&](Type local, const rt::ProgramIO &io) {
      return llvm::formatv("{0} (global [{1}], layout {2})", local,
                           rt::stringifyShape(io.globalShape),
                           io.layout.str(program.mesh))
          .str();
    };
    return diag() << "holds another shard: the result is "
                  << describe(resultType, out) << ", the argument "
                  << describe(argType, in);
  }
  return success();
}

FailureOr<rt::Program> Loader::run(StringRef entry) {
  func::FuncOp func;
  if (!entry.empty()) {
    func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal()) {
      module.emitError("autoshard-run: no function '") << entry << "'";
      return failure();
    }
  } else if (auto main = module.lookupSymbol<func::FuncOp>("main");
             main && !main.isExternal()) {
    func = main;
  } else {
    for (auto f : module.getOps<func::FuncOp>()) {
      if (f.isExternal())
        continue;
      if (func) {
        module.emitError("autoshard-run: several functions and none named "
                         "'main'; pick one with --entry");
        return failure();
      }
      func = f;
    }
    if (!func) {
      module.emitError("autoshard-run: the module has no function to run");
      return failure();
    }
  }
  if (options.kernels.mode != KernelMode::Interpreted)
    kernels = std::make_unique<KernelCompiler>(module.getContext(),
                                               options.kernels);
  if (!func.getBody().hasOneBlock())
    return func.emitError("autoshard-run: the entry function must have a "
                          "single block"),
           failure();
  if (failed(setUpMesh(func)))
    return failure();

  auto ioFor = [&](DictionaryAttr attrs, Type localType, StringRef defaultName,
                   rt::ProgramIO &io, Location loc) -> LogicalResult {
    io.name = defaultName.str();
    auto local = dyn_cast<RankedTensorType>(localType);
    rt::Shape localShape;
    if (local)
      localShape.assign(local.getShape().begin(), local.getShape().end());
    io.globalShape = localShape;
    io.layout = TensorLayout::replicated(localShape.size());
    if (!attrs)
      return success();
    if (auto name = attrs.getAs<StringAttr>("dist.name"))
      io.name = name.str();
    if (auto file = attrs.getAs<StringAttr>("dist.weight"))
      io.file = file.str();
    if (auto sum = attrs.getAs<StringAttr>("dist.weight_checksum"))
      io.fileChecksum = sum.str();
    if (!partitioned)
      return success();
    if (auto global = attrs.getAs<TypeAttr>("dist.global_type")) {
      auto g = dyn_cast<RankedTensorType>(global.getValue());
      if (!g || !g.hasStaticShape())
        return emitError(loc, "autoshard-run: dist.global_type must be a "
                              "static ranked tensor type");
      io.globalShape.assign(g.getShape().begin(), g.getShape().end());
    }
    if (auto layout = attrs.getAs<dist::LayoutAttr>("dist.layout")) {
      io.layout = layout.toTensorLayout();
      if (!(layout.getMesh().toDeviceMesh() == program.mesh))
        return emitError(loc, "autoshard-run: layout on a different mesh "
                              "than the module's");
    }
    std::string err = io.layout.validate(program.mesh, &io.globalShape);
    if (!err.empty())
      return emitError(loc, "autoshard-run: ") << err;
    return success();
  };

  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    FailureOr<rt::ValueId> id = define(arg);
    if (failed(id))
      return failure();
    rt::ProgramIO io;
    io.value = *id;
    if (failed(ioFor(func.getArgAttrDict(arg.getArgNumber()), arg.getType(),
                     ("arg" + Twine(arg.getArgNumber())).str(), io,
                     arg.getLoc())) ||
        failed(readArgInit(func.getArgAttrDict(arg.getArgNumber()), io,
                           arg.getLoc())))
      return failure();
    program.inputs.push_back(io);
  }
  for (Operation &op : body.getOperations()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        FailureOr<rt::ValueId> id = lookup(v, ret);
        if (failed(id))
          return failure();
        rt::ProgramIO io;
        io.value = *id;
        if (failed(ioFor(func.getResultAttrDict(i), v.getType(),
                         ("result" + Twine(i)).str(), io, ret.getLoc())) ||
            failed(readTiedArg(func.getResultAttrDict(i),
                               func.getNumArguments(), io, ret.getLoc())))
          return failure();
        program.outputs.push_back(io);
      }
      if (failed(checkTiedOutputs(func, ret)))
        return failure();
      continue;
    }
    if (failed(lowerOp(&op)))
      return failure();
  }
  if (failed(finishKernels(func)))
    return failure();
  std::string err = program.verify();
  if (!err.empty())
    return func.emitError("autoshard-run: internal error, invalid plan: ")
               << err,
           failure();
  return std::move(program);
}

LogicalResult Loader::dynamicList(Operation *op, ArrayRef<OpFoldResult> values,
                                  std::vector<int64_t> &out,
                                  std::vector<rt::ValueId> &dynamic) {
  for (OpFoldResult ofr : values) {
    if (auto attr = dyn_cast<Attribute>(ofr)) {
      out.push_back(cast<IntegerAttr>(attr).getInt());
      continue;
    }
    FailureOr<rt::ValueId> id = lookup(cast<Value>(ofr), op);
    if (failed(id))
      return failure();
    out.push_back(rt::kDynamic);
    dynamic.push_back(*id);
  }
  return success();
}

/// Sets element `i` of `t` from an integer or float attribute.
static void setElement(rt::Tensor &t, int64_t i, Attribute a) {
  if (auto f = dyn_cast<FloatAttr>(a))
    t.setFromDouble(i, f.getValueAsDouble());
  else if (auto n = dyn_cast<IntegerAttr>(a))
    t.setFromInt(i, n.getType().isInteger(1) ? n.getValue().getBoolValue()
                                             : n.getValue().getSExtValue());
}

LogicalResult Loader::lowerConstant(arith::ConstantOp op) {
  FailureOr<rt::ValueId> id = define(op.getResult());
  if (failed(id))
    return failure();
  const rt::ValueInfo info = program.values[*id];
  Attribute value = op.getValue();
  auto dense = dyn_cast<DenseElementsAttr>(value);
  // A splat stays one scalar and a Fill: written out whole it made the
  // plan (and the compiler's memory) as large as the tensor, 4 TiB for
  // dense<1.0> : tensor<1048576x1048576xf32>. The Fill allocates when it
  // runs, on each rank its shard only.
  if (dense && dense.isSplat() && rt::getNumElements(info.shape) > 1) {
    rt::ValueId scalar = program.addValue(info.type, {});
    rt::Tensor s(info.type, {});
    setElement(s, 0, dense.getSplatValue<Attribute>());
    rt::Instruction &c = emit(rt::OpKind::Constant, op);
    c.results = {scalar};
    c.constant = s;
    rt::Instruction &fill = emit(rt::OpKind::Fill, op);
    fill.operands = {scalar};
    fill.results = {*id};
    return success();
  }
  // Anything else holds its elements in the attribute already: the plan's
  // copy is no larger than the input.
  rt::Tensor t(info.type, info.shape);
  if (dense) {
    int64_t i = 0;
    for (Attribute a : dense.getValues<Attribute>())
      setElement(t, i++, a);
  } else if (isa<FloatAttr, IntegerAttr>(value)) {
    setElement(t, 0, value);
  } else {
    return op.emitError("autoshard-run: unsupported constant ") << value;
  }
  rt::Instruction &inst = emit(rt::OpKind::Constant, op);
  inst.results = {*id};
  inst.constant = t;
  return success();
}

LogicalResult Loader::addGeneric(Operation *op, std::vector<int64_t> ranges,
                                 ArrayRef<AffineMap> maps, ValueRange inputs,
                                 ValueRange inits, ResultRange results,
                                 Block *body) {
  auto spec = std::make_shared<rt::GenericSpec>();
  spec->loopRanges = std::move(ranges);
  spec->numInputs = inputs.size();
  spec->numOutputs = inits.size();
  int64_t numLoops = spec->loopRanges.size();
  for (AffineMap map : maps) {
    rt::AffineMapSpec m;
    m.numResults = map.getNumResults();
    for (AffineExpr e : map.getResults()) {
      std::vector<int64_t> coeffs(numLoops, 0);
      int64_t cst = 0;
      if (map.getNumSymbols() || failed(linearize(e, numLoops, coeffs, cst)))
        return op->emitError("autoshard-run: indexing map ")
               << AffineMapAttr::get(map)
               << " is not affine-linear in the loop indices";
      m.coeffs.insert(m.coeffs.end(), coeffs.begin(), coeffs.end());
      m.consts.push_back(cst);
    }
    spec->maps.push_back(std::move(m));
  }
  std::vector<rt::ValueId> operands;
  for (Value v : llvm::concat<const Value>(inputs, inits)) {
    FailureOr<rt::ValueId> id = lookup(v, op);
    if (failed(id))
      return failure();
    operands.push_back(*id);
  }
  BodyCompiler compiler(
      *spec, body ? body->getParent() : nullptr,
      [&](Value v, Operation *user) { return lookup(v, user); });
  spec->numRegs = spec->numInputs + spec->numOutputs;
  if (body) {
    for (auto [i, arg] : llvm::enumerate(body->getArguments()))
      compiler.bindArg(arg, i);
    for (Operation &bodyOp : body->getOperations()) {
      if (auto yield = dyn_cast<linalg::YieldOp>(bodyOp)) {
        for (Value v : yield.getOperands()) {
          FailureOr<int32_t> r = compiler.getReg(v, yield);
          if (failed(r))
            return failure();
          spec->yields.push_back(*r);
        }
        continue;
      }
      if (failed(compiler.compile(&bodyOp)))
        return failure();
    }
  } else {
    return op->emitError("internal: generic without body");
  }
  if (static_cast<int32_t>(spec->yields.size()) != spec->numOutputs)
    return op->emitError("autoshard-run: loop body yields ")
           << spec->yields.size() << " values for " << spec->numOutputs
           << " outputs";
  spec->numCaptures = compiler.getCaptures().size();
  rt::Instruction &inst = emit(rt::OpKind::Generic, op);
  inst.operands = operands;
  inst.operands.insert(inst.operands.end(), compiler.getCaptures().begin(),
                       compiler.getCaptures().end());
  for (Value r : results) {
    FailureOr<rt::ValueId> id = define(r);
    if (failed(id))
      return failure();
    // `inst` may have moved if define() appended instructions; it does not.
    program.instructions.back().results.push_back(*id);
  }
  program.instructions.back().generic = spec;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op); linalgOp && kernels)
    compileLinalg(linalgOp, *spec, compiler.getCaptures());
  if (!spec->kernel.empty())
    compiledSpecs.push_back(spec);
  return success();
}

void Loader::compileLinalg(linalg::LinalgOp op, rt::GenericSpec &spec,
                           ArrayRef<rt::ValueId> captureIds) {
  // The values the body reads from outside, with their capture index.
  Region &region = op->getRegion(0);
  SmallVector<std::pair<Value, int>> captures;
  bool ok = true;
  region.walk([&](Operation *inner) {
    for (Value v : inner->getOperands()) {
      if (region.isAncestor(v.getParentRegion()))
        continue;
      auto it = ids.find(v);
      const rt::ValueId *pos =
          it == ids.end() ? captureIds.end()
                          : llvm::find(captureIds, it->second);
      if (pos == captureIds.end()) {
        ok = false;
        continue;
      }
      captures.push_back({v, static_cast<int>(pos - captureIds.begin())});
    }
  });
  if (ok)
    spec.kernel = kernels->addLinalg(op, captures, captureIds.size());
}

LogicalResult Loader::finishKernels(func::FuncOp func) {
  if (!kernels || compiledSpecs.empty())
    return success();
  if (options.kernels.gpu)
    return finishGpuKernels(func);
  FailureOr<std::string> library = kernels->finish(func.getLoc());
  if (failed(library))
    return failure();
  // Auto mode without a C compiler: everything stays interpreted.
  if (library->empty())
    for (const std::shared_ptr<rt::GenericSpec> &spec : compiledSpecs)
      spec->kernel.clear();
  program.kernelLibrary = *library;
  return success();
}

LogicalResult Loader::finishGpuKernels(func::FuncOp func) {
  std::string error;
  FailureOr<GpuKernels> gpu =
      compileGpuKernels(kernels->getKernelModule(), options.kernels, error);
  if (failed(gpu)) {
    if (failed(reportKernelFailure(
            func.getLoc(), options.kernels.mode == KernelMode::Auto,
            "CUDA kernels: " + error)))
      return failure();
    for (const std::shared_ptr<rt::GenericSpec> &spec : compiledSpecs)
      spec->kernel.clear();
    return success();
  }
  // The CUDA backend runs the PTX; the CPU library is not built.
  for (const std::shared_ptr<rt::GenericSpec> &spec : compiledSpecs) {
    const GpuKernels::Entry &entry = gpu->kernels[spec->kernel];
    spec->gpuKernel = entry.name;
    spec->gpuThreads = entry.threads;
    spec->kernel.clear();
  }
  program.gpuModule = std::move(gpu->ptx);
  return success();
}

LogicalResult Loader::lowerLinalg(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics())
    return op->emitError("autoshard-run: linalg on buffers is not supported");
  Operation *raw = op.getOperation();
  std::vector<int64_t> ranges;
  for (int64_t r : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(r))
      return op->emitError("autoshard-run: dynamic loop range");
    ranges.push_back(r);
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op->getContext();
  auto dims = [&](std::initializer_list<unsigned> ds, unsigned n) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d : ds)
      exprs.push_back(getAffineDimExpr(d, ctx));
    return AffineMap::get(n, 0, exprs, ctx);
  };
  Type elem = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  bool blas = elem.isF32() || elem.isF64();
  for (Value v : op->getOperands())
    if (getElementTypeOrSelf(v.getType()) != elem)
      blas = false;

  auto emitBlas = [&](rt::OpKind kind, bool ta, bool tb) -> LogicalResult {
    std::vector<rt::ValueId> operands;
    for (Value v : op->getOperands()) {
      FailureOr<rt::ValueId> id = lookup(v, raw);
      if (failed(id))
        return failure();
      operands.push_back(*id);
    }
    FailureOr<rt::ValueId> res = define(raw->getResult(0));
    if (failed(res))
      return failure();
    rt::Instruction &inst = emit(kind, raw);
    inst.operands = operands;
    inst.results = {*res};
    inst.transA = ta;
    inst.transB = tb;
    return success();
  };
  // Contractions (named or generic) as GEMMs; the plain matmul and
  // batch_matmul below are what is left with them off.
  if (options.gemmContractions) {
    lower::PlanBuilder builder{
        program, [&](Value v, Operation *user) { return lookup(v, user); },
        [&](Value v) { return define(v); },
        [&](rt::OpKind kind, Operation *at) -> rt::Instruction & {
          return emit(kind, at);
        }};
    FailureOr<bool> gemm = lower::tryLowerContraction(op, builder);
    if (failed(gemm) || *gemm)
      return success(succeeded(gemm));
  }
  if (isa<linalg::MatmulOp>(raw) && blas && maps.size() == 3 &&
      maps[2] == dims({0, 1}, 3)) {
    bool ta = maps[0] == dims({2, 0}, 3), tb = maps[1] == dims({1, 2}, 3);
    if ((ta || maps[0] == dims({0, 2}, 3)) &&
        (tb || maps[1] == dims({2, 1}, 3)))
      return emitBlas(rt::OpKind::Matmul, ta, tb);
  }
  if (isa<linalg::BatchMatmulOp>(raw) && blas && maps.size() == 3 &&
      maps[2] == dims({0, 1, 2}, 4)) {
    bool ta = maps[0] == dims({0, 3, 1}, 4), tb = maps[1] == dims({0, 2, 3}, 4);
    if ((ta || maps[0] == dims({0, 1, 3}, 4)) &&
        (tb || maps[1] == dims({0, 3, 2}, 4)))
      return emitBlas(rt::OpKind::BatchMatmul, ta, tb);
  }
  if (auto transpose = dyn_cast<linalg::TransposeOp>(raw)) {
    // Read by GEMMs only, which read its input instead.
    if (options.gemmContractions && lower::isFoldedIntoContractions(transpose))
      return success();
    FailureOr<rt::ValueId> in = lookup(transpose.getInput(), raw);
    FailureOr<rt::ValueId> init = lookup(transpose.getInit(), raw);
    if (failed(in) || failed(init))
      return failure();
    FailureOr<rt::ValueId> res = define(raw->getResult(0));
    if (failed(res))
      return failure();
    rt::Instruction &inst = emit(rt::OpKind::Transpose, raw);
    inst.operands = {*in, *init};
    inst.results = {*res};
    inst.perm.assign(transpose.getPermutation().begin(),
                     transpose.getPermutation().end());
    return success();
  }
  if (auto fill = dyn_cast<linalg::FillOp>(raw)) {
    // Only GEMM inits, which make their own.
    if (options.gemmContractions && lower::isRemadeByContractions(fill))
      return success();
    FailureOr<rt::ValueId> value = lookup(fill.getInputs()[0], raw);
    if (failed(value))
      return failure();
    if (!program.values[*value].shape.empty())
      return raw->emitError("autoshard-run: linalg.fill needs a scalar");
    FailureOr<rt::ValueId> res = define(raw->getResult(0));
    if (failed(res))
      return failure();
    rt::Instruction &inst = emit(rt::OpKind::Fill, raw);
    inst.operands = {*value};
    inst.results = {*res};
    return success();
  }
  if (raw->getNumRegions() != 1 || raw->getRegion(0).empty())
    return raw->emitError("autoshard-run: unsupported op '")
           << raw->getName() << "'";
  if (failed(addGeneric(raw, ranges, maps, op.getDpsInputs(),
                        op.getDpsInits(), raw->getResults(),
                        &raw->getRegion(0).front())))
    return failure();
  markWindowOp(op, program.instructions.back());
  return success();
}

/// 2-D NCHW f32 convs and pools run as the backend's kernels (oneDNN on the
/// CPU); the loop nest just built stays as the fallback.
void Loader::markWindowOp(linalg::LinalgOp op, rt::Instruction &inst) {
  Operation *raw = op.getOperation();
  if (!isa<linalg::Conv2DNchwFchwOp, linalg::PoolingNchwMaxOp,
           linalg::PoolingNchwSumOp>(raw) ||
      !llvm::all_of(raw->getOperandTypes(),
                    [](Type t) { return getElementTypeOrSelf(t).isF32(); }))
    return;
  auto ints = [](Attribute a) {
    std::vector<int64_t> v;
    for (const APInt &x : cast<DenseIntElementsAttr>(a).getValues<APInt>())
      v.push_back(x.getSExtValue());
    return v;
  };
  inst.strides = ints(raw->getAttr("strides"));
  inst.offsets = ints(raw->getAttr("dilations"));
  if (isa<linalg::Conv2DNchwFchwOp>(raw)) {
    inst.kind = rt::OpKind::Conv2D;
    return;
  }
  inst.kind = rt::OpKind::Pool2D;
  auto window = cast<RankedTensorType>(raw->getOperand(1).getType());
  inst.sizes.assign(window.getShape().begin(), window.getShape().end());
  inst.dim = isa<linalg::PoolingNchwMaxOp>(raw) ? 0 : 1;
}

LogicalResult Loader::lowerElementwise(Operation *op) {
  // arith/math on tensors (same shape) or scalars: a loop nest over the
  // result with identity maps (rank-0 operands broadcast).
  Value result = op->getResult(0);
  auto resultType = dyn_cast<RankedTensorType>(result.getType());
  int64_t rank = resultType ? resultType.getRank() : 0;
  std::vector<int64_t> ranges;
  if (resultType) {
    if (!resultType.hasStaticShape())
      return op->emitError("autoshard-run: dynamic shapes are not supported");
    ranges.assign(resultType.getShape().begin(), resultType.getShape().end());
  }
  MLIRContext *ctx = op->getContext();
  SmallVector<AffineMap> maps;
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    maps.push_back(t && t.getRank() == rank
                       ? AffineMap::getMultiDimIdentityMap(rank, ctx)
                       : AffineMap::get(rank, 0, {}, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));

  auto spec = std::make_shared<rt::GenericSpec>();
  spec->loopRanges = ranges;
  spec->numInputs = op->getNumOperands();
  spec->numOutputs = 1;
  for (AffineMap map : maps) {
    rt::AffineMapSpec m;
    m.numResults = map.getNumResults();
    for (AffineExpr e : map.getResults()) {
      std::vector<int64_t> coeffs(rank, 0);
      coeffs[cast<AffineDimExpr>(e).getPosition()] = 1;
      m.coeffs.insert(m.coeffs.end(), coeffs.begin(), coeffs.end());
      m.consts.push_back(0);
    }
    spec->maps.push_back(std::move(m));
  }
  std::vector<rt::ValueId> operands;
  for (Value v : op->getOperands()) {
    FailureOr<rt::ValueId> id = lookup(v, op);
    if (failed(id))
      return failure();
    operands.push_back(*id);
  }
  // Compile the op itself with its operands bound to registers 0..n-1. A
  // clone with scalar types would be heavier; binding the tensor values
  // directly works because the compiler only reads element types.
  spec->numRegs = spec->numInputs + 1;
  BodyCompiler compiler(*spec, nullptr, [&](Value v, Operation *user) {
    return lookup(v, user);
  });
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    compiler.bindArg(v, i);
  if (failed(compiler.compile(op)))
    return failure();
  spec->body.back().type =
      *lower::toDType(getElementTypeOrSelf(result.getType()));
  if (op->getNumOperands())
    spec->body.back().srcType =
        *lower::toDType(getElementTypeOrSelf(op->getOperand(0).getType()));
  spec->yields = {spec->body.back().dst};
  rt::ValueId init = resultType ? emitEmpty(result)
                                : program.addValue(spec->body.back().type, {});
  if (!resultType) {
    rt::Instruction &e = emit(rt::OpKind::Empty, op);
    e.results = {init};
  }
  FailureOr<rt::ValueId> res = define(result);
  if (failed(res))
    return failure();
  rt::Instruction &inst = emit(rt::OpKind::Generic, op);
  inst.operands = operands;
  inst.operands.push_back(init);
  inst.results = {*res};
  inst.generic = spec;
  if (kernels) {
    spec->kernel = kernels->addElementwise(op);
    if (!spec->kernel.empty())
      compiledSpecs.push_back(spec);
  }
  return success();
}

LogicalResult Loader::lowerCollective(Operation *op) {
  rt::Instruction inst;
  inst.kind = rt::OpKind::Collective;
  inst.location = describe(op);
  CollectiveStep &step = inst.collective;
  auto setAxes = [&](ArrayRef<int16_t> axes) {
    step.axes.assign(axes.begin(), axes.end());
  };
  auto setReduction = [&](shard::ReductionKind kind) -> LogicalResult {
    std::optional<ReductionKind> k = toReduction(kind);
    if (!k)
      return op->emitError("autoshard-run: unsupported reduction kind '")
             << shard::stringifyReductionKind(kind) << "'";
    step.reduction = *k;
    return success();
  };
  LogicalResult ok =
      llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case<shard::AllReduceOp>([&](shard::AllReduceOp o) {
            step.kind = CollectiveKind::AllReduce;
            setAxes(o.getGridAxes());
            if (getElementTypeOrSelf(o.getInput().getType()) !=
                getElementTypeOrSelf(o.getResult().getType()))
              return LogicalResult(o.emitError(
                  "autoshard-run: all_reduce changing the element type is "
                  "not supported"));
            return setReduction(o.getReduction());
          })
          .Case<shard::AllGatherOp>([&](shard::AllGatherOp o) {
            step.kind = CollectiveKind::AllGather;
            setAxes(o.getGridAxes());
            step.dim = o.getGatherAxis().getSExtValue();
            return success();
          })
          .Case<shard::AllSliceOp>([&](shard::AllSliceOp o) {
            step.kind = CollectiveKind::AllSlice;
            setAxes(o.getGridAxes());
            step.dim = o.getSliceAxis().getSExtValue();
            return success();
          })
          .Case<shard::ReduceScatterOp>([&](shard::ReduceScatterOp o) {
            step.kind = CollectiveKind::ReduceScatter;
            setAxes(o.getGridAxes());
            step.dim = o.getScatterAxis().getSExtValue();
            return setReduction(o.getReduction());
          })
          .Case<shard::AllToAllOp>([&](shard::AllToAllOp o) {
            step.kind = CollectiveKind::AllToAll;
            setAxes(o.getGridAxes());
            step.dim = o.getSplitAxis().getSExtValue();
            step.srcDim = o.getConcatAxis().getSExtValue();
            return success();
          })
          .Case<dist::PermuteOp>([&](dist::PermuteOp o) {
            step.kind = CollectiveKind::Permute;
            for (auto [s, t] : llvm::zip(o.getSources(), o.getTargets()))
              step.pairs.push_back({s, t});
            return success();
          })
          .Case<dist::MakePartialOp>([&](dist::MakePartialOp o) {
            step.kind = CollectiveKind::MakePartial;
            setAxes(o.getGridAxes());
            return setReduction(o.getReduction());
          })
          .Default([](Operation *) { return failure(); });
  if (failed(ok))
    return failure();
  if (!partitioned && !step.axes.empty())
    return op->emitError("autoshard-run: collective in a program without "
                         "dist.global_type/dist.layout on its arguments");
  for (int64_t a : step.axes)
    if (a < 0 || a >= program.mesh.getNumAxes())
      return op->emitError("autoshard-run: grid axis ")
             << a << " is not an axis of mesh " << program.mesh.str();
  FailureOr<rt::ValueId> in = lookup(op->getOperand(0), op);
  if (failed(in))
    return failure();
  FailureOr<rt::ValueId> res = define(op->getResult(0));
  if (failed(res))
    return failure();
  inst.operands = {*in};
  inst.results = {*res};
  program.instructions.push_back(std::move(inst));
  return success();
}

/// Dispatches one op of the entry function to the lowering for its kind,
/// which emits its instructions; arith/math ops not matched above are
/// elementwise.
LogicalResult Loader::lowerOp(Operation *op) {
  if (isa<dist::AnnotateOp, shard::ShardOp, dist::ReshardOp>(op))
    return lowerAnnotation(op);
  if (isa<shard::ShardingOp, shard::GridOp>(op))
    return success();
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return lowerConstant(c);
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op))
    return lowerSoftmax(softmax);
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return lowerLinalg(linalgOp);
  if (isa<shard::AllReduceOp, shard::AllGatherOp, shard::AllSliceOp,
          shard::ReduceScatterOp, shard::AllToAllOp, dist::PermuteOp,
          dist::MakePartialOp>(op))
    return lowerCollective(op);
  if (auto pmi = dyn_cast<shard::ProcessMultiIndexOp>(op))
    return lowerProcessMultiIndex(pmi);
  if (isa<shard::ProcessLinearIndexOp>(op))
    return lowerProcessLinearIndex(op);
  if (isa<tensor::EmptyOp>(op))
    return emitOnValues(op, rt::OpKind::Empty, ValueRange());
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ReshapeOp,
          tensor::CastOp>(op))
    return emitOnValues(op, rt::OpKind::Reshape, op->getOperand(0));
  if (auto splat = dyn_cast<tensor::SplatOp>(op))
    return emitOnValues(op, rt::OpKind::Fill, splat.getInput());
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return lowerExtractSlice(slice);
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    return lowerInsertSlice(insert);
  if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    return lowerConcat(concat);
  if (auto pad = dyn_cast<tensor::PadOp>(op))
    return lowerPad(pad);
  if (auto gather = dyn_cast<tensor::GatherOp>(op))
    return lowerGather(gather);
  if (auto extract = dyn_cast<tensor::ExtractOp>(op))
    return lowerExtract(extract);
  if (auto dim = dyn_cast<tensor::DimOp>(op))
    return lowerDim(dim);
  if (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) &&
      op->getNumResults() == 1)
    return lowerElementwise(op);
  return op->emitError("autoshard-run: unsupported op '")
         << op->getName() << "'";
}

//===----------------------------------------------------------------------===//
// Annotations, mesh indices
//===----------------------------------------------------------------------===//

/// Annotations are identities: the result names the operand's buffer.
LogicalResult Loader::lowerAnnotation(Operation *op) {
  // A reshard in a partitioned program would move no data here: the
  // partitioner, not the runtime, turns it into collectives.
  if (isa<dist::ReshardOp>(op) && partitioned)
    return op->emitError("autoshard-run: dist.reshard left in a "
                         "partitioned program (run --dist-partition)");
  FailureOr<rt::ValueId> id = lookup(op->getOperand(0), op);
  if (failed(id))
    return failure();
  alias(op->getResult(0), *id);
  return success();
}

LogicalResult Loader::lowerProcessMultiIndex(shard::ProcessMultiIndexOp op) {
  rt::Instruction inst;
  inst.kind = rt::OpKind::ProcessIndex;
  inst.location = describe(op);
  auto axes = op.getAxes();
  inst.perm.assign(axes.begin(), axes.end());
  for (Value r : op->getResults()) {
    FailureOr<rt::ValueId> id = define(r);
    if (failed(id))
      return failure();
    inst.results.push_back(*id);
  }
  // No axes listed: one index per mesh axis, in order.
  if (inst.perm.empty())
    for (int64_t a = 0; a < program.mesh.getNumAxes(); ++a)
      inst.perm.push_back(a);
  if (inst.perm.size() != inst.results.size())
    return op->emitError("autoshard-run: grid of ")
           << inst.results.size() << " axes does not match mesh "
           << program.mesh.str();
  program.instructions.push_back(std::move(inst));
  return success();
}

LogicalResult Loader::lowerProcessLinearIndex(Operation *op) {
  FailureOr<rt::Instruction *> inst =
      emitOnValues(op, rt::OpKind::ProcessIndex, ValueRange());
  if (failed(inst))
    return failure();
  (*inst)->dim = 1; // the linear index, not a per-axis one
  return success();
}

//===----------------------------------------------------------------------===//
// Tensor ops
//===----------------------------------------------------------------------===//

/// Emits `kind` with `operands` in order and `op`'s one result; the caller
/// sets the attributes.
FailureOr<rt::Instruction *>
Loader::emitOnValues(Operation *op, rt::OpKind kind, ValueRange operands) {
  std::vector<rt::ValueId> ins;
  bool found = true;
  for (Value v : operands) {
    FailureOr<rt::ValueId> id = lookup(v, op);
    found &= succeeded(id);
    if (succeeded(id))
      ins.push_back(*id);
  }
  if (!found)
    return failure();
  FailureOr<rt::ValueId> res = define(op->getResult(0));
  if (failed(res))
    return failure();
  rt::Instruction &inst = emit(kind, op);
  inst.operands = std::move(ins);
  inst.results = {*res};
  return &inst;
}

LogicalResult Loader::lowerSoftmax(linalg::SoftmaxOp op) {
  FailureOr<rt::Instruction *> inst = emitOnValues(
      op, rt::OpKind::Softmax, {op.getInput(), op.getOutput()});
  if (failed(inst))
    return failure();
  (*inst)->dim = op.getDimension();
  return success();
}

/// Finishes a slice-like instruction whose static offsets/sizes/strides are
/// already set: its operands are `fixed` then the dynamic index values.
LogicalResult Loader::pushWithDynamic(Operation *op, rt::Instruction inst,
                                      rt::OpKind kind,
                                      std::vector<rt::ValueId> fixed,
                                      ArrayRef<rt::ValueId> dynamic) {
  FailureOr<rt::ValueId> id = define(op->getResult(0));
  if (failed(id))
    return failure();
  inst.kind = kind;
  inst.location = describe(op);
  inst.operands = std::move(fixed);
  inst.operands.insert(inst.operands.end(), dynamic.begin(), dynamic.end());
  inst.results = {*id};
  program.instructions.push_back(std::move(inst));
  return success();
}

LogicalResult Loader::lowerExtractSlice(tensor::ExtractSliceOp op) {
  rt::Instruction inst;
  std::vector<rt::ValueId> dyn;
  if (failed(dynamicList(op, op.getMixedOffsets(), inst.offsets, dyn)) ||
      failed(dynamicList(op, op.getMixedSizes(), inst.sizes, dyn)) ||
      failed(dynamicList(op, op.getMixedStrides(), inst.strides, dyn)))
    return failure();
  FailureOr<rt::ValueId> src = lookup(op.getSource(), op);
  if (failed(src))
    return failure();
  return pushWithDynamic(op, std::move(inst), rt::OpKind::ExtractSlice, {*src},
                         dyn);
}

LogicalResult Loader::lowerInsertSlice(tensor::InsertSliceOp op) {
  rt::Instruction inst;
  std::vector<rt::ValueId> dyn;
  if (failed(dynamicList(op, op.getMixedOffsets(), inst.offsets, dyn)) ||
      failed(dynamicList(op, op.getMixedSizes(), inst.sizes, dyn)) ||
      failed(dynamicList(op, op.getMixedStrides(), inst.strides, dyn)))
    return failure();
  FailureOr<rt::ValueId> src = lookup(op.getSource(), op);
  FailureOr<rt::ValueId> dest = lookup(op.getDest(), op);
  if (failed(src) || failed(dest))
    return failure();
  return pushWithDynamic(op, std::move(inst), rt::OpKind::InsertSlice,
                         {*src, *dest}, dyn);
}

LogicalResult Loader::lowerConcat(tensor::ConcatOp op) {
  FailureOr<rt::Instruction *> inst =
      emitOnValues(op, rt::OpKind::Concat, op.getInputs());
  if (failed(inst))
    return failure();
  (*inst)->dim = op.getDim();
  return success();
}

/// Low pads go in `offsets`, high pads in `sizes`; the pad value is the
/// second operand.
LogicalResult Loader::lowerPad(tensor::PadOp op) {
  Value padValue = op.getConstantPaddingValue();
  if (!padValue)
    return op->emitError("autoshard-run: tensor.pad must yield a constant "
                         "or a value defined outside its region");
  rt::Instruction inst;
  std::vector<rt::ValueId> dyn;
  if (failed(dynamicList(op, op.getMixedLowPad(), inst.offsets, dyn)) ||
      failed(dynamicList(op, op.getMixedHighPad(), inst.sizes, dyn)))
    return failure();
  FailureOr<rt::ValueId> src = lookup(op.getSource(), op);
  if (failed(src))
    return failure();
  // A constant defined inside the region is materialised here.
  rt::ValueId value;
  if (auto it = ids.find(padValue); it != ids.end()) {
    value = it->second;
  } else if (auto c = padValue.getDefiningOp<arith::ConstantOp>()) {
    if (failed(lowerConstant(c)))
      return failure();
    value = ids[padValue];
  } else {
    return op->emitError("autoshard-run: unsupported tensor.pad value");
  }
  return pushWithDynamic(op, std::move(inst), rt::OpKind::Pad, {*src, value},
                         dyn);
}

LogicalResult Loader::lowerGather(tensor::GatherOp op) {
  FailureOr<rt::Instruction *> inst = emitOnValues(
      op, rt::OpKind::Gather, {op.getSource(), op.getIndices()});
  if (failed(inst))
    return failure();
  (*inst)->perm.assign(op.getGatherDims().begin(), op.getGatherDims().end());
  return success();
}

/// A top-level tensor.extract is a zero-loop nest whose body reads the
/// captured tensor, so it reuses the generic loop-nest machinery.
LogicalResult Loader::lowerExtract(tensor::ExtractOp op) {
  auto spec = std::make_shared<rt::GenericSpec>();
  spec->numInputs = op.getIndices().size();
  spec->numOutputs = 1;
  spec->maps.resize(spec->numInputs + 1);
  spec->numRegs = spec->numInputs + 1;
  std::vector<rt::ValueId> operands;
  for (Value v : op.getIndices()) {
    FailureOr<rt::ValueId> id = lookup(v, op);
    if (failed(id))
      return failure();
    operands.push_back(*id);
  }
  BodyCompiler compiler(*spec, nullptr, [&](Value v, Operation *user) {
    return lookup(v, user);
  });
  for (auto [i, v] : llvm::enumerate(op.getIndices()))
    compiler.bindArg(v, i);
  if (failed(compiler.compile(op)))
    return failure();
  spec->yields = {spec->body.back().dst};
  spec->numCaptures = 1;
  rt::ValueId init = program.addValue(spec->body.back().type, {});
  emit(rt::OpKind::Empty, op).results = {init};
  FailureOr<rt::ValueId> id = define(op->getResult(0));
  if (failed(id))
    return failure();
  rt::Instruction &inst = emit(rt::OpKind::Generic, op);
  inst.operands = operands;
  inst.operands.push_back(init);
  inst.operands.push_back(compiler.getCaptures().front());
  inst.results = {*id};
  inst.generic = spec;
  return success();
}

/// A static tensor.dim is a constant; shapes are static in a plan.
LogicalResult Loader::lowerDim(tensor::DimOp op) {
  std::optional<int64_t> index = op.getConstantIndex();
  auto type = dyn_cast<RankedTensorType>(op.getSource().getType());
  if (!index || !type || type.isDynamicDim(*index))
    return op->emitError("autoshard-run: tensor.dim must be static");
  FailureOr<rt::Instruction *> inst =
      emitOnValues(op, rt::OpKind::Constant, ValueRange());
  if (failed(inst))
    return failure();
  rt::Tensor t(rt::DType::I64, {});
  t.setFromInt(0, type.getDimSize(*index));
  (*inst)->constant = t;
  return success();
}

} // namespace

FailureOr<rt::Program> autoshard::lowerToProgram(ModuleOp module,
                                                 StringRef entry,
                                                 const LowerOptions &options) {
  bool fuse = options.kernels.mode != KernelMode::Interpreted &&
              options.kernels.fuse;
  if (!fuse && !lower::gemmEpiloguesEnabled()) {
    Loader loader(module, options);
    return loader.run(entry);
  }
  // Fusion and the grouping of GEMM epilogue chains rewrite a copy: the
  // caller's module stays as it was.
  OwningOpRef<ModuleOp> fused = module.clone();
  for (auto func : fused->getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    if (!fuse)
      lower::groupGemmEpilogues(func);
    else if (failed(fuseElementwiseOps(func)))
      return failure();
  }
  Loader loader(*fused, options);
  return loader.run(entry);
}
