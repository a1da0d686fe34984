//===- OnnxOps.cpp - ONNX nodes to linalg/tensor/arith/math ---------------===//
//
// One converter per op family. Elementwise ops become linalg.generic with
// numpy broadcasting, where broadcast unit dims are collapsed away first so
// every indexing map is a projected permutation (what sharding rules and the
// runtime's generic evaluator expect). Each converter records the op a node
// strategy applies to (`main`) and how that op's operands map to the node's
// inputs.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace autoshard::onnx_import;
using utils::IteratorType;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

static tensor::ExtractSliceOp extractSlice(OpBuilder &b, Location loc,
                                           Value src, ArrayRef<int64_t> offsets,
                                           ArrayRef<int64_t> sizes,
                                           ArrayRef<int64_t> strides) {
  auto folds = [&](ArrayRef<int64_t> v) {
    SmallVector<OpFoldResult> r;
    for (int64_t x : v)
      r.push_back(b.getIndexAttr(x));
    return r;
  };
  return tensor::ExtractSliceOp::create(b, loc, src, folds(offsets),
                                        folds(sizes), folds(strides));
}

Type autoshard::onnx_import::getElemType(MLIRContext *ctx, ElemKind kind) {
  switch (kind) {
  case ElemKind::F32:
    return Float32Type::get(ctx);
  case ElemKind::F64:
    return Float64Type::get(ctx);
  case ElemKind::F16:
    return Float16Type::get(ctx);
  case ElemKind::BF16:
    return BFloat16Type::get(ctx);
  case ElemKind::I64:
    return IntegerType::get(ctx, 64);
  case ElemKind::I32:
    return IntegerType::get(ctx, 32);
  case ElemKind::Bool:
    return IntegerType::get(ctx, 1);
  }
  llvm_unreachable("unknown element kind");
}

std::optional<std::vector<int64_t>>
autoshard::onnx_import::broadcastShapes(ArrayRef<std::vector<int64_t>> shapes) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto &s : shapes) {
    size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &o = out[off + i];
      if (s[i] == o || s[i] == 1)
        continue;
      if (o != 1)
        return std::nullopt;
      o = s[i];
    }
  }
  return out;
}

InFlightDiagnostic NodeImporter::error() {
  return emitError(loc) << "node '" << nodeName << "' (op_type "
                        << node->op_type() << ", opset " << opset << "): ";
}

const onnx::AttributeProto *NodeImporter::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : node->attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeImporter::attrInt(StringRef name, int64_t dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->i() : dflt;
}

float NodeImporter::attrFloat(StringRef name, float dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->f() : dflt;
}

std::optional<std::vector<int64_t>>
NodeImporter::attrInts(StringRef name) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

bool NodeImporter::hasInput(int64_t i) const {
  return i < static_cast<int64_t>(present.size()) && present[i];
}

FailureOr<std::vector<int64_t>> NodeImporter::constInts(int64_t i,
                                                        StringRef what) {
  if (!hasInput(i) || !in(i).isConstant()) {
    InFlightDiagnostic d = error()
                           << what << " (input #" << i
                           << ") must be known at import time; autoshard "
                              "imports static shapes only";
    // A graph input: its value can be given at import time.
    if (hasInput(i) && isa<BlockArgument>(in(i).value))
      d << " (it is graph input '" << node->input(i)
        << "': give its value with --freeze " << node->input(i)
        << "=FILE.npy)";
    return failure();
  }
  const HostTensor &t = *in(i).constant;
  std::vector<int64_t> out;
  for (int64_t k = 0; k < t.numel(); ++k)
    out.push_back(t.getI(k));
  return out;
}

FailureOr<std::optional<std::vector<int64_t>>>
NodeImporter::axesArg(int64_t i) {
  // Before opset 13 (Squeeze, Unsqueeze, ReduceSum, Split) or 18 (the other
  // reductions) the axes are an attribute; then an input.
  if (std::optional<std::vector<int64_t>> a = attrInts("axes"))
    return std::optional<std::vector<int64_t>>(*a);
  if (!hasInput(i))
    return std::optional<std::vector<int64_t>>();
  FailureOr<std::vector<int64_t>> a = constInts(i, "the axes");
  if (failed(a))
    return failure();
  return std::optional<std::vector<int64_t>>(*a);
}

LogicalResult NodeImporter::normalizeAxis(int64_t &axis, int64_t rank) {
  int64_t orig = axis;
  if (axis < 0)
    axis += rank;
  // A scalar has no axis: callers index the shape with the result.
  if (axis < 0 || axis >= rank)
    return error() << "axis " << orig << " is out of range for rank " << rank;
  return success();
}

void NodeImporter::setOutput(int64_t i, Val v) {
  if (i < node->output_size() && !node->output(i).empty())
    values[node->output(i)] = std::move(v);
}

void NodeImporter::setOutput(int64_t i, Value v, ElemKind kind) {
  Val val;
  val.value = v;
  val.kind = kind;
  auto type = cast<RankedTensorType>(v.getType());
  val.shape.assign(type.getShape().begin(), type.getShape().end());
  setOutput(i, std::move(val));
}

void NodeImporter::setOutput(int64_t i, HostTensor t) {
  Val val;
  val.shape = t.shape;
  val.kind = t.kind;
  val.constant = std::make_shared<HostTensor>(std::move(t));
  setOutput(i, std::move(val));
}

RankedTensorType NodeImporter::tensorType(ArrayRef<int64_t> shape,
                                          ElemKind kind) {
  return RankedTensorType::get(shape, getElemType(ctx, kind));
}

Value NodeImporter::emptyTensor(ArrayRef<int64_t> shape, ElemKind kind) {
  return tensor::EmptyOp::create(b, loc, shape, getElemType(ctx, kind));
}

Value NodeImporter::scalarConstant(OpBuilder &bb, double v, ElemKind kind) {
  Type t = getElemType(ctx, kind);
  if (isFloatKind(kind))
    return arith::ConstantOp::create(bb, loc, bb.getFloatAttr(t, v));
  // Saturate: reductions start integer max/min at +-infinity.
  double lo = -9.2e18, hi = 9.2e18;
  int64_t ilo = std::numeric_limits<int64_t>::min(),
          ihi = std::numeric_limits<int64_t>::max();
  if (kind == ElemKind::I32)
    ilo = lo = std::numeric_limits<int32_t>::min(),
    ihi = hi = std::numeric_limits<int32_t>::max();
  int64_t iv = v <= lo ? ilo : v >= hi ? ihi : static_cast<int64_t>(v);
  return arith::ConstantOp::create(bb, loc, bb.getIntegerAttr(t, iv));
}

Value NodeImporter::zeroFilled(ArrayRef<int64_t> shape, ElemKind kind) {
  Value zero = scalarConstant(b, 0.0, kind);
  return linalg::FillOp::create(b, loc, ValueRange{zero},
                                ValueRange{emptyTensor(shape, kind)})
      .getResult(0);
}

Value NodeImporter::materialize(const Val &v) {
  if (v.value)
    return v.value;
  const HostTensor &t = *v.constant;
  auto it = materialized.find(&t);
  if (it != materialized.end())
    return it->second.second;
  RankedTensorType type = tensorType(t.shape, t.kind);
  DenseElementsAttr attr;
  bool splat = true;
  int64_t numel = t.numel();
  for (int64_t k = 1; k < numel && splat; ++k)
    splat = t.isFloat() ? t.f[k] == t.f[0] : t.i[k] == t.i[0];
  if (splat && numel > 0) {
    Attribute elem =
        t.isFloat()
            ? Attribute(b.getFloatAttr(type.getElementType(), t.f[0]))
            : Attribute(b.getIntegerAttr(type.getElementType(), t.i[0]));
    attr = DenseElementsAttr::get(type, elem);
  } else if (t.kind == ElemKind::F32) {
    std::vector<float> data(t.f.begin(), t.f.end());
    attr = DenseElementsAttr::get(type, ArrayRef<float>(data));
  } else if (t.isFloat()) {
    attr = floatElements(type, t.f);
  } else if (t.kind == ElemKind::I64) {
    attr = DenseElementsAttr::get(type, ArrayRef<int64_t>(t.i));
  } else if (t.kind == ElemKind::I32) {
    std::vector<int32_t> data(t.i.begin(), t.i.end());
    attr = DenseElementsAttr::get(type, ArrayRef<int32_t>(data));
  } else {
    std::vector<bool> data(t.i.begin(), t.i.end());
    SmallVector<bool> bits(data.begin(), data.end());
    attr = DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  }
  Value c = arith::ConstantOp::create(b, loc, attr);
  materialized[&t] = {v.constant, c};
  return c;
}

