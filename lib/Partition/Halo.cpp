//===- Halo.cpp - Spatially split convolutions and pools ------------------===//
//
// See Halo.h. Rows here stand for either spatial dim: the same steps run on
// H, then on W of the H-extended slab (so the corners come along).
//
//===----------------------------------------------------------------------===//

#include "autoshard/Partition/Halo.h"

#include "autoshard/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace autoshard;

namespace {

/// One spatial dim of a window op: input dim `inDim` is indexed by
/// `stride * o + dilation * k`, `o` being output dim `outDim`.
struct SpatialDim {
  int64_t inDim = -1, outDim = -1;
  int64_t stride = 1, dilation = 1, kernel = 1;
  int64_t span() const { return (kernel - 1) * dilation + 1; }
};

bool isWindowOp(Operation *op) {
  return isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp,
             linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(op);
}

/// `c * d_i` or `d_i`: (i, c).
std::optional<std::pair<unsigned, int64_t>> scaledDim(AffineExpr e) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return std::make_pair(d.getPosition(), int64_t(1));
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin || bin.getKind() != AffineExprKind::Mul)
    return std::nullopt;
  auto d = dyn_cast<AffineDimExpr>(bin.getLHS());
  auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
  if (!d || !c) {
    d = dyn_cast<AffineDimExpr>(bin.getRHS());
    c = dyn_cast<AffineConstantExpr>(bin.getLHS());
  }
  if (!d || !c)
    return std::nullopt;
  return std::make_pair(d.getPosition(), c.getValue());
}

/// The spatial dims of a window op, read off its input's indexing map.
SmallVector<SpatialDim> getSpatialDims(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap outMap = maps.back();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<SpatialDim> dims;
  for (auto [d, expr] : llvm::enumerate(maps.front().getResults())) {
    auto add = dyn_cast<AffineBinaryOpExpr>(expr);
    if (!add || add.getKind() != AffineExprKind::Add)
      continue;
    auto l = scaledDim(add.getLHS()), r = scaledDim(add.getRHS());
    if (!l || !r)
      continue;
    if (!outMap.isFunctionOfDim(l->first))
      std::swap(l, r);
    std::optional<unsigned> outDim =
        outMap.getResultPosition(getAffineDimExpr(l->first, op.getContext()));
    if (!outDim)
      continue;
    dims.push_back({int64_t(d), int64_t(*outDim), l->second, r->second,
                    ranges[r->first]});
  }
  return dims;
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value slice(OpBuilder &b, Location loc, Value x, int64_t dim, OpFoldResult off,
            int64_t size) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
      sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
  offsets[dim] = off;
  sizes[dim] = b.getIndexAttr(size);
  return tensor::ExtractSliceOp::create(b, loc, x, offsets, sizes, strides);
}

/// Sends every device's `x` to its neighbour `step` (+1 or -1) further
/// along `axes`; devices with no such neighbour send nothing, and those
/// that receive nothing keep their own `x` (masked later).
Value shiftAlong(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes,
                 int64_t step, const SpmdBuilder &spmd) {
  const DeviceMesh &mesh = spmd.getMesh();
  SmallVector<int64_t> sources, targets;
  for (int64_t pos = 0; pos < mesh.getNumDevices(); ++pos) {
    std::vector<int64_t> group = mesh.getGroup(pos, axes);
    int64_t i = mesh.getIndexInGroup(pos, axes) + step;
    if (i < 0 || i >= static_cast<int64_t>(group.size()))
      continue;
    sources.push_back(pos);
    targets.push_back(group[i]);
  }
  return dist::PermuteOp::create(b, loc, x, spmd.getGridName().str(), sources,
                                 targets);
}

