//===- OnnxRearrangeOps.cpp - Pad, DepthToSpace, SpaceToDepth -------------===//
//
// Ops that only move elements: each output element is one input element (or
// Pad's constant). Pad is built from slices, concats and tensor.pad, which
// propagation splits on every unpadded dim. DepthToSpace and SpaceToDepth
// are reshapes around a permuting linalg.generic.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace autoshard::onnx_import;
using mlir::utils::IteratorType;

namespace {

Value i64Const(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantOp::create(b, l, b.getI64IntegerAttr(v));
}

Value sliceDim(OpBuilder &b, Location l, Value v, int64_t dim,
               int64_t offset, int64_t size) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> offs(type.getRank(), b.getIndexAttr(0)),
      sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(b.getIndexAttr(d == dim ? size : type.getDimSize(d)));
  offs[dim] = b.getIndexAttr(offset);
  return tensor::ExtractSliceOp::create(b, l, v, offs, sizes, strides);
}

/// The row of a dim of `len` that pad position `c` (outside [0, len))
/// repeats in `mode`.
int64_t padSource(StringRef mode, int64_t c, int64_t len) {
  if (mode == "edge")
    return std::clamp<int64_t>(c, 0, len - 1);
  if (mode == "reflect")
    return c < 0 ? -c : 2 * (len - 1) - c;
  return ((c % len) + len) % len; // wrap
}

/// Pad (constant, edge, reflect, wrap) from ops that propagation splits
/// along every unpadded dim: negative pads are an extract_slice; edge,
/// reflect and wrap concatenate one-row slices of the source to each side
/// (pads are a few rows); constant is a tensor.pad, and a constant given at
/// run time is written over the padding by a generic whose operands are the
/// padded tensor, the value and the padded dims' indices.
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
  std::vector<int64_t> lo(rank, 0), hi(rank, 0);
  for (int64_t k = 0; k < na; ++k) {
    int64_t d = axes[k];
    lo[d] = (*pads)[k];
    hi[d] = (*pads)[na + k];
    if (x.shape[d] + lo[d] + hi[d] <= 0)
      return n.error() << "pads leave nothing of dim " << d
                       << "; zero-size tensors are not supported";
    int64_t kept = x.shape[d] + std::min<int64_t>(lo[d], 0) +
                   std::min<int64_t>(hi[d], 0);
    if (mode == "reflect" && (lo[d] >= kept || hi[d] >= kept))
      return n.error() << "reflect pads of dim " << d
                       << " must be smaller than its size " << kept;
    if (kept <= 0)
      return n.error() << "pads leave nothing of dim " << d
                       << " to pad from";
  }
  // The constant: folded when known, else a value at run time.
  std::optional<double> cval = 0.0;
  if (mode == "constant" && n.hasInput(2)) {
    const Val &c = n.in(2);
    int64_t count = 1;
    for (int64_t d : c.shape)
      count *= d;
    if (count != 1)
      return n.error() << "constant_value must be one value";
    if (c.isConstant())
      cval = c.constant->getF(0);
    else
      cval.reset();
  }
  OpBuilder &b = n.getBuilder();
  Location l = n.getLoc();
  Value v = n.materialize(x);
  std::vector<int64_t> shape = x.shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (lo[d] < 0 || hi[d] < 0) {
      int64_t from = std::max<int64_t>(-lo[d], 0);
      shape[d] -= from + std::max<int64_t>(-hi[d], 0);
      v = sliceDim(b, l, v, d, from, shape[d]);
      lo[d] = std::max<int64_t>(lo[d], 0);
      hi[d] = std::max<int64_t>(hi[d], 0);
    }
    if (mode == "constant" || (!lo[d] && !hi[d]))
      continue;
    SmallVector<Value> pieces;
    for (int64_t c = -lo[d]; c < 0; ++c)
      pieces.push_back(sliceDim(b, l, v, d, padSource(mode, c, shape[d]), 1));
    pieces.push_back(v);
    for (int64_t c = shape[d]; c < shape[d] + hi[d]; ++c)
      pieces.push_back(sliceDim(b, l, v, d, padSource(mode, c, shape[d]), 1));
    v = tensor::ConcatOp::create(b, l, d, pieces);
    shape[d] += lo[d] + hi[d];
  }
  bool padded = llvm::any_of(lo, [](int64_t p) { return p; }) ||
                llvm::any_of(hi, [](int64_t p) { return p; });
  if (mode != "constant" || !padded) {
    n.setOutput(0, v, x.kind);
    return success();
  }
  std::vector<int64_t> out = shape;
  SmallVector<OpFoldResult> low, high;
  for (int64_t d = 0; d < rank; ++d) {
    out[d] += lo[d] + hi[d];
    low.push_back(b.getIndexAttr(lo[d]));
    high.push_back(b.getIndexAttr(hi[d]));
  }
  v = tensor::PadOp::create(b, l, n.tensorType(out, x.kind), v, low, high,
                            n.scalarConstant(b, cval.value_or(0.0), x.kind));
  if (!cval) {
    // out = inside ? padded : value, inside from each padded dim's index.
    MLIRContext *ctx = b.getContext();
    const Val &c = n.in(2);
    SmallVector<AffineExpr> zeros(c.rank(), getAffineConstantExpr(0, ctx));
    SmallVector<GenericInput> ins = {
        {v, b.getMultiDimIdentityMap(rank), std::nullopt},
        {n.materialize(c), AffineMap::get(rank, 0, zeros, ctx), std::nullopt}};
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if (lo[d] || hi[d]) {
        dims.push_back(d);
        ins.push_back(loopIndex(n, d, out[d], rank));
      }
    v = n.buildGeneric(
             ins, out, x.kind,
             SmallVector<IteratorType>(rank, IteratorType::parallel), Value(),
             b.getMultiDimIdentityMap(rank),
             [&](OpBuilder &bb, Location ll, ArrayRef<Value> a) {
               Value inside =
                   arith::ConstantOp::create(bb, ll, bb.getBoolAttr(true));
               using P = arith::CmpIPredicate;
               for (auto [k, d] : llvm::enumerate(dims)) {
                 Value i = a[2 + k];
                 inside = arith::AndIOp::create(
                     bb, ll, inside,
                     arith::AndIOp::create(
                         bb, ll,
                         arith::CmpIOp::create(bb, ll, P::sge, i,
                                               i64Const(bb, ll, lo[d])),
                         arith::CmpIOp::create(
                             bb, ll, P::slt, i,
                             i64Const(bb, ll, lo[d] + shape[d]))));
               }
               return Value(arith::SelectOp::create(bb, ll, inside, a[0], a[1]));
             })
            ->getResult(0);
  }
  n.setOutput(0, v, x.kind);
  return success();
}

