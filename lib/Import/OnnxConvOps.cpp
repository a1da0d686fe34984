//===- OnnxConvOps.cpp - ONNX convolutional-network ops ----------------===//
//
// Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool and
// BatchNormalization (inference and training) on NCHW tensors, imported to
// upstream linalg named ops (conv_2d_nchw_fchw, conv_2d_ngchw_gfchw,
// pooling_nchw_max/sum) on a tensor.pad of the input, so the sharding rules, the lowering and the
// kernels see one well-known op per layer. The bias, the average's divisor
// and batch norm's affine map are separate elementwise generics: a conv
// accumulating into a zero init can leave a partial sum (input-channel
// split), one accumulating into its bias could not. float16/bfloat16 nodes
// are these f32 ops between widening and one rounding (OnnxWidening.cpp).
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace autoshard::onnx_import;
using mlir::utils::IteratorType;

namespace {

/// The window of a 2-D conv or pool: kernel, strides, dilations, pads
/// (top, left, bottom, right) and the output's spatial size.
struct Window {
  int64_t kernel[2] = {1, 1};
  int64_t strides[2] = {1, 1};
  int64_t dilations[2] = {1, 1};
  int64_t padLow[2] = {0, 0}, padHigh[2] = {0, 0};
  int64_t out[2] = {1, 1};
  /// Part of padHigh that only ceil_mode's last window reads.
  int64_t ceilExtra[2] = {0, 0};
};

/// Reads kernel_shape (or `kernel` when the weight gives it), strides,
/// dilations, pads / auto_pad and ceil_mode for input spatial dims `in`.
FailureOr<Window> readWindow(NodeImporter &n, ArrayRef<int64_t> in,
                             std::optional<std::array<int64_t, 2>> kernel,
                             bool allowCeil) {
  Window w;
  auto twoInts = [&](StringRef name, int64_t *dst) -> LogicalResult {
    std::optional<std::vector<int64_t>> v = n.attrInts(name);
    if (!v)
      return success();
    if (v->size() != 2)
      return n.error() << "has " << name << " of " << v->size()
                       << " values; only 2-D windows are supported";
    for (int64_t i = 0; i < 2; ++i) {
      if ((*v)[i] < 1)
        return n.error() << "has a non-positive " << name;
      dst[i] = (*v)[i];
    }
    return success();
  };
  if (kernel) {
    w.kernel[0] = (*kernel)[0];
    w.kernel[1] = (*kernel)[1];
  } else if (!n.attrInts("kernel_shape")) {
    return n.error() << "has no kernel_shape";
  }
  if (failed(twoInts("kernel_shape", w.kernel)) ||
      failed(twoInts("strides", w.strides)) ||
      failed(twoInts("dilations", w.dilations)))
    return failure();
  if (kernel && (w.kernel[0] != (*kernel)[0] || w.kernel[1] != (*kernel)[1]))
    return n.error() << "has a kernel_shape that differs from the weight's";
  const onnx::AttributeProto *autoPad = n.attr("auto_pad");
  std::string mode = autoPad ? autoPad->s() : "NOTSET";
  int64_t ceil = n.attrInt("ceil_mode", 0);
  if (ceil && !allowCeil)
    return n.error() << "has ceil_mode = 1, which is not supported";
  for (int64_t i = 0; i < 2; ++i) {
    int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
    if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
      w.out[i] = (in[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total =
          std::max<int64_t>(0, (w.out[i] - 1) * w.strides[i] + span - in[i]);
      w.padLow[i] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padHigh[i] = total - w.padLow[i];
      continue;
    }
    if (mode != "NOTSET" && mode != "VALID")
      return n.error() << "has an unknown auto_pad '" << mode << "'";
    if (mode == "NOTSET") {
      if (std::optional<std::vector<int64_t>> pads = n.attrInts("pads")) {
        if (pads->size() != 4)
          return n.error() << "has pads of " << pads->size()
                           << " values; expected 4";
        if (llvm::any_of(*pads, [](int64_t p) { return p < 0; }))
          return n.error() << "has negative pads";
        w.padLow[i] = (*pads)[i];
        w.padHigh[i] = (*pads)[i + 2];
      }
    }
    int64_t padded = in[i] + w.padLow[i] + w.padHigh[i];
    if (padded < span)
      return n.error() << "has a window (" << span
                       << ") larger than its padded input (" << padded << ")";
    int64_t steps = padded - span;
    w.out[i] = (ceil ? (steps + w.strides[i] - 1) / w.strides[i]
                     : steps / w.strides[i]) +
               1;
    if (ceil) {
      // PyTorch/ONNX: the last window must start inside the input or the
      // low padding; the extra windows read the high padding.
      if ((w.out[i] - 1) * w.strides[i] >= in[i] + w.padLow[i])
        --w.out[i];
      w.ceilExtra[i] = std::max<int64_t>(
          0, (w.out[i] - 1) * w.strides[i] + span - padded);
      w.padHigh[i] += w.ceilExtra[i];
    }
  }
  return w;
}

/// `x` padded with `value` on its last two (spatial) dims; `x` itself when
/// unpadded.
Value padSpatial(NodeImporter &n, Value x, const Window &w, double value) {
  if (!w.padLow[0] && !w.padLow[1] && !w.padHigh[0] && !w.padHigh[1])
    return x;
  OpBuilder &b = n.getBuilder();
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getShape());
  int64_t rank = type.getRank(), first = rank - 2;
  SmallVector<OpFoldResult> low(rank, b.getIndexAttr(0)),
      high(rank, b.getIndexAttr(0));
  for (int64_t i = 0; i < 2; ++i) {
    shape[first + i] += w.padLow[i] + w.padHigh[i];
    low[first + i] = b.getIndexAttr(w.padLow[i]);
    high[first + i] = b.getIndexAttr(w.padHigh[i]);
  }
  Value pad = n.scalarConstant(b, value, ElemKind::F32);
  return tensor::PadOp::create(
      b, n.getLoc(), RankedTensorType::get(shape, type.getElementType()), x,
      low, high, pad);
}

SmallVector<int64_t> iota(int64_t n) {
  SmallVector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

/// `y` + per-channel `bias` (dim 1 of NCHW), as an elementwise generic.
Value addChannelVector(NodeImporter &n, Value y, const Val &bias,
                       int64_t biasInput) {
  OpBuilder &b = n.getBuilder();
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(y.getType());
  AffineMap ident = b.getMultiDimIdentityMap(4);
  AffineMap chan = AffineMap::get(4, 0, {b.getAffineDimExpr(1)}, ctx);
  SmallVector<IteratorType> par(4, IteratorType::parallel);
  return n
      .buildGeneric({GenericInput{y, ident, std::nullopt},
                     GenericInput{n.materialize(bias), chan,
                                  OperandSource{biasInput, {0}}}},
                    type.getShape(), ElemKind::F32, par, Value(), ident,
                    [](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
                      return arith::AddFOp::create(bb, l, a[0], a[1]);
                    })
      ->getResult(0);
}

/// Records `op`, a generic over the node's output, as the node's main op.
void setMainGeneric(NodeImporter &n, Operation *op,
                    ArrayRef<GenericInput> ins, int64_t rank) {
  n.main.op = op;
  n.main.operands.clear();
  for (const GenericInput &in : ins)
    n.main.operands.push_back(in.source);
  n.main.resultDims = iota(rank);
}

LogicalResult checkFloatNCHW(NodeImporter &n, const Val &x, StringRef what) {
  if (x.kind != ElemKind::F32)
    return n.error() << "expects a float " << what;
  if (x.rank() != 4)
    return n.error() << "expects a 4-D (N, C, H, W) " << what << ", got rank "
                     << x.rank() << "; only 2-D convolutions and pools are "
                                    "supported";
  return success();
}

LogicalResult convertConv(NodeImporter &n) {
  FailureOr<ElemKind> kind = widenHalfInputs(n, {0, 1, 2});
  if (failed(kind))
    return failure();
  const Val &x = n.in(0), &wt = n.in(1);
  if (failed(checkFloatNCHW(n, x, "input")) ||
      failed(checkFloatNCHW(n, wt, "weight")))
    return failure();
  int64_t group = n.attrInt("group", 1);
  int64_t batch = x.shape[0], cin = x.shape[1], cout = wt.shape[0];
  if (group < 1 || cin % group || cout % group)
    return n.error() << "has group " << group << ", which does not divide "
                     << "the input (" << cin << ") and output (" << cout
                     << ") channels";
  if (wt.shape[1] * group != cin)
    return n.error() << "has a weight with " << wt.shape[1]
                     << " input channels per group; the input has " << cin
                     << " channels in " << group << " groups";
  FailureOr<Window> w = readWindow(
      n, {x.shape[2], x.shape[3]},
      std::array<int64_t, 2>{wt.shape[2], wt.shape[3]}, /*allowCeil=*/false);
  if (failed(w))
    return failure();
  bool hasBias = n.hasInput(2);
  if (hasBias && (n.in(2).rank() != 1 || n.in(2).shape[0] != cout ||
                  n.in(2).kind != ElemKind::F32))
    return n.error() << "expects a float bias of shape [" << cout << "]";

  OpBuilder &b = n.getBuilder();
  Location loc = n.getLoc();
  Value weight = n.materialize(wt);
  NamedAttribute attrs[] = {
      b.getNamedAttr("strides",
                     b.getI64TensorAttr({w->strides[0], w->strides[1]})),
      b.getNamedAttr("dilations",
                     b.getI64TensorAttr({w->dilations[0], w->dilations[1]}))};
  SmallVector<int64_t> outShape = {batch, cout, w->out[0], w->out[1]};
  Value y;
  if (group == 1) {
    Value input = padSpatial(n, n.materialize(x), *w, 0.0);
    Value init = n.zeroFilled(outShape, ElemKind::F32);
    auto op = linalg::Conv2DNchwFchwOp::create(
        b, loc, TypeRange{init.getType()}, ValueRange{input, weight},
        ValueRange{init}, attrs);
    n.main.op = op;
    n.main.operands = {OperandSource{0, iota(4)}, OperandSource{1, iota(4)}};
    n.main.resultDims = iota(4);
    y = op.getResult(0);
  } else {
    // Grouped (depthwise when group == channels): a group dim split off the
    // channels of input, weight and output; the pad right before the conv,
    // where a spatial split finds it (lib/Partition/Halo.cpp).
    int64_t h = x.shape[2], wd = x.shape[3];
    Value gin = padSpatial(
        n,
        n.reshapeTo(n.materialize(x), {batch, cin, h, wd},
                    {batch, group, cin / group, h, wd}),
        *w, 0.0);
    Value gwt = n.reshapeTo(weight, wt.shape,
                            {group, cout / group, wt.shape[1], wt.shape[2],
                             wt.shape[3]});
    SmallVector<int64_t> gout = {batch, group, cout / group, w->out[0],
                                 w->out[1]};
    Value init = n.zeroFilled(gout, ElemKind::F32);
    auto op = linalg::Conv2DNgchwGfchwOp::create(
        b, loc, TypeRange{init.getType()}, ValueRange{gin, gwt},
        ValueRange{init}, attrs);
    // Channels are group-major, so a node layout's channel split is the
    // group dim's (the channel-in-group dims stay whole).
    n.main.op = op;
    n.main.operands = {OperandSource{0, {0, 1, -1, 2, 3}},
                       OperandSource{1, {0, -1, 1, 2, 3}}};
    n.main.resultDims = SmallVector<int64_t>{0, 1, -1, 2, 3};
    y = n.reshapeTo(op.getResult(0), gout, outShape);
  }
  if (hasBias)
    y = addChannelVector(n, y, n.in(2), 2);
  n.setOutput(0, narrowFromF32(n, y, *kind), *kind);
  return success();
}

/// ConvTranspose's window per spatial dim: kernel, stride, dilation and
/// the padding its equivalent convolution reads (low, high: may be negative,
/// a crop) and its output size.
struct TransposedWindow {
  int64_t kernel[2], strides[2] = {1, 1}, dilations[2] = {1, 1};
  int64_t low[2], high[2], out[2];
};

/// Reads strides, dilations, pads, output_padding, output_shape and auto_pad
/// as ONNX defines them: out = s * (in - 1) + output_padding + (k - 1) * d +
/// 1 - pads, or output_shape with the padding it implies (its larger half at
/// the end for SAME_UPPER, at the start otherwise).
FailureOr<TransposedWindow> readTransposedWindow(NodeImporter &n,
                                                 ArrayRef<int64_t> in,
                                                 ArrayRef<int64_t> kernel) {
  TransposedWindow w;
  auto ints = [&](StringRef name, int64_t count, int64_t min,
                  SmallVector<int64_t> dflt)
      -> FailureOr<SmallVector<int64_t>> {
    std::optional<std::vector<int64_t>> v = n.attrInts(name);
    if (!v)
      return dflt;
    if (int64_t(v->size()) != count)
      return n.error() << "has " << name << " of " << v->size()
                       << " values; expected " << count
                       << " (only 2-D ConvTranspose is supported)";
    if (llvm::any_of(*v, [&](int64_t x) { return x < min; }))
      return n.error() << "has " << name << " below " << min;
    return SmallVector<int64_t>(v->begin(), v->end());
  };
  auto strides = ints("strides", 2, 1, {1, 1});
  auto dilations = ints("dilations", 2, 1, {1, 1});
  auto pads = ints("pads", 4, 0, {0, 0, 0, 0});
  auto outPad = ints("output_padding", 2, 0, {0, 0});
  auto kernelShape = ints("kernel_shape", 2, 1, {kernel[0], kernel[1]});
  if (failed(strides) || failed(dilations) || failed(pads) || failed(outPad) ||
      failed(kernelShape))
    return failure();
  if ((*kernelShape)[0] != kernel[0] || (*kernelShape)[1] != kernel[1])
    return n.error() << "has a kernel_shape that differs from the weight's";
  std::optional<std::vector<int64_t>> outShape = n.attrInts("output_shape");
  const onnx::AttributeProto *autoPad = n.attr("auto_pad");
  std::string mode = autoPad ? autoPad->s() : "NOTSET";
  if (mode != "NOTSET" && mode != "VALID" && mode != "SAME_UPPER" &&
      mode != "SAME_LOWER")
    return n.error() << "has an unknown auto_pad '" << mode << "'";
  if (outShape && outShape->size() != 2 && outShape->size() != 4)
    return n.error() << "has output_shape of " << outShape->size()
                     << " values; expected 2 (H, W)";
  for (int64_t i = 0; i < 2; ++i) {
    int64_t s = (*strides)[i], d = (*dilations)[i];
    int64_t span = (kernel[i] - 1) * d + 1;
    int64_t full = s * (in[i] - 1) + (*outPad)[i] + span;
    int64_t padLow = (*pads)[i], padHigh = (*pads)[i + 2];
    if (outShape || mode == "SAME_UPPER" || mode == "SAME_LOWER") {
      int64_t want = outShape ? (*outShape)[outShape->size() - 2 + i]
                              : in[i] * s;
      // A negative total (an output_shape past the full output) extends
      // the output like output_padding; halves rounded down, as ONNX's
      // reference does.
      int64_t total = full - want;
      int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      padLow = mode == "SAME_UPPER" ? half : total - half;
      padHigh = total - padLow;
    }
    w.kernel[i] = kernel[i];
    w.strides[i] = s;
    w.dilations[i] = d;
    w.out[i] = full - padLow - padHigh;
    if (w.out[i] < 1)
      return n.error() << "has an empty output (pads exceed the output)";
    // The equivalent convolution: stride-1 over the input with s - 1 zeros
    // between elements, padded by span - 1 less the pads (output_padding
    // at the end).
    w.low[i] = span - 1 - padLow;
    w.high[i] = span - 1 - padHigh + (*outPad)[i];
  }
  return w;
}

/// ConvTranspose (2-D, group, dilation, output_padding, output_shape): the
/// convolution of the zero-inserted, padded input (one strided
/// tensor.insert_slice into zeros, cropped where the pads exceed the
/// kernel's reach) with the weight flipped and its in/out channels swapped
/// (a generic). So the same conv ops, kernels and sharding rules run it: a
/// batch split passes through the insert, an output-channel split is the
/// flipped weight's.
LogicalResult convertConvTranspose(NodeImporter &n) {
  FailureOr<ElemKind> kind = widenHalfInputs(n, {0, 1, 2});
  if (failed(kind))
    return failure();
  const Val &x = n.in(0), &wt = n.in(1);
  if (failed(checkFloatNCHW(n, x, "input")) ||
      failed(checkFloatNCHW(n, wt, "weight")))
    return failure();
  int64_t group = n.attrInt("group", 1);
  int64_t batch = x.shape[0], cin = x.shape[1];
  if (group < 1 || wt.shape[0] != cin || cin % group)
    return n.error() << "has a weight of " << wt.shape[0]
                     << " input channels in group " << group
                     << "; the input has " << cin;
  int64_t cout = wt.shape[1] * group, kh = wt.shape[2], kw = wt.shape[3];
  FailureOr<TransposedWindow> w =
      readTransposedWindow(n, {x.shape[2], x.shape[3]}, {kh, kw});
  if (failed(w))
    return failure();
  if (n.hasInput(2) && (n.in(2).rank() != 1 || n.in(2).shape[0] != cout ||
                        n.in(2).kind != ElemKind::F32))
    return n.error() << "expects a float bias of shape [" << cout << "]";
  OpBuilder &b = n.getBuilder();
  Location loc = n.getLoc();
  MLIRContext *ctx = b.getContext();

  // Zero-inserted and padded (the non-negative parts of low/high).
  SmallVector<int64_t> zShape = {batch, cin, 0, 0};
  SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0)),
      sizes, steps(4, b.getIndexAttr(1));
  for (int64_t d : x.shape)
    sizes.push_back(b.getIndexAttr(d));
  for (int64_t i = 0; i < 2; ++i) {
    zShape[2 + i] = (x.shape[2 + i] - 1) * w->strides[i] + 1 +
                    std::max<int64_t>(w->low[i], 0) +
                    std::max<int64_t>(w->high[i], 0);
    offsets[2 + i] = b.getIndexAttr(std::max<int64_t>(w->low[i], 0));
    steps[2 + i] = b.getIndexAttr(w->strides[i]);
  }
  Value z = tensor::InsertSliceOp::create(b, loc, n.materialize(x),
                                          n.zeroFilled(zShape, ElemKind::F32),
                                          offsets, sizes, steps)
                .getResult();
  if (w->low[0] < 0 || w->low[1] < 0 || w->high[0] < 0 || w->high[1] < 0) {
    SmallVector<int64_t> cropShape(zShape);
    SmallVector<OpFoldResult> cropOffsets(4, b.getIndexAttr(0)), cropSizes,
        ones(4, b.getIndexAttr(1));
    for (int64_t i = 0; i < 2; ++i) {
      cropShape[2 + i] += std::min<int64_t>(w->low[i], 0) +
                          std::min<int64_t>(w->high[i], 0);
      cropOffsets[2 + i] = b.getIndexAttr(-std::min<int64_t>(w->low[i], 0));
    }
    for (int64_t d : cropShape)
      cropSizes.push_back(b.getIndexAttr(d));
    z = tensor::ExtractSliceOp::create(
            b, loc, RankedTensorType::get(cropShape, b.getF32Type()), z,
            cropOffsets, cropSizes, ones)
            .getResult();
    zShape = cropShape;
  }