/// Collapses the `drop`ped unit dims of `v` into their neighbours.
Value NodeImporter::dropUnitDims(Value v, ArrayRef<int64_t> shape,
                                 ArrayRef<bool> drop) {
  if (llvm::none_of(drop, [](bool d) { return d; }))
    return v;
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> newShape;
  ReassociationIndices pending;
  for (int64_t d = 0, e = shape.size(); d < e; ++d) {
    pending.push_back(d);
    if (!drop[d]) {
      groups.push_back(pending);
      newShape.push_back(shape[d]);
      pending.clear();
    }
  }
  if (!pending.empty() && !groups.empty())
    groups.back().append(pending.begin(), pending.end());
  auto type = cast<RankedTensorType>(v.getType());
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(newShape, type.getElementType()), v,
      groups);
}

/// Static reshape: collapse each minimal group of input dims whose product
/// matches a group of output dims, then expand it (one op when the reshape
/// is a pure collapse or expansion).
Value NodeImporter::reshapeTo(Value v, ArrayRef<int64_t> from,
                              ArrayRef<int64_t> to) {
  if (from == to)
    return v;
  Type elem = cast<RankedTensorType>(v.getType()).getElementType();
  auto resultType = RankedTensorType::get(to, elem);
  SmallVector<ReassociationIndices> inGroups, outGroups;
  size_t i = 0, j = 0;
  while (i < from.size() || j < to.size()) {
    ReassociationIndices gi, gj;
    int64_t pi = 1, pj = 1;
    if (i < from.size())
      pi *= from[i], gi.push_back(i++);
    if (j < to.size())
      pj *= to[j], gj.push_back(j++);
    while (pi != pj) {
      if (pi < pj && i < from.size())
        pi *= from[i], gi.push_back(i++);
      else if (pj < pi && j < to.size())
        pj *= to[j], gj.push_back(j++);
      else
        break;
    }
    // Unit dims that follow a finished group belong to it.
    while (i < from.size() && from[i] == 1 && (j >= to.size() || to[j] != 1))
      gi.push_back(i++);
    while (j < to.size() && to[j] == 1 && (i >= from.size() || from[i] != 1))
      gj.push_back(j++);
    if (gi.empty() && !inGroups.empty())
      ; // a trailing unit output dim: attach below
    if (gi.empty() || gj.empty()) {
      if (!inGroups.empty()) {
        inGroups.back().append(gi.begin(), gi.end());
        outGroups.back().append(gj.begin(), gj.end());
        continue;
      }
    }
    inGroups.push_back(gi);
    outGroups.push_back(gj);
  }
  // Drop empty groups produced by rank-0 tensors.
  bool rank0 = from.empty() || to.empty();
  bool pureExpand =
      !rank0 && llvm::all_of(inGroups, [](auto &g) { return g.size() == 1; });
  bool pureCollapse =
      !rank0 && llvm::all_of(outGroups, [](auto &g) { return g.size() == 1; });
  if (rank0) {
    // Through a rank-0 tensor: collapse everything, then expand.
    Value scalar = v;
    if (!from.empty())
      scalar = tensor::CollapseShapeOp::create(
          b, loc, RankedTensorType::get({}, elem), v,
          ArrayRef<ReassociationIndices>{});
    if (to.empty())
      return scalar;
    return tensor::ExpandShapeOp::create(b, loc, resultType, scalar,
                                         ArrayRef<ReassociationIndices>{});
  }
  if (pureExpand)
    return tensor::ExpandShapeOp::create(b, loc, resultType, v, outGroups);
  if (pureCollapse)
    return tensor::CollapseShapeOp::create(b, loc, resultType, v, inGroups);
  SmallVector<int64_t> mid;
  SmallVector<ReassociationIndices> midIn, midOut;
  for (auto [k, g] : llvm::enumerate(inGroups)) {
    int64_t p = 1;
    for (int64_t d : g)
      p *= from[d];
    mid.push_back(p);
  }
  Value collapsed = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(mid, elem), v, inGroups);
  return tensor::ExpandShapeOp::create(b, loc, resultType, collapsed,
                                       outGroups);
}

GenericInput NodeImporter::broadcastInput(const Val &v, int64_t inputIndex,
                                          ArrayRef<int64_t> outShape,
                                          int64_t numLoops,
                                          int64_t firstLoopDim) {
  int64_t off = static_cast<int64_t>(outShape.size()) - v.rank();
  SmallVector<bool> drop;
  SmallVector<AffineExpr> exprs;
  OperandSource src{inputIndex, {}};
  for (int64_t d = 0; d < v.rank(); ++d) {
    bool broadcast = v.shape[d] == 1 && outShape[off + d] != 1;
    drop.push_back(broadcast);
    if (!broadcast) {
      exprs.push_back(b.getAffineDimExpr(firstLoopDim + off + d));
      src.dims.push_back(d);
    }
  }
  Value value = dropUnitDims(materialize(v), v.shape, drop);
  return {value, AffineMap::get(numLoops, 0, exprs, ctx), src};
}

Operation *NodeImporter::buildGeneric(ArrayRef<GenericInput> ins,
                                      ArrayRef<int64_t> outShape,
                                      ElemKind outKind,
                                      ArrayRef<IteratorType> iters, Value init,
                                      AffineMap outMap, const BodyFn &body) {
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (const GenericInput &g : ins) {
    operands.push_back(g.value);
    maps.push_back(g.map);
  }
  maps.push_back(outMap);
  if (!init)
    init = emptyTensor(outShape, outKind);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, operands, ValueRange{init}, maps,
      iters, [&](OpBuilder &bb, Location l, ValueRange args) {
        Value r = body(bb, l, SmallVector<Value>(args.begin(), args.end()));
        linalg::YieldOp::create(bb, l, r);
      });
  return op;
}

FailureOr<Value> NodeImporter::elementwise(ArrayRef<int64_t> inputIdx,
                                           ElemKind outKind,
                                           const BodyFn &body) {
  std::vector<std::vector<int64_t>> shapes;
  for (int64_t i : inputIdx)
    shapes.push_back(in(i).shape);
  std::optional<std::vector<int64_t>> outShape = broadcastShapes(shapes);
  if (!outShape) {
    InFlightDiagnostic d = error() << "input shapes do not broadcast:";
    for (const auto &s : shapes) {
      d << " [";
      llvm::interleaveComma(s, d);
      d << "]";
    }
    return failure();
  }
  int64_t rank = outShape->size();
  // Scalar constants go into the body; everything else is an operand.
  SmallVector<GenericInput> operands;
  SmallVector<int64_t> slot; // operand index per input, or -1 for a scalar
  for (int64_t i : inputIdx) {
    if (in(i).isScalarConstant()) {
      slot.push_back(-1);
      continue;
    }
    slot.push_back(operands.size());
    operands.push_back(broadcastInput(in(i), i, *outShape, rank));
  }
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  Operation *op =
      buildGeneric(operands, *outShape, outKind, iters, Value(),
                   b.getMultiDimIdentityMap(rank),
                   [&](OpBuilder &bb, Location l, ArrayRef<Value> args) {
                     SmallVector<Value> scalars;
                     for (auto [k, i] : llvm::enumerate(inputIdx)) {
                       if (slot[k] >= 0) {
                         scalars.push_back(args[slot[k]]);
                         continue;
                       }
                       const HostTensor &c = *in(i).constant;
                       scalars.push_back(scalarConstant(bb, c.getF(0), c.kind));
                     }
                     return body(bb, l, scalars);
                   });
  main.op = op;
  main.operands.clear();
  for (const GenericInput &g : operands)
    main.operands.push_back(g.source);
  SmallVector<int64_t> ident(rank);
  std::iota(ident.begin(), ident.end(), 0);
  main.resultDims = ident;
  return op->getResult(0);
}