/// DepthToSpace / SpaceToDepth on [N, C, H, W] with block size s: the
/// channel (c, i, j) of the deep layout is the pixel (h*s + i, w*s + j) of
/// the spatial one. DCR orders the deep channel (i, j, c), CRD (c, i, j).
/// A reshape to 6-D, a permuting generic and a reshape back: every operand
/// is indexed by the loops, so the op splits like a transpose.
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
  std::vector<int64_t> in6, out6, out;
  SmallVector<unsigned> perm; // out6 loop d reads in6 dim perm[d]'s loop
  if (toSpace) {
    if (C % (s * s))
      return n.error() << "channels " << C << " are not a multiple of "
                       << s * s;
    int64_t c = C / (s * s);
    // out6 = [N, c, H, s(i), W, s(j)], read at in6 (n, i, j, c, h, w) (DCR)
    // or (n, c, i, j, h, w) (CRD).
    in6 = mode == "DCR" ? std::vector<int64_t>{N, s, s, c, H, W}
                        : std::vector<int64_t>{N, c, s, s, H, W};
    out6 = {N, c, H, s, W, s};
    perm = mode == "DCR" ? SmallVector<unsigned>{0, 3, 5, 1, 2, 4}
                         : SmallVector<unsigned>{0, 1, 3, 5, 2, 4};
    out = {N, c, H * s, W * s};
  } else {
    if (H % s || W % s)
      return n.error() << "H and W must be multiples of the block size";
    // out6 = [N, s(i), s(j), C, H', W'] read at in6 (n, c, h, i, w, j).
    in6 = {N, C, H / s, s, W / s, s};
    out6 = {N, s, s, C, H / s, W / s};
    perm = {0, 3, 4, 1, 5, 2};
    out = {N, C * s * s, H / s, W / s};
  }
  OpBuilder &b = n.getBuilder();
  Value v = n.reshapeTo(n.materialize(x), x.shape, in6);
  AffineMap read = AffineMap::getPermutationMap(perm, b.getContext());
  v = n.buildGeneric({GenericInput{v, read, std::nullopt}}, out6, x.kind,
                     SmallVector<IteratorType>(6, IteratorType::parallel),
                     Value(), b.getMultiDimIdentityMap(6),
                     [](OpBuilder &, Location, ArrayRef<Value> a) {
                       return a[0];
                     })
          ->getResult(0);
  n.setOutput(0, n.reshapeTo(v, out6, out), x.kind);
  return success();
}

} // namespace

void autoshard::onnx_import::registerRearrangeOps(OpTable &t) {
  t["Pad"] = convertPad;
  t["DepthToSpace"] = convertDepthSpace;
  t["SpaceToDepth"] = convertDepthSpace;
}