  // The weight [Cin, Cout/g, kh, kw] as a convolution's: per group
  // [Cout/g, Cin/g, kh, kw], flipped in both spatial dims.
  int64_t cinG = cin / group, coutG = cout / group;
  SmallVector<int64_t> gw = {group, coutG, cinG, kh, kw};
  Value w5 = n.reshapeTo(n.materialize(wt), wt.shape,
                         {group, cinG, coutG, kh, kw});
  AffineExpr g = b.getAffineDimExpr(0), o = b.getAffineDimExpr(1),
             c = b.getAffineDimExpr(2), a = b.getAffineDimExpr(3),
             bb = b.getAffineDimExpr(4);
  AffineMap flip = AffineMap::get(5, 0, {g, c, o, kh - 1 - a, kw - 1 - bb},
                                  ctx);
  SmallVector<IteratorType> par5(5, IteratorType::parallel);
  Value flipped =
      n.buildGeneric({GenericInput{w5, flip, std::nullopt}}, gw,
                     ElemKind::F32, par5, Value(), b.getMultiDimIdentityMap(5),
                     [](OpBuilder &, Location, ArrayRef<Value> v) {
                       return v[0];
                     })
          ->getResult(0);

  NamedAttribute attrs[] = {
      b.getNamedAttr("strides", b.getI64TensorAttr({1, 1})),
      b.getNamedAttr("dilations", b.getI64TensorAttr(
                                      {w->dilations[0], w->dilations[1]}))};
  SmallVector<int64_t> outShape = {batch, cout, w->out[0], w->out[1]};
  Value y;
  if (group == 1) {
    Value w4 = n.reshapeTo(flipped, gw, {cout, cin, kh, kw});
    Value init = n.zeroFilled(outShape, ElemKind::F32);
    auto op = linalg::Conv2DNchwFchwOp::create(
        b, loc, TypeRange{init.getType()}, ValueRange{z, w4}, ValueRange{init},
        attrs);
    n.main.op = op;
    n.main.operands = {OperandSource{0, {0, 1, -1, -1}},
                       OperandSource{1, {1, 0, -1, -1}}};
    n.main.resultDims = iota(4);
    y = op.getResult(0);
  } else {
    Value gin = n.reshapeTo(z, zShape,
                            {batch, group, cinG, zShape[2], zShape[3]});
    SmallVector<int64_t> gout = {batch, group, coutG, w->out[0], w->out[1]};
    Value init = n.zeroFilled(gout, ElemKind::F32);
    auto op = linalg::Conv2DNgchwGfchwOp::create(
        b, loc, TypeRange{init.getType()}, ValueRange{gin, flipped},
        ValueRange{init}, attrs);
    n.main.op = op;
    n.main.operands = {OperandSource{0, {0, 1, -1, -1, -1}},
                       OperandSource{1, {0, 1, -1, -1, -1}}};
    n.main.resultDims = SmallVector<int64_t>{0, 1, -1, 2, 3};
    y = n.reshapeTo(op.getResult(0), gout, outShape);
  }
  if (n.hasInput(2))
    y = addChannelVector(n, y, n.in(2), 2);
  n.setOutput(0, narrowFromF32(n, y, *kind), *kind);
  return success();
}