Value NodeImporter::reduce(Value v, ArrayRef<int64_t> shape,
                           ArrayRef<int64_t> axes, ElemKind kind,
                           const BodyFn &combine, double initValue) {
  int64_t rank = shape.size();
  SmallVector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<IteratorType> iters;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iters.push_back(reduced ? IteratorType::reduction : IteratorType::parallel);
    if (!reduced) {
      outShape.push_back(shape[d]);
      outExprs.push_back(b.getAffineDimExpr(d));
    }
  }
  Value init = linalg::FillOp::create(
                   b, loc, ValueRange{scalarConstant(b, initValue, kind)},
                   ValueRange{emptyTensor(outShape, kind)})
                   .getResult(0);
  GenericInput input{v, b.getMultiDimIdentityMap(rank), std::nullopt};
  return buildGeneric({input}, outShape, kind, iters, init,
                      AffineMap::get(rank, 0, outExprs, ctx), combine)
      ->getResult(0);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

static Value buildBinary(OpBuilder &b, Location loc, StringRef op, Value x,
                         Value y) {
  bool isFloat = isa<FloatType>(x.getType());
  if (op == "Add")
    return isFloat ? Value(arith::AddFOp::create(b, loc, x, y))
                   : Value(arith::AddIOp::create(b, loc, x, y));
  if (op == "Sub")
    return isFloat ? Value(arith::SubFOp::create(b, loc, x, y))
                   : Value(arith::SubIOp::create(b, loc, x, y));
  if (op == "Mul")
    return isFloat ? Value(arith::MulFOp::create(b, loc, x, y))
                   : Value(arith::MulIOp::create(b, loc, x, y));
  if (op == "Div")
    return isFloat ? Value(arith::DivFOp::create(b, loc, x, y))
                   : Value(arith::DivSIOp::create(b, loc, x, y));
  if (op == "Equal")
    return isFloat
               ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             x, y))
               : Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             x, y));
  if (op == "Less")
    return isFloat
               ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                             x, y))
               : Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                             x, y));
  if (op == "Greater")
    return isFloat
               ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                             x, y))
               : Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                             x, y));
  llvm_unreachable("not a binary op");
}

LogicalResult NodeImporter::convertElementwise(StringRef opType) {
  ElemKind kind = in(0).kind;
  auto needFloat = [&]() -> LogicalResult {
    if (!isFloatKind(kind))
      return error() << "expects a float input at run time";
    return success();
  };
  FailureOr<Value> r = failure();
  if (opType == "Add" || opType == "Sub" || opType == "Mul" ||
      opType == "Div") {
    r = elementwise({0, 1}, kind,
                    [&](OpBuilder &bb, Location l, ArrayRef<Value> a) {
                      return buildBinary(bb, l, opType, a[0], a[1]);
                    });
  } else if (opType == "Equal" || opType == "Less" || opType == "Greater") {
    r = elementwise({0, 1}, ElemKind::Bool,
                    [&](OpBuilder &bb, Location l, ArrayRef<Value> a) {
                      return buildBinary(bb, l, opType, a[0], a[1]);
                    });
  } else if (opType == "Pow") {
    if (failed(needFloat()))
      return failure();
    std::optional<double> exponent;
    if (in(1).isScalarConstant())
      exponent = in(1).constant->getF(0);
    // x^2 and x^0.5 are what normalisations export; keep them exact.
    r = elementwise({0, 1}, kind,
                    [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
                      if (exponent && *exponent == 2.0)
                        return arith::MulFOp::create(bb, l, a[0], a[0]);
                      if (exponent && *exponent == 1.0)
                        return a[0];
                      if (exponent && *exponent == 0.5)
                        return math::SqrtOp::create(bb, l, a[0]);
                      Value e = a[1];
                      if (!isa<FloatType>(e.getType()))
                        e = arith::SIToFPOp::create(bb, l, a[0].getType(), e);
                      return math::PowFOp::create(bb, l, a[0], e);
                    });
  } else if (opType == "Where") {
    r = elementwise({0, 1, 2}, in(1).kind,
                    [&](OpBuilder &bb, Location l, ArrayRef<Value> a) {
                      return Value(
                          arith::SelectOp::create(bb, l, a[0], a[1], a[2]));
                    });
  } else {
    // Unary.
    if (opType != "Relu" && opType != "Neg" && opType != "Abs" &&
        failed(needFloat()))
      return failure();
    r = elementwise(
        {0}, kind, [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
          Value x = a[0];
          Type t = x.getType();
          bool isFloat = isa<FloatType>(t);
          if (opType == "Sqrt")
            return math::SqrtOp::create(bb, l, x);
          if (opType == "Erf")
            return math::ErfOp::create(bb, l, x);
          if (opType == "Tanh")
            return math::TanhOp::create(bb, l, x);
          if (opType == "Exp")
            return math::ExpOp::create(bb, l, x);
          if (opType == "Log")
            return math::LogOp::create(bb, l, x);
          if (opType == "Reciprocal") {
            Value one =
                arith::ConstantOp::create(bb, l, bb.getFloatAttr(t, 1.0));
            return arith::DivFOp::create(bb, l, one, x);
          }
          if (opType == "Sigmoid") {
            // 1 / (1 + exp(-x)): math has no sigmoid.
            Value one =
                arith::ConstantOp::create(bb, l, bb.getFloatAttr(t, 1.0));
            Value e =
                math::ExpOp::create(bb, l, arith::NegFOp::create(bb, l, x));
            return arith::DivFOp::create(bb, l, one,
                                         arith::AddFOp::create(bb, l, one, e));
          }
          if (opType == "Relu") {
            if (isFloat) {
              Value zero =
                  arith::ConstantOp::create(bb, l, bb.getFloatAttr(t, 0.0));
              return arith::MaximumFOp::create(bb, l, x, zero);
            }
            Value zero =
                arith::ConstantOp::create(bb, l, bb.getIntegerAttr(t, 0));
            return arith::MaxSIOp::create(bb, l, x, zero);
          }
          if (opType == "Neg") {
            if (isFloat)
              return arith::NegFOp::create(bb, l, x);
            Value zero =
                arith::ConstantOp::create(bb, l, bb.getIntegerAttr(t, 0));
            return arith::SubIOp::create(bb, l, zero, x);
          }
          if (opType == "Abs")
            return isFloat ? Value(math::AbsFOp::create(bb, l, x))
                           : Value(math::AbsIOp::create(bb, l, x));
          llvm_unreachable("unhandled unary op");
        });
  }
  if (failed(r))
    return failure();
  ElemKind outKind =
      cast<RankedTensorType>(r->getType()).getElementType().isInteger(1)
          ? ElemKind::Bool
          : (opType == "Where" ? in(1).kind : kind);
  setOutput(0, *r, outKind);
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// Element types of MatMul/Gemm: float32, and float16/bfloat16 (which the
/// runtime multiplies in f32 and rounds once).
static bool isGemmKind(ElemKind k) {
  return k == ElemKind::F32 || k == ElemKind::F16 || k == ElemKind::BF16;
}

LogicalResult NodeImporter::convertMatMul() {
  Val a = in(0), bv = in(1);
  ElemKind kind = a.kind;
  if (!isGemmKind(kind) || bv.kind != kind)
    return error() << "expects float32, float16 or bfloat16 inputs, all of "
                      "one type";
  if (a.rank() == 0 || bv.rank() == 0)
    return error() << "expects inputs of rank >= 1";
  // 1-D operands: numpy promotes them to a matrix and drops the unit dim.
  bool aVec = a.rank() == 1, bVec = bv.rank() == 1;
  if (aVec) {
    a.value = reshapeTo(materialize(a), a.shape, {1, a.shape[0]});
    a.constant = nullptr;
    a.shape = {1, a.shape[0]};
  }
  if (bVec) {
    bv.value = reshapeTo(materialize(bv), bv.shape, {bv.shape[0], 1});
    bv.constant = nullptr;
    bv.shape = {bv.shape[0], 1};
  }
  int64_t m = a.shape[a.rank() - 2], k = a.shape[a.rank() - 1];
  int64_t k2 = bv.shape[bv.rank() - 2], n = bv.shape[bv.rank() - 1];
  if (k != k2)
    return error() << "contraction dims differ (" << k << " vs " << k2 << ")";
  std::vector<int64_t> aBatch(a.shape.begin(), a.shape.end() - 2);
  std::vector<int64_t> bBatch(bv.shape.begin(), bv.shape.end() - 2);
  std::optional<std::vector<int64_t>> batch = broadcastShapes({aBatch, bBatch});
  if (!batch)
    return error() << "batch dims do not broadcast";
  std::vector<int64_t> outShape = *batch;
  outShape.push_back(m);
  outShape.push_back(n);
  int64_t nb = batch->size();
  auto identity = [](int64_t r) {
    SmallVector<int64_t> v(r);
    std::iota(v.begin(), v.end(), 0);
    return v;
  };
  // float16/bfloat16 operands accumulate into f32 (the runtime's GEMM, as
  // cuBLAS's with FP32 compute), rounded to their type once afterwards.
  ElemKind acc = ElemKind::F32;
  Value result;
  if (a.rank() == 2 && bv.rank() == 2) {
    auto op = linalg::MatmulOp::create(
        b, loc, ValueRange{materialize(a), materialize(bv)},
        ValueRange{zeroFilled(outShape, acc)});
    main.op = op;
    main.operands = {OperandSource{0, identity(2)},
                     OperandSource{1, identity(2)}};
    result = op.getResult(0);
  } else if (a.rank() == 3 && bv.rank() == 3 && aBatch == bBatch) {
    auto op = linalg::BatchMatmulOp::create(
        b, loc, ValueRange{materialize(a), materialize(bv)},
        ValueRange{zeroFilled(outShape, acc)});
    main.op = op;
    main.operands = {OperandSource{0, identity(3)},
                     OperandSource{1, identity(3)}};
    result = op.getResult(0);
  } else {
    // A contraction with broadcast batch dims: loops (batch..., m, n, k);
    // narrow operands are extended in the body (the mixed GEMM's form).
    int64_t loops = nb + 3;
    auto operand = [&](const Val &v, int64_t idx, bool isLhs) {
      std::vector<int64_t> vb(v.shape.begin(), v.shape.end() - 2);
      Val batchOnly = v;
      batchOnly.shape = vb;
      int64_t off = nb - static_cast<int64_t>(vb.size());
      SmallVector<bool> drop;
      SmallVector<AffineExpr> exprs;
      OperandSource src{idx, {}};
      for (int64_t d = 0, e = vb.size(); d < e; ++d) {
        bool bc = vb[d] == 1 && (*batch)[off + d] != 1;
        drop.push_back(bc);
        if (!bc) {
          exprs.push_back(b.getAffineDimExpr(off + d));
          src.dims.push_back(d);
        }
      }
      drop.push_back(false);
      drop.push_back(false);
      int64_t r = v.rank();
      src.dims.push_back(r - 2);
      src.dims.push_back(r - 1);
      exprs.push_back(b.getAffineDimExpr(isLhs ? nb : nb + 2));
      exprs.push_back(b.getAffineDimExpr(isLhs ? nb + 2 : nb + 1));
      Value value = dropUnitDims(materialize(v), v.shape, drop);
      return GenericInput{value, AffineMap::get(loops, 0, exprs, ctx), src};
    };
    SmallVector<GenericInput> ops = {operand(a, 0, true),
                                     operand(bv, 1, false)};
    SmallVector<IteratorType> iters(nb + 2, IteratorType::parallel);
    iters.push_back(IteratorType::reduction);
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < nb + 2; ++d)
      outExprs.push_back(b.getAffineDimExpr(d));
    Operation *op = buildGeneric(
        ops, outShape, acc, iters, zeroFilled(outShape, acc),
        AffineMap::get(loops, 0, outExprs, ctx),
        [](OpBuilder &bb, Location l, ArrayRef<Value> x) -> Value {
          Type t = x[2].getType();
          auto wide = [&](Value v) -> Value {
            return v.getType() == t ? v : arith::ExtFOp::create(bb, l, t, v);
          };
          Value p = arith::MulFOp::create(bb, l, wide(x[0]), wide(x[1]));
          return arith::AddFOp::create(bb, l, x[2], p);
        });
    main.op = op;
    main.operands = {ops[0].source, ops[1].source};
    result = op->getResult(0);
  }
  if (acc != kind) {
    AffineMap id = b.getMultiDimIdentityMap(outShape.size());
    SmallVector<IteratorType> par(outShape.size(), IteratorType::parallel);
    Type narrow = getElemType(ctx, kind);
    result = buildGeneric({GenericInput{result, id, std::nullopt}}, outShape,
                          kind, par, Value(), id,
                          [&](OpBuilder &bb, Location l,
                              ArrayRef<Value> x) -> Value {
                            return arith::TruncFOp::create(bb, l, narrow, x[0]);
                          })
                 ->getResult(0);
  }
  main.resultDims = identity(outShape.size());
  std::vector<int64_t> finalShape = outShape;
  if (aVec)
    finalShape.erase(finalShape.end() - 2);
  if (bVec)
    finalShape.erase(finalShape.end() - 1);
  if (aVec || bVec) {
    result = reshapeTo(result, outShape, finalShape);
    main.resultDims.reset();
  }
  setOutput(0, result, kind);
  return success();
}