/// `slab` with its first `low` rows of `dim` set to `pad` on the group's
/// first device and its last `high` rows on the last: the input's own
/// padding at the edges of the mesh.
Value maskEdges(OpBuilder &b, Location loc, Value slab, int64_t dim,
                int64_t low, int64_t high, ArrayRef<int64_t> axes,
                Value pad, const SpmdBuilder &spmd) {
  auto type = cast<RankedTensorType>(slab.getType());
  int64_t rows = type.getDimSize(dim), rank = type.getRank();
  Value idx = spmd.buildGroupIndex(b, loc, axes);
  int64_t last = spmd.getMesh().getGroupSize(axes) - 1;
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                       type.getElementType());
  AffineMap ident = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> par(rank, utils::IteratorType::parallel);
  auto body = [&](OpBuilder &bb, Location l, ValueRange args) {
    using P = arith::CmpIPredicate;
    Value i = linalg::IndexOp::create(bb, l, dim);
    auto cmp = [&](P p, Value a, int64_t c) {
      return arith::CmpIOp::create(bb, l, p, a, indexConst(bb, l, c));
    };
    Value top = arith::AndIOp::create(bb, l, cmp(P::eq, idx, 0),
                                      cmp(P::slt, i, low));
    Value bottom = arith::AndIOp::create(bb, l, cmp(P::eq, idx, last),
                                         cmp(P::sge, i, rows - high));
    Value edge = arith::OrIOp::create(bb, l, top, bottom);
    Value v = arith::SelectOp::create(bb, l, edge, pad, args[0]);
    linalg::YieldOp::create(bb, l, v);
  };
  return linalg::GenericOp::create(b, loc, TypeRange{type}, ValueRange{slab},
                                   ValueRange{init}, {ident, ident}, par, body)
      .getResult(0);
}

/// The rows [first - low, first + own + high) of the tensor whose rows
/// [first, first + own) this device holds in `x`: `low` from the previous
/// device, `high` (if negative: fewer own rows) from the next one.
Value exchangeHalo(OpBuilder &b, Location loc, Value x, int64_t dim,
                   int64_t low, int64_t high, ArrayRef<int64_t> axes,
                   Value pad, const SpmdBuilder &spmd) {
  int64_t own = cast<RankedTensorType>(x.getType()).getDimSize(dim);
  SmallVector<Value> parts;
  if (low > 0)
    parts.push_back(shiftAlong(
        b, loc, slice(b, loc, x, dim, b.getIndexAttr(own - low), low), axes,
        +1, spmd));
  parts.push_back(high >= 0 ? x
                            : slice(b, loc, x, dim, b.getIndexAttr(0),
                                    own + high));
  if (high > 0)
    parts.push_back(shiftAlong(
        b, loc, slice(b, loc, x, dim, b.getIndexAttr(0), high), axes, -1,
        spmd));
  Value slab = parts.size() == 1
                   ? parts.front()
                   : tensor::ConcatOp::create(b, loc, dim, parts).getResult();
  if (low <= 0 && high <= 0)
    return slab;
  return maskEdges(b, loc, slab, dim, std::max<int64_t>(low, 0),
                   std::max<int64_t>(high, 0), axes, pad, spmd);
}