/// AveragePool's sums `y` divided per output position by the window's size,
/// less the padded positions when count_include_pad = 0 (ceil_mode's extra
/// high padding never counts, as in PyTorch). The count is separable, one
/// factor an axis; the [outH, outW] table of reciprocals counts against the
/// fold budget, and past it the program multiplies the two axes' counts (a
/// [16384, 16384] image at stride 1 held 2 GiB of host doubles).
FailureOr<Value> divideByWindow(NodeImporter &n, Value y,
                                ArrayRef<int64_t> inShape, const Window &w,
                                ArrayRef<int64_t> outShape) {
  bool includePad = n.attrInt("count_include_pad", 0) != 0;
  std::vector<double> counts[2];
  for (int64_t i = 0; i < 2; ++i) {
    if (!n.reserveFold({w.out[i]}))
      return n.error() << "has " << w.out[i] << " output positions along "
                       << "spatial axis " << i << ", past the import's fold "
                       << "budget for the divisors";
    for (int64_t o = 0; o < w.out[i]; ++o) {
      int64_t start = o * w.strides[i] - w.padLow[i];
      int64_t end = start + w.kernel[i];
      int64_t limit = inShape[2 + i] +
                      (includePad ? w.padHigh[i] - w.ceilExtra[i] : 0);
      int64_t lo = includePad ? std::max<int64_t>(start, -w.padLow[i])
                              : std::max<int64_t>(start, 0);
      counts[i].push_back(
          double(std::max<int64_t>(1, std::min(end, limit) - lo)));
    }
  }
  OpBuilder &b = n.getBuilder();
  MLIRContext *ctx = b.getContext();
  AffineMap ident = b.getMultiDimIdentityMap(4);
  SmallVector<IteratorType> par(4, IteratorType::parallel);
  auto mul = [](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
    return arith::MulFOp::create(bb, l, a[0], a[1]);
  };
  // Built directly: materialize() caches by HostTensor address, which a
  // temporary would hand on to the next one.
  auto constant = [&](ArrayRef<int64_t> shape, ArrayRef<double> v) -> Value {
    return arith::ConstantOp::create(
        b, n.getLoc(),
        floatElements(n.tensorType(shape, ElemKind::F32), v));
  };
  if (n.reserveFold({w.out[0], w.out[1]})) {
    std::vector<double> div;
    div.reserve(w.out[0] * w.out[1]);
    for (double c0 : counts[0])
      for (double c1 : counts[1])
        div.push_back(1.0 / (c0 * c1));
    AffineMap hw = AffineMap::get(
        4, 0, {b.getAffineDimExpr(2), b.getAffineDimExpr(3)}, ctx);
    Value table = constant({w.out[0], w.out[1]}, div);
    return n
        .buildGeneric({GenericInput{y, ident, std::nullopt},
                       GenericInput{table, hw, std::nullopt}},
                      outShape, ElemKind::F32, par, Value(), ident, mul)
        ->getResult(0);
  }
  SmallVector<GenericInput> ins = {GenericInput{y, ident, std::nullopt}};
  for (int64_t i = 0; i < 2; ++i)
    ins.push_back(GenericInput{
        constant({w.out[i]}, counts[i]),
        AffineMap::get(4, 0, {b.getAffineDimExpr(2 + i)}, ctx),
        std::nullopt});
  return n
      .buildGeneric(ins, outShape, ElemKind::F32, par, Value(), ident,
                    [&](OpBuilder &bb, Location l, ArrayRef<Value> a) {
                      Value count = arith::MulFOp::create(bb, l, a[1], a[2]);
                      Value one = n.scalarConstant(bb, 1.0, ElemKind::F32);
                      Value inv = arith::DivFOp::create(bb, l, one, count);
                      return mul(bb, l, {a[0], inv});
                    })
      ->getResult(0);
}