LogicalResult NodeImporter::convertGemm() {
  const Val &a = in(0), &bv = in(1);
  ElemKind kind = a.kind;
  if (!isGemmKind(kind) || bv.kind != kind ||
      (hasInput(2) && in(2).kind != kind))
    return error() << "expects float32, float16 or bfloat16 inputs, all of "
                      "one type";
  if (a.rank() != 2 || bv.rank() != 2)
    return error() << "expects 2-D A and B";
  bool transA = attrInt("transA", 0), transB = attrInt("transB", 0);
  float alpha = attrFloat("alpha", 1.0f), beta = attrFloat("beta", 1.0f);
  auto transposed = [&](const Val &v, bool t) -> Value {
    Value x = materialize(v);
    if (!t)
      return x;
    SmallVector<int64_t> shape = {v.shape[1], v.shape[0]};
    return linalg::TransposeOp::create(b, loc, x,
                                       emptyTensor(shape, kind),
                                       ArrayRef<int64_t>{1, 0})
        .getResult()[0];
  };
  Value lhs = transposed(a, transA), rhs = transposed(bv, transB);
  int64_t m = transA ? a.shape[1] : a.shape[0];
  int64_t k = transA ? a.shape[0] : a.shape[1];
  int64_t k2 = transB ? bv.shape[1] : bv.shape[0];
  int64_t n = transB ? bv.shape[0] : bv.shape[1];
  if (k != k2)
    return error() << "contraction dims differ (" << k << " vs " << k2 << ")";
  std::vector<int64_t> outShape = {m, n};
  // As MatMul: float16/bfloat16 A and B accumulate into f32 (the runtime's
  // mixed GEMM), and alpha, beta and C apply in f32 before one rounding.
  auto mm = linalg::MatmulOp::create(
      b, loc, ValueRange{lhs, rhs},
      ValueRange{zeroFilled(outShape, ElemKind::F32)});
  MainOp mmInfo;
  mmInfo.op = mm;
  mmInfo.operands = {OperandSource{0, transA ? SmallVector<int64_t>{1, 0}
                                             : SmallVector<int64_t>{0, 1}},
                     OperandSource{1, transB ? SmallVector<int64_t>{1, 0}
                                             : SmallVector<int64_t>{0, 1}}};
  mmInfo.resultDims = SmallVector<int64_t>{0, 1};
  Value y = mm.getResult(0);
  bool haveC = hasInput(2);
  if (haveC || alpha != 1.0f || kind != ElemKind::F32) {
    // alpha * (A B) + beta * C as one broadcasting generic.
    Val yv;
    yv.value = y;
    yv.shape = outShape;
    inputs.push_back(yv);
    present.push_back(true);
    int64_t yIdx = inputs.size() - 1;
    SmallVector<int64_t> idx = {yIdx};
    if (haveC)
      idx.push_back(2);
    FailureOr<Value> r = elementwise(
        idx, kind,
        [&](OpBuilder &bb, Location l, ArrayRef<Value> x) -> Value {
          Type t = x[0].getType();
          Value acc = x[0];
          if (alpha != 1.0f)
            acc = arith::MulFOp::create(
                bb, l, acc,
                arith::ConstantOp::create(bb, l, bb.getFloatAttr(t, alpha)));
          if (x.size() > 1) {
            Value c = x[1];
            if (c.getType() != t)
              c = arith::ExtFOp::create(bb, l, t, c);
            if (beta != 1.0f)
              c = arith::MulFOp::create(
                  bb, l, c,
                  arith::ConstantOp::create(bb, l, bb.getFloatAttr(t, beta)));
            acc = arith::AddFOp::create(bb, l, acc, c);
          }
          if (kind == ElemKind::F32)
            return acc;
          return arith::TruncFOp::create(bb, l, getElemType(ctx, kind), acc);
        });
    if (failed(r))
      return failure();
    if (cast<RankedTensorType>(r->getType()).getShape() != ArrayRef(outShape))
      return error() << "C does not broadcast to the result shape";
    y = *r;
  }
  main = mmInfo;
  setOutput(0, y, kind);
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// Constant Gather indices with the negative ones (from the end) made
/// non-negative, as run-time ids must be. A host copy of the indices counts
/// against the fold budget (a long index list copied once a node held 8
/// bytes an element uncounted); past it the program adds the dim.
FailureOr<Value> NodeImporter::nonNegativeIndices(const Val &idx,
                                                  int64_t dim) {
  bool negative = false;
  for (int64_t v : idx.constant->i) {
    if (v < -dim || v >= dim)
      return error() << "index " << v << " is out of range for dim " << dim,
             failure();
    negative |= v < 0;
  }
  if (!negative)
    return materialize(idx);
  if (reserveFold(idx.shape)) {
    HostTensor t = *idx.constant;
    for (int64_t &v : t.i)
      if (v < 0)
        v += dim;
    Val fixed = idx;
    fixed.constant = std::make_shared<HostTensor>(std::move(t));
    return materialize(fixed);
  }
  int64_t rank = idx.rank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<IteratorType> par(rank, IteratorType::parallel);
  return buildGeneric({GenericInput{materialize(idx), id, std::nullopt}},
                      idx.shape, idx.kind, par, Value(), id,
                      [&](OpBuilder &bb, Location l, ArrayRef<Value> v) {
                        Value zero = scalarConstant(bb, 0.0, idx.kind);
                        Value n = scalarConstant(bb, double(dim), idx.kind);
                        Value neg = arith::CmpIOp::create(
                            bb, l, arith::CmpIPredicate::slt, v[0], zero);
                        Value wrapped = arith::AddIOp::create(bb, l, v[0], n);
                        return arith::SelectOp::create(bb, l, neg, wrapped,
                                                       v[0])
                            .getResult();
                      })
      ->getResult(0);
}

LogicalResult NodeImporter::convertGather() {
  const Val &data = in(0), &idx = in(1);
  int64_t axis = attrInt("axis", 0);
  if (failed(normalizeAxis(axis, data.rank())))
    return failure();
  if (isFloatKind(idx.kind) || idx.kind == ElemKind::Bool)
    return error() << "expects integer indices";
  std::vector<int64_t> outShape(data.shape.begin(), data.shape.begin() + axis);
  outShape.insert(outShape.end(), idx.shape.begin(), idx.shape.end());
  outShape.insert(outShape.end(), data.shape.begin() + axis + 1,
                  data.shape.end());
  // A constant scalar index (x[k]) is a slice.
  if (idx.isScalarConstant() && idx.rank() == 0) {
    int64_t k = idx.constant->getI(0);
    if (k < 0)
      k += data.shape[axis];
    if (k < 0 || k >= data.shape[axis])
      return error() << "index " << idx.constant->getI(0)
                     << " is out of range for dim " << data.shape[axis];
    SmallVector<int64_t> offsets(data.rank(), 0),
        sizes(data.shape.begin(), data.shape.end()), strides(data.rank(), 1);
    offsets[axis] = k;
    sizes[axis] = 1;
    Value slice =
        extractSlice(b, loc, materialize(data), offsets, sizes, strides);
    setOutput(0, reshapeTo(slice, sizes, outShape), data.kind);
    return success();
  }
  FailureOr<Value> indices = idx.isConstant()
                                ? nonNegativeIndices(idx, data.shape[axis])
                                : materialize(idx);
  if (failed(indices))
    return failure();
  SmallVector<int64_t> idxShape(idx.shape.begin(), idx.shape.end());
  idxShape.push_back(1);
  Value expanded = reshapeTo(*indices, idx.shape, idxShape);
  Value asIndex = arith::IndexCastOp::create(
      b, loc, RankedTensorType::get(idxShape, b.getIndexType()), expanded);
  // tensor.gather puts the index dims first; ONNX puts them at `axis`.
  SmallVector<int64_t> gatherShape(idx.shape.begin(), idx.shape.end());
  for (int64_t d = 0; d < data.rank(); ++d)
    if (d != axis)
      gatherShape.push_back(data.shape[d]);
  auto gather = tensor::GatherOp::create(
      b, loc, tensorType(gatherShape, data.kind), materialize(data), asIndex,
      ArrayRef<int64_t>{axis}, /*unique=*/false);
  main.op = gather;
  SmallVector<int64_t> dataDims(data.rank());
  std::iota(dataDims.begin(), dataDims.end(), 0);
  SmallVector<int64_t> idxDims(idx.rank());
  std::iota(idxDims.begin(), idxDims.end(), 0);
  idxDims.push_back(-1);
  main.operands = {OperandSource{0, dataDims}, OperandSource{1, idxDims}};
  Value result = gather.getResult();
  if (axis == 0) {
    SmallVector<int64_t> rd(outShape.size());
    std::iota(rd.begin(), rd.end(), 0);
    main.resultDims = rd;
  } else {
    // gather dims (q idx dims, data[:axis], data[axis+1:]) -> ONNX order.
    int64_t q = idx.rank();
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < axis; ++d)
      perm.push_back(q + d);
    for (int64_t d = 0; d < q; ++d)
      perm.push_back(d);
    for (int64_t d = axis + 1; d < data.rank(); ++d)
      perm.push_back(q + d - 1);
    result = linalg::TransposeOp::create(b, loc, result,
                                         emptyTensor(outShape, data.kind), perm)
                 .getResult()[0];
    main.resultDims.reset();
  }
  setOutput(0, result, data.kind);
  return success();
}

