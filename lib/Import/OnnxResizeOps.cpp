//===- OnnxResizeOps.cpp - Resize: nearest, linear and cubic resampling ---===//
//
// Resize is separable: each resized axis is a weighted sum of a few input
// elements along that axis (1 tap for nearest, 2 for linear, 4 for cubic).
// Shapes and scales are static, so the taps' indices and weights are
// computed here, at import time, exactly as ONNX's reference implementation
// picks them, and form an [out, in] interpolation matrix; the axis is then
// a contraction with it (a matmul-like linalg.generic), which propagation
// splits like a matmul: batch, channel and spatial splits, no gathers of
// the input beyond what a matmul's K dim needs.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace autoshard::onnx_import;
using mlir::utils::IteratorType;

namespace {

/// How one axis is resampled: output j is sum_k weight[k][j] *
/// x[index[k][j]] + bias[j].
struct AxisPlan {
  std::vector<std::vector<int64_t>> index;
  std::vector<std::vector<double>> weight;
  std::vector<double> bias;
  bool hasBias = false;
};

struct ResizeAttrs {
  std::string mode, coordMode, nearestMode;
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolation = 0.0;
};

/// The input coordinate of output `x` (ONNX's get_original_coordinate);
/// nullopt: outside the crop (tf_crop_and_resize extrapolates).
std::optional<double> originalCoord(const ResizeAttrs &a, double x,
                                    double scale, int64_t outLen, int64_t inLen,
                                    double roiStart, double roiEnd) {
  double outW = scale * double(inLen);
  const std::string &m = a.coordMode;
  if (m == "align_corners")
    return outW == 1 ? 0.0 : x * double(inLen - 1) / (outW - 1);
  if (m == "asymmetric")
    return x / scale;
  if (m == "tf_half_pixel_for_nn") // opset 11 only
    return (x + 0.5) / scale;
  if (m == "pytorch_half_pixel")
    return outW == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (m == "half_pixel_symmetric") {
    double offset = double(inLen) / 2 * (1 - double(outLen) / outW);
    return offset + (x + 0.5) / scale - 0.5;
  }
  if (m == "tf_crop_and_resize") {
    double span = (roiEnd - roiStart) * double(inLen - 1);
    double c = outW == 1 ? span / 2 : x * span / (outW - 1);
    c += roiStart * double(inLen - 1);
    if (c < 0 || c > double(inLen - 1))
      return std::nullopt;
    return c;
  }
  return (x + 0.5) / scale - 0.5; // half_pixel
}

/// The taps' coefficients for the fractional position `ratio` in (0, 1].
std::vector<double> coefficients(const ResizeAttrs &a, double ratio) {
  if (a.mode == "nearest") {
    if (ratio == 1.0)
      return {0, 1};
    const std::string &m = a.nearestMode;
    if (m == "round_prefer_ceil")
      return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (m == "floor")
      return {1, 0};
    if (m == "ceil")
      return {0, 1};
    return {double(ratio <= 0.5), double(ratio > 0.5)};
  }
  if (a.mode == "linear")
    return {1 - ratio, ratio};
  double A = a.cubicA, r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
  return {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A,
          ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
          ((A + 2) * q - (A + 3)) * q * q + 1,
          ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A};
}

/// The taps of one output position, as the reference picks them: the n
/// positions nearest `c` in the input padded by ceil(n/2) edge copies (ties
/// to the lower), so a window past the border repeats the edge element.
void addTaps(const ResizeAttrs &a, double c, int64_t inLen,
             std::vector<std::pair<int64_t, double>> &taps) {
  double fl = std::floor(c);
  double ratio = c == fl ? 1.0 : c - fl;
  std::vector<double> coeffs = coefficients(a, ratio);
  int64_t n = coeffs.size(), pad = (n + 1) / 2, limit = inLen + 2 * pad;
  double cp = c + double(pad);
  std::vector<int64_t> cand;
  int64_t lo = std::max<int64_t>(0, int64_t(std::floor(cp)) - n),
          hi = std::min<int64_t>(limit, int64_t(std::floor(cp)) + n + 1);
  for (int64_t i = lo; i < hi; ++i)
    cand.push_back(i);
  std::stable_sort(cand.begin(), cand.end(), [&](int64_t p, int64_t q) {
    return std::abs(cp - double(p)) < std::abs(cp - double(q));
  });
  cand.resize(std::min<size_t>(cand.size(), n));
  std::sort(cand.begin(), cand.end());
  if (a.excludeOutside) {
    double sum = 0;
    for (size_t k = 0; k < cand.size(); ++k) {
      int64_t orig = cand[k] - pad;
      if (orig < 0 || orig >= inLen)
        coeffs[k] = 0;
      sum += coeffs[k];
    }
    for (double &w : coeffs)
      w /= sum;
  }
  for (size_t k = 0; k < cand.size(); ++k) {
    int64_t at = std::clamp<int64_t>(cand[k] - pad, 0, inLen - 1);
    if (coeffs[k] == 0)
      continue;
    auto same = llvm::find_if(taps, [&](auto &t) { return t.first == at; });
    if (same != taps.end())
      same->second += coeffs[k];
    else
      taps.push_back({at, coeffs[k]});
  }
}

AxisPlan planAxis(const ResizeAttrs &a, int64_t inLen, int64_t outLen,
                  double scale, double roiStart, double roiEnd) {
  std::vector<std::vector<std::pair<int64_t, double>>> perOut(outLen);
  AxisPlan plan;
  plan.bias.assign(outLen, 0.0);
  size_t width = 1;
  for (int64_t j = 0; j < outLen; ++j) {
    std::optional<double> c =
        originalCoord(a, double(j), scale, outLen, inLen, roiStart, roiEnd);
    if (!c) {
      plan.bias[j] = a.extrapolation;
      plan.hasBias |= a.extrapolation != 0;
      continue;
    }
    addTaps(a, *c, inLen, perOut[j]);
    width = std::max(width, perOut[j].size());
  }
  plan.index.assign(width, std::vector<int64_t>(outLen, 0));
  plan.weight.assign(width, std::vector<double>(outLen, 0.0));
  for (int64_t j = 0; j < outLen; ++j)
    for (size_t k = 0; k < perOut[j].size(); ++k) {
      plan.index[k][j] = perOut[j][k].first;
      plan.weight[k][j] = perOut[j][k].second;
    }
  return plan;
}

/// The plan reads x[j] with weight 1 for every j: nothing to do.
bool isIdentity(const AxisPlan &p, int64_t inLen) {
  if (p.index.size() != 1 || p.hasBias ||
      static_cast<int64_t>(p.index[0].size()) != inLen)
    return false;
  for (int64_t j = 0; j < inLen; ++j)
    if (p.index[0][j] != j || p.weight[0][j] != 1.0)
      return false;
  return true;
}

/// Nearest-style plan: one tap of weight 1 everywhere (exact on integers).
bool isGather(const AxisPlan &p) {
  return p.index.size() == 1 && !p.hasBias &&
         llvm::all_of(p.weight[0], [](double w) { return w == 1.0; });
}

/// A constant of `shape` holding `v` (float kinds) or its integers.
Value constant(NodeImporter &n, ArrayRef<int64_t> shape, ArrayRef<double> v,
               ElemKind kind) {
  OpBuilder &b = n.getBuilder();
  auto type = RankedTensorType::get(shape, getElemType(b.getContext(), kind));
  // The element type's own values, not an array of APInts (~16 bytes an
  // element beside the attribute).
  DenseElementsAttr attr;
  if (isFloatKind(kind)) {
    attr = floatElements(type, v);
  } else if (kind == ElemKind::I64) {
    std::vector<int64_t> ints(v.begin(), v.end());
    attr = DenseElementsAttr::get(type, ArrayRef<int64_t>(ints));
  } else if (kind == ElemKind::I32) {
    std::vector<int32_t> ints(v.begin(), v.end());
    attr = DenseElementsAttr::get(type, ArrayRef<int32_t>(ints));
  } else {
    SmallVector<bool> bits;
    for (double d : v)
      bits.push_back(d != 0.0);
    attr = DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  }
  return arith::ConstantOp::create(b, n.getLoc(), attr);
}

/// One axis resampled as a contraction with the [out, in] interpolation
/// matrix M (out[.., j, ..] = sum_i M[j, i] * x[.., i, ..]): a matmul-like
/// generic whose operands are all indexed by its loops, so propagation may
/// split any dim of it (the resized one splits M's rows).
Value applyAxis(NodeImporter &n, Value x, std::vector<int64_t> &shape,
                ElemKind kind, int64_t axis, const AxisPlan &p) {
  OpBuilder &b = n.getBuilder();
  MLIRContext *ctx = b.getContext();
  int64_t rank = shape.size(), inLen = shape[axis], outLen = p.bias.size();
  std::vector<double> m(outLen * inLen, 0.0);
  for (size_t k = 0; k < p.index.size(); ++k)
    for (int64_t j = 0; j < outLen; ++j)
      m[j * inLen + p.index[k][j]] += p.weight[k][j];
  std::vector<int64_t> out = shape;
  out[axis] = outLen;
  SmallVector<AffineExpr> xe, me = {getAffineDimExpr(axis, ctx),
                                    getAffineDimExpr(rank, ctx)};
  for (int64_t d = 0; d < rank; ++d)
    xe.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  iters.push_back(IteratorType::reduction);
  Value r =
      n.buildGeneric(
           {GenericInput{x, AffineMap::get(rank + 1, 0, xe, ctx),
                         std::nullopt},
            GenericInput{constant(n, {outLen, inLen}, m, kind),
                         AffineMap::get(rank + 1, 0, me, ctx), std::nullopt}},
           out, kind, iters, n.zeroFilled(out, kind),
           AffineMap::getMultiDimIdentityMap(rank + 1, ctx)
               .getMajorSubMap(rank),
           [](OpBuilder &bb, Location l, ArrayRef<Value> a) {
             Value prod =
                 floatOrInt<arith::MulFOp, arith::MulIOp>(bb, l, a[0], a[1]);
             return floatOrInt<arith::AddFOp, arith::AddIOp>(bb, l, a[2],
                                                             prod);
           })
          ->getResult(0);
  shape = out;
  if (!p.hasBias)
    return r;
  // tf_crop_and_resize's extrapolation value where the crop is left.
  return n
      .buildGeneric(
          {GenericInput{r, b.getMultiDimIdentityMap(rank), std::nullopt},
           GenericInput{constant(n, {outLen}, p.bias, kind),
                        AffineMap::get(rank, 0, {getAffineDimExpr(axis, ctx)},
                                       ctx),
                        std::nullopt}},
          out, kind, SmallVector<IteratorType>(rank, IteratorType::parallel),
          Value(), b.getMultiDimIdentityMap(rank),
          [](OpBuilder &bb, Location l, ArrayRef<Value> a) {
            return floatOrInt<arith::AddFOp, arith::AddIOp>(bb, l, a[0], a[1]);
          })
      ->getResult(0);
}

/// Reads the node's attributes; fails on the ones autoshard does not take.
FailureOr<ResizeAttrs> readAttrs(NodeImporter &n) {
  auto str = [&](StringRef name, StringRef dflt) {
    const onnx::AttributeProto *a = n.attr(name);
    return a ? a->s() : dflt.str();
  };
  ResizeAttrs a;
  a.mode = str("mode", "nearest");
  a.coordMode = str("coordinate_transformation_mode", "half_pixel");
  a.nearestMode = str("nearest_mode", "round_prefer_floor");
  a.cubicA = n.attrFloat("cubic_coeff_a", -0.75f);
  a.excludeOutside = n.attrInt("exclude_outside", 0) != 0;
  a.extrapolation = n.attrFloat("extrapolation_value", 0.0f);
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic")
    return n.error() << "mode '" << a.mode
                     << "' is not one of nearest, linear, cubic";
  static const char *kCoord[] = {"half_pixel", "half_pixel_symmetric",
                                 "pytorch_half_pixel", "align_corners",
                                 "asymmetric", "tf_crop_and_resize",
                                 "tf_half_pixel_for_nn"};
  if (!llvm::is_contained(kCoord, a.coordMode))
    return n.error() << "coordinate_transformation_mode '" << a.coordMode
                     << "' is not supported";
  static const char *kNearest[] = {"round_prefer_floor", "round_prefer_ceil",
                                   "floor", "ceil"};
  if (!llvm::is_contained(kNearest, a.nearestMode))
    return n.error() << "nearest_mode '" << a.nearestMode
                     << "' is not supported";
  if (n.attrInt("antialias", 0) != 0)
    return n.error() << "antialias is not supported";
  if (str("keep_aspect_ratio_policy", "stretch") != "stretch")
    return n.error() << "keep_aspect_ratio_policy other than 'stretch' is "
                        "not supported";
  return a;
}

/// Optional input `i` as doubles; empty when absent or an empty tensor.
FailureOr<std::vector<double>> optionalFloats(NodeImporter &n, int64_t i,
                                              StringRef what) {
  std::vector<double> v;
  if (!n.hasInput(i) || (n.in(i).rank() == 1 && n.in(i).shape[0] == 0))
    return v;
  if (!n.in(i).isConstant()) {
    InFlightDiagnostic d = n.error()
                           << what << " (input #" << i
                           << ") must be known at import time; autoshard "
                              "imports static shapes only";
    if (isa<BlockArgument>(n.in(i).value))
      d << " (it is graph input '" << n.getNode().input(i)
        << "': give its value with --freeze " << n.getNode().input(i)
        << "=FILE.npy)";
    return failure();
  }
  const HostTensor &t = *n.in(i).constant;
  for (int64_t k = 0; k < t.numel(); ++k)
    v.push_back(t.getF(k));
  return v;
}

LogicalResult convertResize(NodeImporter &n, StringRef) {
  const Val &x = n.in(0);
  FailureOr<ResizeAttrs> a = readAttrs(n);
  if (failed(a))
    return failure();
  if (!isFloatKind(x.kind) && a->mode != "nearest")
    return n.error() << "expects a float input for mode '" << a->mode << "'";
  int64_t rank = x.rank();
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  if (std::optional<std::vector<int64_t>> given = n.attrInts("axes")) {
    axes = *given;
    for (int64_t &ax : axes)
      if (failed(n.normalizeAxis(ax, rank)))
        return failure();
  }
  int64_t na = axes.size();
  FailureOr<std::vector<double>> roi = optionalFloats(n, 1, "roi");
  FailureOr<std::vector<double>> scales = optionalFloats(n, 2, "scales");
  FailureOr<std::vector<double>> sizes = optionalFloats(n, 3, "sizes");
  if (failed(roi) || failed(scales) || failed(sizes))
    return failure();
  if (scales->empty() == sizes->empty())
    return n.error() << "expects exactly one of scales and sizes";
  if (!scales->empty() && static_cast<int64_t>(scales->size()) != na)
    return n.error() << "scales must have one value per resized axis";
  if (!sizes->empty() && static_cast<int64_t>(sizes->size()) != na)
    return n.error() << "sizes must have one value per resized axis";
  if (a->coordMode == "tf_crop_and_resize" &&
      static_cast<int64_t>(roi->size()) != 2 * na)
    return n.error() << "tf_crop_and_resize needs a roi of 2 values per "
                        "resized axis";
  std::vector<int64_t> shape = x.shape;
  Value v = n.materialize(x);
  // Innermost axis first, as the reference interpolates (it matters only
  // where tf_crop_and_resize extrapolates).
  for (int64_t k = na - 1; k >= 0; --k) {
    int64_t d = axes[k], inLen = shape[d];
    // Scales are float32 in the model: the reference computes with that.
    double scale = scales->empty() ? (*sizes)[k] / double(inLen)
                                   : double(float((*scales)[k]));
    double outSize = scales->empty() ? (*sizes)[k] : scale * double(inLen);
    // Planned on the host, a few vectors of the axis's length: a size or
    // scale is a few bytes of a model (and a double past int64 would not
    // convert).
    if (!(outSize <= double(kMaxFoldedElements)))
      return n.error() << "resizes axis " << d << " to " << outSize
                       << " elements; at most " << kMaxFoldedElements
                       << " an axis are supported";
    int64_t outLen = int64_t(outSize);
    if (!(scale > 0) || outLen <= 0)
      return n.error() << "resizes axis " << d << " to " << outLen
                       << " elements; zero-size tensors are not supported";
    double rs = roi->empty() ? 0.0 : (*roi)[k],
           re = roi->empty() ? 1.0 : (*roi)[na + k];
    AxisPlan plan = planAxis(*a, inLen, outLen, scale, rs, re);
    if (isIdentity(plan, inLen))
      continue;
    // The [out, in] interpolation matrix is held on the host and in the IR:
    // it counts against the fold budget ([1, 1, 32768, 32768] to twice its
    // size: 2^31 elements, 16 GiB of host doubles).
    if (!n.reserveFold({outLen, inLen}))
      return n.error() << "resizing axis " << d << " from " << inLen << " to "
                       << outLen << " needs an interpolation matrix of "
                       << outLen << " x " << inLen
                       << " elements, past the import's fold budget ("
                       << kMaxFoldedElements << " elements)";
    if (!isFloatKind(x.kind) && !isGather(plan))
      return n.error() << "expects a float input: axis " << d
                       << " blends neighbouring elements";
    v = applyAxis(n, v, shape, x.kind, d, plan);
  }
  n.setOutput(0, v, x.kind);
  return success();
}

} // namespace

void autoshard::onnx_import::registerResizeOps(OpTable &t) {
  t["Resize"] = convertResize;
}