/// MaxPool and AveragePool: a pooling_nchw_max/sum over the padded input
/// (-inf / 0 padding); the average divides by the window's size, or with
/// count_include_pad = 0 by the count of real elements (a constant).
LogicalResult convertPool(NodeImporter &n, StringRef opType) {
  FailureOr<ElemKind> kind = widenHalfInputs(n, {});
  if (failed(kind))
    return failure();
  const Val &x = n.in(0);
  if (failed(checkFloatNCHW(n, x, "input")))
    return failure();
  bool isMax = opType == "MaxPool";
  if (isMax && n.getNode().output_size() > 1 &&
      !n.getNode().output(1).empty())
    return n.error() << "asks for the Indices output, which is not supported";
  if (isMax && n.attrInt("storage_order", 0) != 0)
    return n.error() << "has storage_order = 1, which is not supported";
  if (!isMax && n.attrInts("dilations") &&
      llvm::any_of(*n.attrInts("dilations"), [](int64_t d) { return d != 1; }))
    return n.error() << "has dilations, which AveragePool does not support";
  FailureOr<Window> w = readWindow(n, {x.shape[2], x.shape[3]}, std::nullopt,
                                   /*allowCeil=*/true);
  if (failed(w))
    return failure();
  OpBuilder &b = n.getBuilder();
  Location loc = n.getLoc();
  double lowest = -std::numeric_limits<double>::infinity();
  Value input = padSpatial(n, n.materialize(x), *w, isMax ? lowest : 0.0);
  SmallVector<int64_t> outShape = {x.shape[0], x.shape[1], w->out[0],
                                   w->out[1]};
  // The window tensor only gives the pool its kernel's shape.
  Value window = n.emptyTensor({w->kernel[0], w->kernel[1]}, ElemKind::F32);
  Value init = n.emptyTensor(outShape, ElemKind::F32);
  init = linalg::FillOp::create(
             b, loc, n.scalarConstant(b, isMax ? lowest : 0.0, ElemKind::F32),
             init)
             .getResult(0);
  NamedAttribute attrs[] = {
      b.getNamedAttr("strides",
                     b.getI64TensorAttr({w->strides[0], w->strides[1]})),
      b.getNamedAttr("dilations",
                     b.getI64TensorAttr({w->dilations[0], w->dilations[1]}))};
  Operation *pool;
  if (isMax)
    pool = linalg::PoolingNchwMaxOp::create(b, loc, TypeRange{init.getType()},
                                            ValueRange{input, window},
                                            ValueRange{init}, attrs);
  else
    pool = linalg::PoolingNchwSumOp::create(b, loc, TypeRange{init.getType()},
                                            ValueRange{input, window},
                                            ValueRange{init}, attrs);
  n.main.op = pool;
  n.main.operands = {OperandSource{0, iota(4)}, std::nullopt};
  n.main.resultDims = iota(4);
  Value y = pool->getResult(0);
  if (!isMax) {
    FailureOr<Value> mean = divideByWindow(n, y, x.shape, *w, outShape);
    if (failed(mean))
      return failure();
    y = *mean;
  }
  n.setOutput(0, narrowFromF32(n, y, *kind), *kind);
  return success();
}