/// The halo form: `input` = [pad](all_gather(...(x))) gathering exactly the
/// split spatial dims over the output's axes, each of whose local extent is
/// the output's local rows times the stride. Null when it does not apply.
Value tryHalo(OpBuilder &b, Location loc, Value input,
              ArrayRef<SpatialDim> dims, RankedTensorType global,
              const TensorLayout &out, const SpmdBuilder &spmd,
              SmallVectorImpl<Operation *> &dead) {
  // The op's own padding, if any (a 2x2 stride-2 pool has none).
  auto rank = cast<RankedTensorType>(input.getType()).getRank();
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  Attribute padAttr;
  Value x = input;
  auto pad = input.getDefiningOp<tensor::PadOp>();
  if (pad) {
    // The pad goes away: its value is made again here.
    if (!pad->hasOneUse() || !pad.getConstantPaddingValue() ||
        !matchPattern(pad.getConstantPaddingValue(), m_Constant(&padAttr)))
      return Value();
    low.assign(pad.getStaticLow().begin(), pad.getStaticLow().end());
    high.assign(pad.getStaticHigh().begin(), pad.getStaticHigh().end());
    x = pad.getSource();
  }
  for (int64_t d = 0; d < rank; ++d)
    if ((low[d] || high[d]) && !llvm::any_of(dims, [&](const SpatialDim &s) {
          return s.inDim == d;
        }))
      return Value();
  SmallVector<Operation *> gathers;
  SmallVector<int64_t> gathered;
  while (auto g = x.getDefiningOp<shard::AllGatherOp>()) {
    if (!g->hasOneUse())
      return Value();
    gathers.push_back(g);
    gathered.push_back(g.getGatherAxis().getSExtValue());
    ArrayRef<int16_t> axes = g.getGridAxes();
    const SpatialDim *s = llvm::find_if(dims, [&](const SpatialDim &s) {
      return s.inDim == gathered.back();
    });
    if (s == dims.end() ||
        !llvm::equal(axes, out.dimAxes[s->outDim]))
      return Value();
    x = g.getInput();
  }
  if (gathers.empty())
    return Value();
  for (const SpatialDim &s : dims) {
    bool split = !out.dimAxes[s.outDim].empty();
    if (split != llvm::is_contained(gathered, s.inDim))
      return Value();
  }
  // Halo sizes per split dim, all checked before anything is built: windows
  // start at the device's own first row (less the low pad) and reach only
  // into the two neighbours.
  SmallVector<std::pair<int64_t, int64_t>> halos;
  SmallVector<int64_t> own(cast<RankedTensorType>(x.getType()).getShape());
  for (const SpatialDim &s : dims) {
    const auto &axes = out.dimAxes[s.outDim];
    if (axes.empty()) {
      halos.push_back({low[s.inDim], high[s.inDim]});
      continue;
    }
    int64_t outRows =
        global.getDimSize(s.outDim) / spmd.getMesh().getGroupSize(axes);
    int64_t rows = own[s.inDim];
    int64_t lo = low[s.inDim];
    int64_t hi = (outRows - 1) * s.stride + s.span() - lo - rows;
    if (rows != outRows * s.stride || lo > rows || hi > rows ||
        hi > high[s.inDim])
      return Value();
    halos.push_back({lo, hi});
  }
  // Without a pad no halo reaches past the input (checked above): nothing
  // is masked.
  Value padValue;
  if (pad)
    padValue = arith::ConstantOp::create(b, loc, cast<TypedAttr>(padAttr));
  Value slab = x;
  for (auto [s, halo] : llvm::zip(dims, halos)) {
    auto [lo, hi] = halo;
    const auto &axes = out.dimAxes[s.outDim];
    if (!axes.empty()) {
      slab = exchangeHalo(b, loc, slab, s.inDim, lo, hi, axes, padValue, spmd);
      continue;
    }
    // Whole on this dim: the op's own padding, locally.
    if (!lo && !hi)
      continue;
    auto type = cast<RankedTensorType>(slab.getType());
    SmallVector<OpFoldResult> los(type.getRank(), b.getIndexAttr(0)),
        his = los;
    los[s.inDim] = b.getIndexAttr(lo);
    his[s.inDim] = b.getIndexAttr(hi);
    SmallVector<int64_t> shape(type.getShape());
    shape[s.inDim] += lo + hi;
    slab = tensor::PadOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), slab, los,
        his, padValue);
  }
  if (pad)
    dead.push_back(pad);
  dead.append(gathers.begin(), gathers.end());
  return slab;
}

} // namespace

bool autoshard::isSpatiallySplitWindow(Operation *op,
                                       const TensorLayout &resultLayout) {
  if (!isWindowOp(op))
    return false;
  for (const SpatialDim &s : getSpatialDims(cast<linalg::LinalgOp>(op)))
    if (!resultLayout.dimAxes[s.outDim].empty())
      return true;
  return false;
}

LogicalResult autoshard::localiseSpatialWindow(linalg::LinalgOp op,
                                               const TensorLayout &out,
                                               const SpmdBuilder &spmd) {
  SmallVector<SpatialDim> dims = getSpatialDims(op);
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value input = op->getOperand(0);
  auto global = cast<RankedTensorType>(op->getResult(0).getType());
  for (const SpatialDim &s : dims)
    if (!out.dimAxes[s.outDim].empty() && out.hasUnevenDim(s.outDim))
      return op->emitError() << "splits its output dim " << s.outDim
                             << " unevenly, which --dist-partition cannot "
                                "give halos";
  SmallVector<Operation *> dead;
  Value local = tryHalo(b, loc, input, dims, global, out, spmd, dead);
  if (!local) {
    // The whole input is here: cut out this device's window.
    local = input;
    for (const SpatialDim &s : dims) {
      if (out.dimAxes[s.outDim].empty())
        continue;
      int64_t outRows = global.getDimSize(s.outDim) /
                        spmd.getMesh().getGroupSize(out.dimAxes[s.outDim]);
      Value first = spmd.buildShardOffset(b, loc, out, s.outDim,
                                          global.getDimSize(s.outDim));
      Value start = s.stride == 1 ? first
                                  : arith::MulIOp::create(
                                        b, loc, first,
                                        indexConst(b, loc, s.stride));
      local = slice(b, loc, local, s.inDim, start,
                    (outRows - 1) * s.stride + s.span());
    }
  }
  op->setOperand(0, local);
  for (Operation *d : dead)
    d->erase();
  return success();
}