LogicalResult NodeImporter::convertReshapeLike(StringRef opType) {
  const Val &x = in(0);
  std::vector<int64_t> outShape;
  if (opType == "Reshape") {
    FailureOr<std::vector<int64_t>> shape = constInts(1, "the target shape");
    if (failed(shape))
      return failure();
    bool allowZero = attrInt("allowzero", 0);
    int64_t inferred = -1, known = 1;
    for (auto [i, d] : llvm::enumerate(*shape)) {
      if (d == 0 && !allowZero) {
        if (i >= x.shape.size())
          return error() << "shape entry 0 at " << i << " has no input dim";
        d = x.shape[i];
      }
      if (d == -1) {
        if (inferred >= 0)
          return error() << "the target shape has more than one -1";
        inferred = i;
        continue;
      }
      if (d < 0)
        return error() << "invalid target dim " << d;
      known *= d;
    }
    int64_t numel = 1;
    for (int64_t d : x.shape)
      numel *= d;
    if (inferred >= 0) {
      if (known == 0 || numel % known)
        return error() << "cannot infer the -1 dim";
      (*shape)[inferred] = numel / known;
      known = numel;
    }
    if (known != numel)
      return error() << "cannot reshape " << numel << " elements into "
                     << known;
    outShape = *shape;
  } else if (opType == "Flatten") {
    int64_t axis = attrInt("axis", 1);
    if (axis < 0)
      axis += x.rank();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < x.rank(); ++d)
      (d < axis ? outer : inner) *= x.shape[d];
    outShape = {outer, inner};
  } else if (opType == "Squeeze") {
    std::vector<int64_t> axes;
    FailureOr<std::optional<std::vector<int64_t>>> a = axesArg(1);
    if (failed(a))
      return failure();
    if (*a) {
      axes = **a;
    } else {
      for (int64_t d = 0; d < x.rank(); ++d)
        if (x.shape[d] == 1)
          axes.push_back(d);
    }
    for (int64_t &a : axes) {
      if (failed(normalizeAxis(a, x.rank())))
        return failure();
      if (x.shape[a] != 1)
        return error() << "cannot squeeze dim " << a << " of size "
                       << x.shape[a];
    }
    for (int64_t d = 0; d < x.rank(); ++d)
      if (!llvm::is_contained(axes, d))
        outShape.push_back(x.shape[d]);
  } else { // Unsqueeze
    FailureOr<std::optional<std::vector<int64_t>>> axesOr = axesArg(1);
    if (failed(axesOr))
      return failure();
    if (!*axesOr)
      return error() << "has no axes";
    std::vector<int64_t> *axes = &**axesOr;
    int64_t outRank = x.rank() + axes->size();
    std::vector<bool> isNew(outRank, false);
    for (int64_t a : *axes) {
      if (failed(normalizeAxis(a, outRank)))
        return failure();
      isNew[a] = true;
    }
    for (int64_t d = 0, k = 0; d < outRank; ++d)
      outShape.push_back(isNew[d] ? 1 : x.shape[k++]);
  }
  // A host copy counts against the fold budget: a chain of Reshapes of one
  // large constant would otherwise hold a copy a node.
  if (x.isConstant() && reserveFold(outShape)) {
    HostTensor t = *x.constant;
    t.shape = outShape;
    setOutput(0, std::move(t));
    return success();
  }
  setOutput(0, reshapeTo(materialize(x), x.shape, outShape), x.kind);
  return success();
}