LogicalResult convertGlobalAveragePool(NodeImporter &n) {
  FailureOr<ElemKind> kind = widenHalfInputs(n, {});
  if (failed(kind))
    return failure();
  const Val &x = n.in(0);
  if (failed(checkFloatNCHW(n, x, "input")))
    return failure();
  OpBuilder &b = n.getBuilder();
  Value sum = n.reduce(n.materialize(x), x.shape, {2, 3}, ElemKind::F32,
                       [](OpBuilder &bb, Location l, ArrayRef<Value> a) {
                         return Value(arith::AddFOp::create(bb, l, a[0], a[1]));
                       });
  double inv = 1.0 / double(x.shape[2] * x.shape[3]);
  AffineMap ident = b.getMultiDimIdentityMap(2);
  SmallVector<IteratorType> par(2, IteratorType::parallel);
  Value mean =
      n.buildGeneric({GenericInput{sum, ident, std::nullopt}},
                     {x.shape[0], x.shape[1]}, ElemKind::F32, par, Value(),
                     ident,
                     [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
                       return arith::MulFOp::create(
                           bb, l, a[0],
                           n.scalarConstant(bb, inv, ElemKind::F32));
                     })
          ->getResult(0);
  Value y = n.reshapeTo(mean, {x.shape[0], x.shape[1]},
                        {x.shape[0], x.shape[1], 1, 1});
  n.setOutput(0, narrowFromF32(n, y, *kind), *kind);
  return success();
}

