//===- OnnxRearrangeOps.cpp - Pad, DepthToSpace, SpaceToDepth -------------===//
//
// Ops that only move elements: each output element is one input element (or
// Pad's constant) at a position computed from the output's. Each is a
// linalg.generic over the output whose body reads the input with
// tensor.extract at that position (a captured read, like Gather's), so the
// op splits over any output dim and needs no new kernel.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <numeric>

using namespace mlir;
using namespace autoshard::onnx_import;
using mlir::utils::IteratorType;

namespace {

Value i64Const(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantOp::create(b, l, b.getI64IntegerAttr(v));
}

/// A generic over `out` whose operands are `ins` then every loop's index
/// (i64); `body` gets the operands' elements then the indices.
Value gatherGeneric(NodeImporter &n, ArrayRef<GenericInput> ins,
                    ArrayRef<int64_t> out, ElemKind kind,
                    const NodeImporter::BodyFn &body) {
  int64_t rank = out.size();
  SmallVector<GenericInput> all(ins.begin(), ins.end());
  for (int64_t d = 0; d < rank; ++d)
    all.push_back(loopIndex(n, d, out[d], rank));
  return n
      .buildGeneric(all, out, kind,
                    SmallVector<IteratorType>(rank, IteratorType::parallel),
                    Value(), n.getBuilder().getMultiDimIdentityMap(rank), body)
      ->getResult(0);
}

Value extractAt(OpBuilder &b, Location l, Value x, ArrayRef<Value> at) {
  SmallVector<Value> idx;
  for (Value v : at)
    idx.push_back(arith::IndexCastOp::create(b, l, b.getIndexType(), v));
  return tensor::ExtractOp::create(b, l, x, idx);
}

/// Pad (constant, edge, reflect, wrap): out[o] = x[o - begin] inside, else
/// the constant or the edge / mirrored / wrapped element.
LogicalResult convertPad(NodeImporter &n, StringRef) {
  const Val &x = n.in(0);
  std::string mode = "constant";
  if (const onnx::AttributeProto *a = n.attr("mode"))
    mode = a->s();
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      mode != "wrap")
    return n.error() << "mode '" << mode
                     << "' is not one of constant, edge, reflect, wrap";
  std::optional<std::vector<int64_t>> padsAttr = n.attrInts("pads");
  FailureOr<std::vector<int64_t>> pads =
      padsAttr ? FailureOr<std::vector<int64_t>>(*padsAttr)
               : n.constInts(1, "the pads");
  if (failed(pads))
    return failure();
  int64_t rank = x.rank();
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  if (n.hasInput(3)) {
    FailureOr<std::vector<int64_t>> given = n.constInts(3, "the axes");
    if (failed(given))
      return failure();
    axes = *given;
    for (int64_t &a : axes)
      if (failed(n.normalizeAxis(a, rank)))
        return failure();
  }
  int64_t na = axes.size();
  if (static_cast<int64_t>(pads->size()) != 2 * na)
    return n.error() << "pads must hold 2 values per padded axis";
  std::vector<int64_t> begin(rank, 0), out = x.shape;
  for (int64_t k = 0; k < na; ++k) {
    int64_t d = axes[k], lo = (*pads)[k], hi = (*pads)[na + k];
    begin[d] = lo;
    out[d] += lo + hi;
    if (out[d] <= 0)
      return n.error() << "pads leave nothing of dim " << d
                       << "; zero-size tensors are not supported";
    if (mode == "reflect" && (lo >= x.shape[d] || hi >= x.shape[d]))
      return n.error() << "reflect pads of dim " << d
                       << " must be smaller than its size " << x.shape[d];
  }
  // The constant: folded into the body when known, else a rank-0 operand.
  SmallVector<GenericInput> ins;
  std::optional<double> cval = 0.0;
  if (mode == "constant" && n.hasInput(2)) {
    const Val &c = n.in(2);
    int64_t count = 1;
    for (int64_t d : c.shape)
      count *= d;
    if (count != 1)
      return n.error() << "constant_value must be one value";
    if (c.isConstant()) {
      cval = c.constant->getF(0);
    } else {
      cval.reset();
      MLIRContext *ctx = n.getBuilder().getContext();
      SmallVector<AffineExpr> zeros(c.rank(), getAffineConstantExpr(0, ctx));
      ins.push_back({n.materialize(c), AffineMap::get(rank, 0, zeros, ctx),
                     std::nullopt});
    }
  }
  Value data = n.materialize(x);
  int64_t first = ins.size();
  Value r = gatherGeneric(
      n, ins, out, x.kind, [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
        Value inside = arith::ConstantOp::create(b, l, b.getBoolAttr(true));
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d) {
          int64_t len = x.shape[d];
          Value c = arith::SubIOp::create(b, l, a[first + d],
                                          i64Const(b, l, begin[d]));
          Value zero = i64Const(b, l, 0), last = i64Const(b, l, len - 1);
          using P = arith::CmpIPredicate;
          Value below = arith::CmpIOp::create(b, l, P::slt, c, zero);
          Value above = arith::CmpIOp::create(b, l, P::sgt, c, last);
          if (mode == "constant") {
            Value out = arith::OrIOp::create(b, l, below, above);
            inside = arith::AndIOp::create(
                b, l, inside,
                arith::XOrIOp::create(
                    b, l, out,
                    arith::ConstantOp::create(b, l, b.getBoolAttr(true))));
            c = arith::SelectOp::create(b, l, out, zero, c);
          } else if (mode == "edge") {
            c = arith::SelectOp::create(b, l, below, zero, c);
            c = arith::SelectOp::create(b, l, above, last, c);
          } else if (mode == "reflect") {
            c = arith::SelectOp::create(
                b, l, below, arith::SubIOp::create(b, l, zero, c), c);
            c = arith::SelectOp::create(
                b, l, above,
                arith::SubIOp::create(b, l, i64Const(b, l, 2 * (len - 1)), c),
                c);
          } else { // wrap
            Value sz = i64Const(b, l, len);
            c = arith::RemSIOp::create(
                b, l,
                arith::AddIOp::create(b, l, arith::RemSIOp::create(b, l, c, sz),
                                      sz),
                sz);
          }
          at.push_back(c);
        }
        Value v = extractAt(b, l, data, at);
        if (mode != "constant")
          return v;
        Value k = cval ? n.scalarConstant(b, *cval, x.kind) : a[0];
        return Value(arith::SelectOp::create(b, l, inside, v, k));
      });
  n.setOutput(0, r, x.kind);
  return success();
}