LogicalResult NodeImporter::convertTranspose() {
  const Val &x = in(0);
  std::vector<int64_t> perm;
  if (std::optional<std::vector<int64_t>> p = attrInts("perm"))
    perm = *p;
  else
    for (int64_t d = x.rank() - 1; d >= 0; --d)
      perm.push_back(d);
  if (static_cast<int64_t>(perm.size()) != x.rank())
    return error() << "perm has " << perm.size() << " entries for rank "
                   << x.rank();
  std::vector<int64_t> outShape;
  for (int64_t p : perm) {
    if (p < 0 || p >= x.rank())
      return error() << "perm entry " << p << " is out of range";
    outShape.push_back(x.shape[p]);
  }
  auto op = linalg::TransposeOp::create(b, loc, materialize(x),
                                        emptyTensor(outShape, x.kind), perm);
  main.op = op;
  SmallVector<int64_t> ident(x.rank());
  std::iota(ident.begin(), ident.end(), 0);
  main.operands = {OperandSource{0, ident}};
  main.resultDims = ident;
  setOutput(0, op.getResult()[0], x.kind);
  return success();
}

LogicalResult NodeImporter::convertSlice() {
  const Val &x = in(0);
  FailureOr<std::vector<int64_t>> starts = constInts(1, "starts");
  FailureOr<std::vector<int64_t>> ends = constInts(2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  std::vector<int64_t> axes, steps(starts->size(), 1);
  if (hasInput(3)) {
    FailureOr<std::vector<int64_t>> a = constInts(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  if (hasInput(4)) {
    FailureOr<std::vector<int64_t>> s = constInts(4, "steps");
    if (failed(s))
      return failure();
    steps = *s;
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return error() << "starts, ends, axes and steps differ in length";
  SmallVector<int64_t> offsets(x.rank(), 0),
      sizes(x.shape.begin(), x.shape.end()), strides(x.rank(), 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i];
    if (failed(normalizeAxis(axis, x.rank())))
      return failure();
    int64_t dim = x.shape[axis], step = steps[i];
    if (step <= 0)
      return error() << "only positive steps are supported (got " << step
                     << ")";
    int64_t s = (*starts)[i], e = (*ends)[i];
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    s = std::clamp<int64_t>(s, 0, dim);
    e = std::clamp<int64_t>(e, 0, dim);
    offsets[axis] = s;
    sizes[axis] = e > s ? (e - s + step - 1) / step : 0;
    strides[axis] = step;
    // An empty slice (e.g. a start past the end, clamped to it) would be a
    // zero-size tensor, which the pipeline does not support.
    if (sizes[axis] == 0 && !x.isConstant())
      return error() << "slices nothing of dim " << axis << " (size " << dim
                     << "); zero-size tensors are not supported";
  }
  if (x.isConstant() && reserveFold(sizes)) {
    setOutput(0, sliceHost(*x.constant, offsets, sizes, strides));
    return success();
  }
  Value r = extractSlice(b, loc, materialize(x), offsets, sizes, strides);
  setOutput(0, r, x.kind);
  return success();
}

LogicalResult NodeImporter::convertConcat() {
  int64_t axis = attrInt("axis", 0);
  if (failed(normalizeAxis(axis, in(0).rank())))
    return failure();
  SmallVector<Value> vals;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!hasInput(i))
      continue;
    if (in(i).rank() != in(0).rank())
      return error() << "inputs differ in rank";
    vals.push_back(materialize(in(i)));
  }
  if (vals.size() == 1) {
    setOutput(0, vals[0], in(0).kind);
    return success();
  }
  Value r = tensor::ConcatOp::create(b, loc, axis, vals);
  setOutput(0, r, in(0).kind);
  return success();
}

LogicalResult NodeImporter::convertSplit() {
  const Val &x = in(0);
  int64_t axis = attrInt("axis", 0);
  if (failed(normalizeAxis(axis, x.rank())))
    return failure();
  int64_t numOut = node->output_size();
  std::vector<int64_t> sizes;
  if (hasInput(1)) {
    FailureOr<std::vector<int64_t>> s = constInts(1, "the split sizes");
    if (failed(s))
      return failure();
    sizes = *s;
  } else if (std::optional<std::vector<int64_t>> s = attrInts("split")) {
    sizes = *s; // opset < 13 spelling, accepted for robustness
  } else {
    if (x.shape[axis] % numOut)
      return error() << "dim " << x.shape[axis]
                     << " does not split evenly into " << numOut << " outputs";
    sizes.assign(numOut, x.shape[axis] / numOut);
  }
  if (static_cast<int64_t>(sizes.size()) != numOut)
    return error() << "split has " << sizes.size() << " sizes for " << numOut
                   << " outputs";
  if (std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != x.shape[axis])
    return error() << "split sizes do not add up to dim " << x.shape[axis];
  if (llvm::is_contained(sizes, 0))
    return error() << "has an empty output; zero-size tensors are not "
                      "supported";
  Value src = materialize(x);
  int64_t offset = 0;
  for (int64_t i = 0; i < numOut; ++i) {
    SmallVector<int64_t> offs(x.rank(), 0), sz(x.shape.begin(), x.shape.end()),
        strides(x.rank(), 1);
    offs[axis] = offset;
    sz[axis] = sizes[i];
    offset += sizes[i];
    setOutput(i, extractSlice(b, loc, src, offs, sz, strides).getResult(),
              x.kind);
  }
  return success();
}

LogicalResult NodeImporter::convertSoftmax() {
  const Val &x = in(0);
  if (!isFloatKind(x.kind))
    return error() << "expects a float input";
  int64_t axis = attrInt("axis", -1);
  if (failed(normalizeAxis(axis, x.rank())))
    return failure();
  auto op = linalg::SoftmaxOp::create(
      b, loc, TypeRange{tensorType(x.shape, x.kind)}, materialize(x),
      emptyTensor(x.shape, x.kind), axis);
  main.op = op;
  SmallVector<int64_t> ident(x.rank());
  std::iota(ident.begin(), ident.end(), 0);
  main.operands = {OperandSource{0, ident}};
  main.resultDims = ident;
  setOutput(0, op.getResult()[0], x.kind);
  return success();
}

LogicalResult NodeImporter::convertLayerNorm() {
  // float16/bfloat16 normalise in f32 (stash_type float, as PyTorch) and
  // round Y once; Mean and InvStdDev stay f32 (ONNX's U).
  FailureOr<ElemKind> outKind = widenHalfInputs(*this, {0, 1, 2});
  if (failed(outKind))
    return failure();
  const Val &x = in(0);
  if (!isFloatKind(x.kind))
    return error() << "expects a float input";
  int64_t axis = attrInt("axis", -1);
  if (failed(normalizeAxis(axis, x.rank())))
    return failure();
  float eps = attrFloat("epsilon", 1e-5f);
  int64_t rank = x.rank(), count = 1;
  SmallVector<int64_t> axes, outer;
  for (int64_t d = 0; d < rank; ++d) {
    if (d >= axis) {
      axes.push_back(d);
      count *= x.shape[d];
    } else {
      outer.push_back(x.shape[d]);
    }
  }
  // mean, centred values, variance, then one generic for the affine output.
  Value xv = materialize(x);
  auto add = [](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
    return arith::AddFOp::create(bb, l, a[0], a[1]);
  };
  Value sum = reduce(xv, x.shape, axes, x.kind, add);
  // A strategy applies to the mean's sum: a split normalised dim makes the
  // sums partial (f32 for float16/bfloat16, all-reduced before use).
  main.op = sum.getDefiningOp();
  SmallVector<int64_t> xDims(rank);
  std::iota(xDims.begin(), xDims.end(), 0);
  main.operands = {OperandSource{0, xDims}};
  SmallVector<AffineExpr> outerExprs;
  for (int64_t d = 0; d < axis; ++d)
    outerExprs.push_back(b.getAffineDimExpr(d));
  AffineMap outerMap = AffineMap::get(rank, 0, outerExprs, ctx);
  AffineMap ident = b.getMultiDimIdentityMap(rank);
  SmallVector<IteratorType> par(rank, IteratorType::parallel);
  double invCount = 1.0 / static_cast<double>(count);
  Value centred =
      buildGeneric({GenericInput{xv, ident, std::nullopt},
                    GenericInput{sum, outerMap, std::nullopt}},
                   x.shape, x.kind, par, Value(), ident,
                   [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
                     Value mean = arith::MulFOp::create(
                         bb, l, a[1],
                         scalarConstant(bb, invCount, x.kind));
                     return arith::SubFOp::create(bb, l, a[0], mean);
                   })
          ->getResult(0);
  Value sq = reduce(centred, x.shape, axes, x.kind,
                    [](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
                      Value p = arith::MulFOp::create(bb, l, a[0], a[0]);
                      return arith::AddFOp::create(bb, l, a[1], p);
                    });
  SmallVector<GenericInput> ops = {GenericInput{centred, ident, std::nullopt},
                                   GenericInput{sq, outerMap, std::nullopt}};
  bool haveScale = hasInput(1), haveBias = hasInput(2);
  for (int64_t i : {1, 2}) {
    if (!hasInput(i))
      continue;
    if (!broadcastShapes({x.shape, in(i).shape}) ||
        *broadcastShapes({x.shape, in(i).shape}) != x.shape)
      return error() << (i == 1 ? "Scale" : "B")
                     << " does not broadcast to the input shape";
    ops.push_back(broadcastInput(in(i), i, x.shape, rank));
  }
  Value y = buildGeneric(
                ops, x.shape, x.kind, par, Value(), ident,
                [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
                  Value var = arith::MulFOp::create(
                      bb, l, a[1], scalarConstant(bb, invCount, x.kind));
                  Value inv = math::RsqrtOp::create(
                      bb, l,
                      arith::AddFOp::create(
                          bb, l, var, scalarConstant(bb, eps, x.kind)));
                  Value r = arith::MulFOp::create(bb, l, a[0], inv);
                  size_t k = 2;
                  if (haveScale)
                    r = arith::MulFOp::create(bb, l, r, a[k++]);
                  if (haveBias)
                    r = arith::AddFOp::create(bb, l, r, a[k++]);
                  return r;
                })
                ->getResult(0);
  setOutput(0, narrowFromF32(*this, y, *outKind), *outKind);
  // Training exports also ask for the statistics, shaped like x with the
  // normalised dims as 1s.
  SmallVector<int64_t> kept(outer.begin(), outer.end());
  kept.append(rank - axis, 1);
  AffineMap outerId = b.getMultiDimIdentityMap(outer.size());
  SmallVector<IteratorType> outerPar(outer.size(), IteratorType::parallel);
  for (int64_t o : {1, 2}) {
    if (o >= node->output_size() || node->output(o).empty())
      continue;
    Value stat =
        buildGeneric({GenericInput{o == 1 ? sum : sq, outerId, std::nullopt}},
                     outer, x.kind, outerPar, Value(), outerId,
                     [&](OpBuilder &bb, Location l, ArrayRef<Value> a) {
                       Value v = arith::MulFOp::create(
                           bb, l, a[0], scalarConstant(bb, invCount, x.kind));
                       if (o == 1)
                         return v;
                       return Value(math::RsqrtOp::create(
                           bb, l,
                           arith::AddFOp::create(
                               bb, l, v, scalarConstant(bb, eps, x.kind))));
                     })
            ->getResult(0);
    setOutput(o, reshapeTo(stat, outer, kept), x.kind);
  }
  return success();
}

LogicalResult NodeImporter::convertCast() {
  const Val &x = in(0);
  const onnx::AttributeProto *to = attr("to");
  if (!to)
    return error() << "has no 'to' attribute";
  std::optional<ElemKind> kind = elemKindFromOnnx(to->i());
  if (!kind)
    return error() << "cannot cast to " << onnxTypeName(to->i());
  if (*kind == x.kind) {
    setOutput(0, materialize(x), x.kind);
    return success();
  }
  ElemKind from = x.kind, dst = *kind;
  Type dstType = getElemType(ctx, dst);
  FailureOr<Value> r = elementwise(
      {0}, dst, [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
        Value v = a[0];
        if (isFloatKind(from) && isFloatKind(dst)) {
          unsigned fw = v.getType().getIntOrFloatBitWidth();
          unsigned tw = dstType.getIntOrFloatBitWidth();
          if (fw == tw) { // f16 <-> bf16: through f32, which holds both
            v = arith::ExtFOp::create(bb, l, bb.getF32Type(), v);
            fw = 32;
          }
          return fw < tw ? Value(arith::ExtFOp::create(bb, l, dstType, v))
                         : Value(arith::TruncFOp::create(bb, l, dstType, v));
        }
        if (isFloatKind(from) && dst == ElemKind::Bool) {
          Value zero = scalarConstant(bb, 0.0, from);
          return arith::CmpFOp::create(bb, l, arith::CmpFPredicate::UNE, v,
                                       zero);
        }
        if (dst == ElemKind::Bool) {
          Value zero = scalarConstant(bb, 0.0, from);
          return arith::CmpIOp::create(bb, l, arith::CmpIPredicate::ne, v,
                                       zero);
        }
        if (isFloatKind(from))
          return arith::FPToSIOp::create(bb, l, dstType, v);
        if (isFloatKind(dst))
          return from == ElemKind::Bool
                     ? Value(arith::UIToFPOp::create(bb, l, dstType, v))
                     : Value(arith::SIToFPOp::create(bb, l, dstType, v));
        if (from == ElemKind::Bool)
          return arith::ExtUIOp::create(bb, l, dstType, v);
        unsigned fw = v.getType().getIntOrFloatBitWidth();
        unsigned tw = dstType.getIntOrFloatBitWidth();
        return fw < tw ? Value(arith::ExtSIOp::create(bb, l, dstType, v))
                       : Value(arith::TruncIOp::create(bb, l, dstType, v));
      });
  if (failed(r))
    return failure();
  setOutput(0, *r, dst);
  return success();
}

LogicalResult NodeImporter::convertExpand() {
  const Val &x = in(0);
  FailureOr<std::vector<int64_t>> shape = constInts(1, "the target shape");
  if (failed(shape))
    return failure();
  std::optional<std::vector<int64_t>> out = broadcastShapes({x.shape, *shape});
  if (!out)
    return error() << "input does not broadcast to the target shape";
  // A constant is expanded on the host only within the fold budget (a
  // scalar expanded to 2^40 elements ran the import out of memory); past it
  // the program broadcasts, as it does a computed input.
  if (x.isConstant() && reserveFold(*out)) {
    setOutput(0, expandHost(*x.constant, *out));
    return success();
  }
  int64_t rank = out->size();
  GenericInput g = broadcastInput(x, 0, *out, rank);
  Operation *op = buildGeneric(
      {g}, *out, x.kind,
      SmallVector<IteratorType>(rank, IteratorType::parallel), Value(),
      b.getMultiDimIdentityMap(rank),
      [](OpBuilder &, Location, ArrayRef<Value> a) { return a[0]; });
  main.op = op;
  main.operands = {g.source};
  SmallVector<int64_t> ident(rank);
  std::iota(ident.begin(), ident.end(), 0);
  main.resultDims = ident;
  setOutput(0, op->getResult(0), x.kind);
  return success();
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

LogicalResult NodeImporter::convert(const onnx::NodeProto &n, Location l,
                                    StringRef name) {
  node = &n;
  nodeName = name.str();
  loc = l;
  main = MainOp();
  inputs.clear();
  present.clear();
  StringRef opType = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    return emitError(loc) << "node '" << name << "' (op_type " << opType
                          << ", domain " << n.domain()
                          << ") is not supported: only the default ONNX "
                             "domain is imported";
  for (const std::string &input : n.input()) {
    if (input.empty()) {
      inputs.push_back(Val());
      present.push_back(false);
      continue;
    }
    auto it = values.find(input);
    if (it == values.end())
      return error() << "input '" << input
                     << "' is not produced by any earlier node, graph input "
                        "or initializer";
    inputs.push_back(it->second);
    present.push_back(true);
  }
  // ONNX's min_input per op and opset (onnx.defs schemas, where it changes:
  // the entry with the largest opset <= this model's applies), raised where
  // this importer needs more (Slice, Reshape, Range, Where, Expand, Gemm,
  // LayerNormalization, from opset 1). Required inputs must be named: an
  // empty name ("", an omitted optional input) is no input (fuzz-onnx: folds
  // and converters read them unchecked). Input 0 is required by every op
  // imported here, and every input of a variadic op.
  struct Arity {
    const char *op;
    int64_t sinceOpset;
    int minIn;
  };
  static const Arity kArity[] = {
      {"Add", 1, 2}, {"And", 1, 2}, {"BatchNormalization", 1, 5},
      {"BitShift", 11, 2}, {"CastLike", 15, 2}, {"Compress", 9, 2},
      {"Conv", 1, 2}, {"ConvInteger", 10, 2}, {"ConvTranspose", 1, 2},
      {"CumSum", 11, 2}, {"DequantizeLinear", 10, 2}, {"Div", 1, 2},
      {"Equal", 1, 2}, {"Expand", 1, 2}, {"Expand", 8, 2}, {"GRU", 1, 3},
      {"Gather", 1, 2}, {"GatherElements", 11, 2}, {"GatherND", 11, 2},
      {"Gemm", 1, 2}, {"Greater", 1, 2}, {"GreaterOrEqual", 12, 2},
      {"GridSample", 16, 2}, {"InstanceNormalization", 1, 3}, {"LSTM", 1, 3},
      {"LayerNormalization", 1, 2}, {"LayerNormalization", 17, 2},
      {"Less", 1, 2}, {"LessOrEqual", 12, 2}, {"Loop", 1, 3}, {"Loop", 11, 2},
      {"MatMul", 1, 2}, {"MatMulInteger", 10, 2}, {"MaxRoiPool", 1, 2},
      {"MaxUnpool", 9, 2}, {"MelWeightMatrix", 17, 5}, {"Mod", 10, 2},
      {"Mul", 1, 2}, {"NegativeLogLikelihoodLoss", 12, 2},
      {"NonMaxSuppression", 10, 2}, {"OneHot", 9, 3}, {"Or", 1, 2},
      {"PRelu", 1, 2}, {"Pad", 11, 2}, {"Pow", 1, 2}, {"QLinearConv", 10, 8},
      {"QLinearMatMul", 10, 8}, {"QuantizeLinear", 10, 2}, {"RNN", 1, 3},
      {"Range", 1, 3}, {"Range", 11, 3}, {"Reshape", 1, 2}, {"Reshape", 5, 2},
      {"Resize", 10, 2}, {"Resize", 11, 3}, {"Resize", 13, 1},
      {"ReverseSequence", 10, 2}, {"RoiAlign", 10, 3}, {"STFT", 17, 2},
      {"Scan", 8, 2}, {"Scan", 9, 1}, {"Scatter", 9, 3},
      {"ScatterElements", 11, 3}, {"ScatterND", 11, 3}, {"SequenceAt", 11, 2},
      {"SequenceInsert", 11, 2}, {"Slice", 1, 3}, {"Slice", 10, 3},
      {"SoftmaxCrossEntropyLoss", 12, 2}, {"Sub", 1, 2}, {"Tile", 1, 3},
      {"Tile", 6, 2}, {"TopK", 10, 2}, {"Unsqueeze", 13, 2},
      {"Upsample", 9, 2}, {"Where", 1, 3}, {"Where", 9, 3}, {"Xor", 1, 2}};
  int minIn = inputs.empty() ? 0 : 1;
  for (const Arity &a : kArity) // sorted by op, then opset
    if (opType == a.op && opset >= a.sinceOpset)
      minIn = a.minIn;
  bool variadic = llvm::is_contained(
      {StringRef("Concat"), StringRef("Sum"), StringRef("Mean"),
       StringRef("Max"), StringRef("Min")},
      opType);
  for (int i = 0, e = variadic ? numInputs() : minIn; i < e; ++i)
    if (!hasInput(i))
      return error() << "input " << i << " is missing (absent or named \"\")";

  FailureOr<bool> folded = tryFold(opType);
  if (failed(folded))
    return failure();
  if (*folded)
    return success();
  if (inputs.empty() && opType != "Constant")
    return error() << "has no inputs";

  const OpTable &table = getOpTable();
  auto it = table.find(opType);
  if (it != table.end())
    return it->second(*this, opType);
  return emitError(loc) << "node '" << name << "' (op_type " << opType
                        << ", opset " << opset << ") is not supported";
}

LogicalResult NodeImporter::convertIdentity(StringRef opType) {
  // Dropout is the identity only in inference; a training-mode Dropout run as
  // the identity would be a silently wrong result.
  if (opType == "Dropout" && hasInput(2)) {
    if (!in(2).isScalarConstant())
      return error() << "has a training_mode input that is not a constant; "
                        "autoshard imports Dropout for inference only";
    if (in(2).constant->getI(0) != 0)
      return error() << "has training_mode = true, which is not supported "
                        "(autoshard imports Dropout for inference only)";
  }
  setOutput(0, inputs[0]);
  if (opType == "Dropout" && node->output_size() > 1 &&
      !node->output(1).empty()) {
    // Inference: the mask keeps everything. Small, it stays on the host for
    // later folds; else a splat, one value in the IR and the plan (a host
    // array of the input's size held 8 bytes an element: 2 GiB and 5 s for
    // a [16384, 16384] input).
    const std::vector<int64_t> &shape = inputs[0].shape;
    if (reserveFold(shape)) {
      HostTensor mask;
      mask.kind = ElemKind::Bool;
      mask.shape = shape;
      mask.i.assign(mask.numel(), 1);
      setOutput(1, std::move(mask));
    } else {
      RankedTensorType type = tensorType(shape, ElemKind::Bool);
      Value all = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(type, b.getBoolAttr(true)));
      setOutput(1, all, ElemKind::Bool);
    }
  }
  return success();
}

void autoshard::onnx_import::registerCoreOps(OpTable &t) {
  auto add = [&](std::initializer_list<const char *> ops, OpConverter fn) {
    for (const char *op : ops)
      t[op] = fn;
  };
  add({"Identity", "Dropout"},
      [](NodeImporter &n, StringRef op) { return n.convertIdentity(op); });
  add({"Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "Greater", "Where",
       "Sqrt", "Erf", "Tanh", "Relu", "Sigmoid", "Exp", "Log", "Neg", "Abs",
       "Reciprocal"},
      [](NodeImporter &n, StringRef op) { return n.convertElementwise(op); });
  add({"MatMul"}, [](NodeImporter &n, StringRef) { return n.convertMatMul(); });
  add({"Gemm"}, [](NodeImporter &n, StringRef) { return n.convertGemm(); });
  add({"Gather"}, [](NodeImporter &n, StringRef) { return n.convertGather(); });
  add({"Reshape", "Squeeze", "Unsqueeze", "Flatten"},
      [](NodeImporter &n, StringRef op) { return n.convertReshapeLike(op); });
  add({"Transpose"},
      [](NodeImporter &n, StringRef) { return n.convertTranspose(); });
  add({"Slice"}, [](NodeImporter &n, StringRef) { return n.convertSlice(); });
  add({"Concat"}, [](NodeImporter &n, StringRef) { return n.convertConcat(); });
  add({"Split"}, [](NodeImporter &n, StringRef) { return n.convertSplit(); });
  add({"Softmax"},
      [](NodeImporter &n, StringRef) { return n.convertSoftmax(); });
  add({"LayerNormalization"},
      [](NodeImporter &n, StringRef) { return n.convertLayerNorm(); });
  add({"Cast"}, [](NodeImporter &n, StringRef) { return n.convertCast(); });
  add({"Expand"}, [](NodeImporter &n, StringRef) { return n.convertExpand(); });
}

const OpTable &autoshard::onnx_import::getOpTable() {
  static const OpTable table = [] {
    OpTable t;
    registerCoreOps(t);
    registerConvOps(t);
    registerMathOps(t);
    registerReduceOps(t);
    registerIndexOps(t);
    registerResizeOps(t);
    registerRearrangeOps(t);
    registerEinsumOps(t);
    registerRecurrentOps(t);
    return t;
  }();
  return table;
}