/// Training form (training_mode = 1): the statistics of this batch, over
/// every dim but the channels, as two reductions (the sum, then the sum of
/// squared deviations), so a batch split leaves each a partial sum that one
/// all_reduce completes: SyncBatchNorm. Outputs 1 and 2 are the running
/// statistics, `momentum * input + (1 - momentum) * batch`, with the batch's
/// biased variance as ONNX defines it (PyTorch's own running_var update uses
/// the unbiased one).
LogicalResult convertBatchNormTraining(NodeImporter &n, ElemKind kind,
                                       ElemKind statKind) {
  const Val &x = n.in(0);
  int64_t rank = x.rank(), channels = x.shape[1], count = 1;
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d)
    if (d != 1) {
      axes.push_back(d);
      count *= x.shape[d];
    }
  float eps = n.attrFloat("epsilon", 1e-5f);
  double momentum = n.attrFloat("momentum", 0.9f);
  double invCount = 1.0 / double(count);
  OpBuilder &b = n.getBuilder();
  MLIRContext *ctx = b.getContext();
  AffineMap ident = b.getMultiDimIdentityMap(rank);
  AffineMap chan = AffineMap::get(rank, 0, {b.getAffineDimExpr(1)}, ctx);
  SmallVector<IteratorType> par(rank, IteratorType::parallel);
  auto constant = [&](OpBuilder &bb, double v) {
    return n.scalarConstant(bb, v, ElemKind::F32);
  };
  Value xv = n.materialize(x);
  Value sum = n.reduce(xv, x.shape, axes, ElemKind::F32,
                       [](OpBuilder &bb, Location l, ArrayRef<Value> a) {
                         return Value(arith::AddFOp::create(bb, l, a[0], a[1]));
                       });
  Value centred =
      n.buildGeneric({GenericInput{xv, ident, OperandSource{0, iota(rank)}},
                      GenericInput{sum, chan, std::nullopt}},
                     x.shape, ElemKind::F32, par, Value(), ident,
                     [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
                       Value mean = arith::MulFOp::create(
                           bb, l, a[1], constant(bb, invCount));
                       return arith::SubFOp::create(bb, l, a[0], mean);
                     })
          ->getResult(0);
  Value sq = n.reduce(centred, x.shape, axes, ElemKind::F32,
                      [](OpBuilder &bb, Location l, ArrayRef<Value> a) {
                        Value p = arith::MulFOp::create(bb, l, a[0], a[0]);
                        return Value(arith::AddFOp::create(bb, l, a[1], p));
                      });
  SmallVector<GenericInput> ins = {
      GenericInput{centred, ident, OperandSource{0, iota(rank)}},
      GenericInput{sq, chan, std::nullopt},
      GenericInput{n.materialize(n.in(1)), chan, OperandSource{1, {0}}},
      GenericInput{n.materialize(n.in(2)), chan, OperandSource{2, {0}}}};
  Operation *op = n.buildGeneric(
      ins, x.shape, ElemKind::F32, par, Value(), ident,
      [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
        Value var = arith::MulFOp::create(bb, l, a[1], constant(bb, invCount));
        Value inv = math::RsqrtOp::create(
            bb, l, arith::AddFOp::create(bb, l, var, constant(bb, eps)));
        Value scaled = arith::MulFOp::create(
            bb, l, a[0], arith::MulFOp::create(bb, l, a[2], inv));
        return arith::AddFOp::create(bb, l, scaled, a[3]);
      });
  setMainGeneric(n, op, ins, rank);
  // The node's layout for X also splits the two reductions and the centring
  // (each reads X or X - mean, dim for dim): a batch split then keeps the
  // batch split, each sum partial, the statistics all-reduced (the
  // statistics themselves replicated: no node layout reaches them).
  OperandSource xDims{0, iota(rank)};
  n.main.more = {MainOp{sum.getDefiningOp(), {xDims}, std::nullopt, {}},
                 MainOp{centred.getDefiningOp(), {xDims, std::nullopt},
                        std::nullopt, {}},
                 MainOp{sq.getDefiningOp(), {xDims}, std::nullopt, {}}};
  n.setOutput(0, narrowFromF32(n, op->getResult(0), kind), kind);
  // Running statistics: per-channel generics of the input statistics and
  // this batch's.
  AffineMap vec = b.getMultiDimIdentityMap(1);
  SmallVector<IteratorType> vecPar(1, IteratorType::parallel);
  for (int64_t o : {1, 2}) {
    if (o >= n.getNode().output_size() || n.getNode().output(o).empty())
      continue;
    int64_t input = o == 1 ? 3 : 4;
    Value stat =
        n.buildGeneric(
             {GenericInput{n.materialize(n.in(input)), vec,
                           OperandSource{input, {0}}},
              GenericInput{o == 1 ? sum : sq, vec, std::nullopt}},
             {channels}, ElemKind::F32, vecPar, Value(), vec,
             [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
               Value old = arith::MulFOp::create(bb, l, a[0],
                                                 constant(bb, momentum));
               Value now = arith::MulFOp::create(
                   bb, l, a[1], constant(bb, (1.0 - momentum) * invCount));
               return arith::AddFOp::create(bb, l, old, now);
             })
            ->getResult(0);
    n.setOutput(o, narrowFromF32(n, stat, statKind), statKind);
  }
  return success();
}