/// DepthToSpace / SpaceToDepth on [N, C, H, W] with block size s: the
/// channel (c, i, j) of the deep layout is the pixel (h*s + i, w*s + j) of
/// the spatial one. DCR orders the deep channel (i, j, c), CRD (c, i, j).
LogicalResult convertDepthSpace(NodeImporter &n, StringRef op) {
  const Val &x = n.in(0);
  if (x.rank() != 4)
    return n.error() << "expects a 4-D (N, C, H, W) input";
  int64_t s = n.attrInt("blocksize", 0);
  if (s <= 0)
    return n.error() << "blocksize must be positive";
  bool toSpace = op == "DepthToSpace";
  std::string mode = "DCR";
  if (const onnx::AttributeProto *a = n.attr("mode"))
    mode = a->s();
  if (mode != "DCR" && mode != "CRD")
    return n.error() << "mode '" << mode << "' is not one of DCR, CRD";
  int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  std::vector<int64_t> out;
  if (toSpace) {
    if (C % (s * s))
      return n.error() << "channels " << C << " are not a multiple of "
                       << s * s;
    out = {N, C / (s * s), H * s, W * s};
  } else {
    if (H % s || W % s)
      return n.error() << "H and W must be multiples of the block size";
    out = {N, C * s * s, H / s, W / s};
  }
  // Channels of the spatial layout.
  int64_t cs = toSpace ? out[1] : C;
  bool dcr = mode == "DCR" || !toSpace; // SpaceToDepth is DCR
  Value data = n.materialize(x);
  Value r = gatherGeneric(
      n, {}, out, x.kind, [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
        auto mul = [&](Value v, int64_t k) {
          return Value(arith::MulIOp::create(b, l, v, i64Const(b, l, k)));
        };
        auto add = [&](Value p, Value q) {
          return Value(arith::AddIOp::create(b, l, p, q));
        };
        auto div = [&](Value v, int64_t k) {
          return Value(arith::DivSIOp::create(b, l, v, i64Const(b, l, k)));
        };
        auto rem = [&](Value v, int64_t k) {
          return Value(arith::RemSIOp::create(b, l, v, i64Const(b, l, k)));
        };
        // Deep channel of (c, i, j).
        auto deep = [&](Value c, Value i, Value j) {
          Value ij = add(mul(i, s), j);
          return dcr ? add(mul(ij, cs), c) : add(mul(c, s * s), ij);
        };
        if (toSpace) { // out [n, c, h*s+i, w*s+j] <- in [n, deep, h, w]
          Value i = rem(a[2], s), j = rem(a[3], s);
          return extractAt(b, l, data,
                           {a[0], deep(a[1], i, j), div(a[2], s),
                            div(a[3], s)});
        }
        // out [n, deep, h, w] <- in [n, c, h*s+i, w*s+j]
        Value c = rem(a[1], cs), ij = div(a[1], cs);
        Value i = div(ij, s), j = rem(ij, s);
        return extractAt(b, l, data,
                         {a[0], c, add(mul(a[2], s), i),
                          add(mul(a[3], s), j)});
      });
  n.setOutput(0, r, x.kind);
  return success();
}

} // namespace

void autoshard::onnx_import::registerRearrangeOps(OpTable &t) {
  t["Pad"] = convertPad;
  t["DepthToSpace"] = convertDepthSpace;
  t["SpaceToDepth"] = convertDepthSpace;
}