/// y = (x - mean) * scale / sqrt(var + eps) + B, per channel: the inference
/// form with the given statistics, or the training form's batch statistics.
LogicalResult convertBatchNorm(NodeImporter &n) {
  if (n.numInputs() < 5)
    return n.error() << "expects 5 inputs (X, scale, B, mean, var)";
  // Opset 15 lets scale and B (T1) and mean and var (T2) differ from X's
  // type; each output keeps its input's type.
  ElemKind statKind = n.in(3).kind;
  FailureOr<ElemKind> kind = widenHalfInputs(n, {});
  if (failed(kind))
    return failure();
  const Val &x = n.in(0);
  if (x.kind != ElemKind::F32 || x.rank() < 2)
    return n.error() << "expects a float input of rank >= 2";
  int64_t rank = x.rank(), channels = x.shape[1];
  for (int64_t i = 1; i < 5; ++i)
    if (n.in(i).rank() != 1 || n.in(i).shape[0] != channels ||
        n.in(i).kind != ElemKind::F32)
      return n.error() << "expects input " << i << " of shape [" << channels
                       << "]";
  bool wantsStats =
      n.getNode().output_size() > 1 &&
      llvm::any_of(llvm::drop_begin(n.getNode().output()),
                   [](const std::string &o) { return !o.empty(); });
  // Before opset 14 the running statistics as outputs meant training (the
  // attribute came with opset 14).
  bool training = n.attrInt("training_mode", 0) != 0 ||
                  (n.getOpset() < 14 && wantsStats);
  if (n.getNode().output_size() > 3 &&
      llvm::any_of(llvm::drop_begin(n.getNode().output(), 3),
                   [](const std::string &o) { return !o.empty(); }))
    return n.error() << "asks for saved_mean / saved_var (opset < 14), "
                        "which are not supported";
  if (training)
    return convertBatchNormTraining(n, *kind, statKind);
  if (wantsStats)
    return n.error() << "asks for the running statistics outside training "
                        "mode (training_mode = 0), which ONNX does not define";
  float eps = n.attrFloat("epsilon", 1e-5f);
  OpBuilder &b = n.getBuilder();
  AffineMap ident = b.getMultiDimIdentityMap(rank);
  AffineMap chan = AffineMap::get(rank, 0, {b.getAffineDimExpr(1)},
                                  b.getContext());
  SmallVector<GenericInput> ins = {
      GenericInput{n.materialize(x), ident, OperandSource{0, iota(rank)}}};
  for (int64_t i = 1; i < 5; ++i)
    ins.push_back(GenericInput{n.materialize(n.in(i)), chan,
                               OperandSource{i, {0}}});
  SmallVector<IteratorType> par(rank, IteratorType::parallel);
  Operation *op = n.buildGeneric(
      ins, x.shape, ElemKind::F32, par, Value(), ident,
      [&](OpBuilder &bb, Location l, ArrayRef<Value> a) -> Value {
        Value var = arith::AddFOp::create(
            bb, l, a[4], n.scalarConstant(bb, eps, ElemKind::F32));
        Value inv = math::RsqrtOp::create(bb, l, var);
        Value centred = arith::SubFOp::create(bb, l, a[0], a[3]);
        Value scaled = arith::MulFOp::create(
            bb, l, centred, arith::MulFOp::create(bb, l, a[1], inv));
        return arith::AddFOp::create(bb, l, scaled, a[2]);
      });
  setMainGeneric(n, op, ins, rank);
  n.setOutput(0, narrowFromF32(n, op->getResult(0), *kind), *kind);
  return success();
}

} // namespace

void autoshard::onnx_import::registerConvOps(OpTable &t) {
  t["Conv"] = [](NodeImporter &n, StringRef) { return convertConv(n); };
  t["ConvTranspose"] = [](NodeImporter &n, StringRef) {
    return convertConvTranspose(n);
  };
  t["MaxPool"] = [](NodeImporter &n, StringRef op) {
    return convertPool(n, op);
  };
  t["AveragePool"] = t["MaxPool"];
  t["GlobalAveragePool"] = [](NodeImporter &n, StringRef) {
    return convertGlobalAveragePool(n);
  };
  t["BatchNormalization"] = [](NodeImporter &n, StringRef) {
    return convertBatchNorm(n);
  };
}
