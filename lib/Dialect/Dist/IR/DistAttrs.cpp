//===- DistAttrs.cpp - dist attributes: syntax, verification, C++ API -----===//

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "autoshard/Support/SplitTuples.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace autoshard;
using namespace autoshard::dist;

#define GET_ATTRDEF_CLASSES
#include "autoshard/Dialect/Dist/IR/DistAttrs.cpp.inc"

void DistDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "autoshard/Dialect/Dist/IR/DistAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// MeshAttr
//===----------------------------------------------------------------------===//

int64_t MeshAttr::getNumDevices() const {
  int64_t n = 1;
  for (int64_t s : getAxisSizes())
    n *= s;
  return n;
}

std::optional<int64_t> MeshAttr::getAxisIndex(StringRef name) const {
  for (auto [i, n] : llvm::enumerate(getAxisNames()))
    if (n.getValue() == name)
      return static_cast<int64_t>(i);
  return std::nullopt;
}

static DeviceMesh makeDeviceMesh(ArrayRef<StringAttr> names,
                                 ArrayRef<int64_t> sizes,
                                 ArrayRef<double> bandwidth,
                                 ArrayRef<double> latency,
                                 ArrayRef<int64_t> deviceIds) {
  std::vector<MeshAxis> axes;
  for (size_t i = 0; i < names.size(); ++i) {
    MeshAxis axis;
    axis.name = names[i] ? names[i].getValue().str() : std::string();
    axis.size = i < sizes.size() ? sizes[i] : 1;
    axis.bandwidthGBps = i < bandwidth.size() ? bandwidth[i] : 0.0;
    axis.latencyUs = i < latency.size() ? latency[i] : 0.0;
    axes.push_back(axis);
  }
  return DeviceMesh(std::move(axes),
                    std::vector<int64_t>(deviceIds.begin(), deviceIds.end()));
}

DeviceMesh MeshAttr::toDeviceMesh() const {
  return makeDeviceMesh(getAxisNames(), getAxisSizes(), getBandwidthValues(),
                        getLatencyValues(), getDeviceIds());
}

MeshAttr MeshAttr::get(MLIRContext *ctx, const DeviceMesh &mesh) {
  SmallVector<StringAttr> names;
  SmallVector<int64_t> sizes;
  SmallVector<double> bw, lat;
  bool hasLinks = false;
  for (const MeshAxis &a : mesh.getAxes()) {
    names.push_back(StringAttr::get(ctx, a.name));
    sizes.push_back(a.size);
    bw.push_back(a.bandwidthGBps);
    lat.push_back(a.latencyUs);
    hasLinks |= a.bandwidthGBps != 0 || a.latencyUs != 0;
  }
  if (!hasLinks) {
    bw.clear();
    lat.clear();
  }
  auto f64 = [&](ArrayRef<double> v) {
    return v.empty() ? DenseF64ArrayAttr() : DenseF64ArrayAttr::get(ctx, v);
  };
  return get(ctx, names, sizes, f64(bw), f64(lat), mesh.getDeviceIds());
}

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<StringAttr> names,
                               ArrayRef<int64_t> sizes,
                               DenseF64ArrayAttr bandwidthAttr,
                               DenseF64ArrayAttr latencyAttr,
                               ArrayRef<int64_t> deviceIds) {
  ArrayRef<double> bandwidth =
      bandwidthAttr ? bandwidthAttr.asArrayRef() : ArrayRef<double>();
  ArrayRef<double> latency =
      latencyAttr ? latencyAttr.asArrayRef() : ArrayRef<double>();
  if (names.size() != sizes.size())
    return emitError() << "mesh has " << names.size() << " axis names but "
                       << sizes.size() << " sizes";
  if (!bandwidth.empty() && bandwidth.size() != sizes.size())
    return emitError() << "mesh bandwidth must list one value per axis ("
                       << sizes.size() << "), got " << bandwidth.size();
  if (!latency.empty() && latency.size() != sizes.size())
    return emitError() << "mesh latency must list one value per axis ("
                       << sizes.size() << "), got " << latency.size();
  std::string err =
      makeDeviceMesh(names, sizes, bandwidth, latency, deviceIds).validate();
  if (!err.empty())
    return emitError() << err;
  return success();
}

Attribute MeshAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<StringAttr> names;
  SmallVector<int64_t> sizes, deviceIds;
  SmallVector<double> bandwidth, latency;
  if (parser.parseLess())
    return {};
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            std::string name;
            int64_t size;
            if (parser.parseKeywordOrString(&name) || parser.parseEqual() ||
                parser.parseInteger(size))
              return failure();
            names.push_back(StringAttr::get(ctx, name));
            sizes.push_back(size);
            return success();
          }))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "bandwidth" || key == "latency") {
      SmallVector<double> &out = key == "bandwidth" ? bandwidth : latency;
      if (parser.parseCommaSeparatedList(
              AsmParser::Delimiter::Square, [&]() -> ParseResult {
                double v;
                if (parser.parseFloat(v))
                  return failure();
                out.push_back(v);
                return success();
              }))
        return {};
    } else if (key == "devices") {
      if (parser.parseCommaSeparatedList(
              AsmParser::Delimiter::Square, [&]() -> ParseResult {
                return parser.parseInteger(deviceIds.emplace_back());
              }))
        return {};
    } else {
      parser.emitError(keyLoc)
          << "unknown mesh field '" << key
          << "'; expected 'bandwidth', 'latency' or 'devices'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  auto f64 = [&](ArrayRef<double> v) {
    return v.empty() ? DenseF64ArrayAttr() : DenseF64ArrayAttr::get(ctx, v);
  };
  return parser.getChecked<MeshAttr>(loc, ctx, names, sizes, f64(bandwidth),
                                     f64(latency), deviceIds);
}

static void printDoubles(AsmPrinter &printer, ArrayRef<double> values) {
  printer << "[";
  llvm::interleaveComma(values, printer, [&](double v) {
    printer.printFloat(llvm::APFloat(v));
  });
  printer << "]";
}

void MeshAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(
      llvm::zip(getAxisNames(), getAxisSizes()), printer, [&](auto pair) {
        printer.printKeywordOrString(std::get<0>(pair).getValue());
        printer << " = " << std::get<1>(pair);
      });
  printer << "]";
  if (!getBandwidthValues().empty()) {
    printer << ", bandwidth = ";
    printDoubles(printer, getBandwidthValues());
  }
  if (!getLatencyValues().empty()) {
    printer << ", latency = ";
    printDoubles(printer, getLatencyValues());
  }
  if (!getDeviceIds().empty()) {
    printer << ", devices = [";
    llvm::interleaveComma(getDeviceIds(), printer);
    printer << "]";
  }
  printer << ">";
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

static TensorLayout makeTensorLayout(ArrayRef<DenseI64ArrayAttr> dimAxes,
                                     ArrayRef<int64_t> partialAxes,
                                     dist::ReductionKind kind,
                                     ArrayRef<DenseI64ArrayAttr> uneven) {
  TensorLayout l;
  for (DenseI64ArrayAttr axes : dimAxes)
    l.dimAxes.emplace_back(axes.asArrayRef().begin(), axes.asArrayRef().end());
  l.partialAxes.assign(partialAxes.begin(), partialAxes.end());
  l.partialKind = static_cast<autoshard::ReductionKind>(kind);
  for (DenseI64ArrayAttr sizes : uneven)
    l.unevenSizes.emplace_back(sizes.asArrayRef().begin(),
                               sizes.asArrayRef().end());
  return l;
}

TensorLayout LayoutAttr::toTensorLayout() const {
  return makeTensorLayout(getDimAxes(), getPartialAxes(), getPartialKind(),
                          getUnevenSizes());
}

static_assert(static_cast<int>(dist::ReductionKind::Sum) ==
                      static_cast<int>(autoshard::ReductionKind::Sum) &&
                  static_cast<int>(dist::ReductionKind::Product) ==
                      static_cast<int>(autoshard::ReductionKind::Product),
              "dist::ReductionKind must mirror autoshard::ReductionKind");

LayoutAttr LayoutAttr::get(MeshAttr mesh, const TensorLayout &l) {
  MLIRContext *ctx = mesh.getContext();
  SmallVector<DenseI64ArrayAttr> dims, uneven;
  for (const auto &axes : l.dimAxes)
    dims.push_back(DenseI64ArrayAttr::get(ctx, axes));
  bool anyUneven = false;
  for (const auto &sizes : l.unevenSizes)
    anyUneven |= !sizes.empty();
  if (anyUneven)
    for (const auto &sizes : l.unevenSizes)
      uneven.push_back(DenseI64ArrayAttr::get(ctx, sizes));
  return get(ctx, mesh, dims, l.partialAxes,
             static_cast<dist::ReductionKind>(l.partialKind), uneven);
}

LayoutAttr LayoutAttr::getReplicated(MeshAttr mesh, int64_t rank) {
  return get(mesh, TensorLayout::replicated(rank));
}

std::string LayoutAttr::verifyForShape(ArrayRef<int64_t> shape) const {
  // The verifier calls this for every layout of every strategy: try the
  // quick check on the attribute's own arrays before building a mesh and a
  // layout for the full one.
  AxesRef extents(shape.data(), shape.size());
  if (getUnevenSizes().empty() &&
      isValidEvenLayout(
          getMesh().getAxisSizes(), getPartialAxes(), getRank(),
          [&](size_t d) { return AxesRef(getDimAxes()[d].asArrayRef()); },
          &extents))
    return "";
  std::vector<int64_t> dims;
  for (int64_t d : shape)
    dims.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return toTensorLayout().validate(getMesh().toDeviceMesh(), &dims);
}

SmallVector<int64_t> LayoutAttr::getLocalShape(ArrayRef<int64_t> shape,
                                               int64_t pos) const {
  DeviceMesh mesh = getMesh().toDeviceMesh();
  std::vector<int64_t> r = toTensorLayout().getLocalShape(
      mesh, std::vector<int64_t>(shape.begin(), shape.end()),
      mesh.getCoordinate(pos));
  return SmallVector<int64_t>(r.begin(), r.end());
}

SmallVector<int64_t> LayoutAttr::getLocalOffsets(ArrayRef<int64_t> shape,
                                                 int64_t pos) const {
  DeviceMesh mesh = getMesh().toDeviceMesh();
  std::vector<int64_t> r = toTensorLayout().getLocalOffsets(
      mesh, std::vector<int64_t>(shape.begin(), shape.end()),
      mesh.getCoordinate(pos));
  return SmallVector<int64_t>(r.begin(), r.end());
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 MeshAttr mesh,
                                 ArrayRef<DenseI64ArrayAttr> dimAxes,
                                 ArrayRef<int64_t> partialAxes,
                                 ReductionKind kind,
                                 ArrayRef<DenseI64ArrayAttr> uneven) {
  if (!mesh)
    return emitError() << "layout needs a mesh";
  std::string err =
      makeTensorLayout(dimAxes, partialAxes, kind, uneven)
          .validate(mesh.toDeviceMesh());
  if (!err.empty())
    return emitError() << err;
  return success();
}

/// Parses a list of axis names into indices of `mesh`.
static ParseResult parseAxisList(AsmParser &parser, MeshAttr mesh,
                                 SmallVectorImpl<int64_t> &axes) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        SMLoc loc = parser.getCurrentLocation();
        std::string name;
        if (parser.parseKeywordOrString(&name))
          return failure();
        std::optional<int64_t> idx = mesh.getAxisIndex(name);
        if (!idx)
          return parser.emitError(loc)
                 << "unknown mesh axis '" << name << "'; the mesh has "
                 << mesh.toDeviceMesh().str();
        axes.push_back(*idx);
        return success();
      });
}

LayoutAttr LayoutAttr::parseBody(AsmParser &parser, MeshAttr mesh) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<SmallVector<int64_t>> dims;
  SmallVector<SmallVector<int64_t>> sizes;
  bool anyUneven = false;
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            if (parseAxisList(parser, mesh, dims.emplace_back()))
              return failure();
            SmallVector<int64_t> &dimSizes = sizes.emplace_back();
            if (succeeded(parser.parseOptionalKeyword("sizes"))) {
              anyUneven = true;
              return parser.parseCommaSeparatedList(
                  AsmParser::Delimiter::Paren, [&]() -> ParseResult {
                    return parser.parseInteger(dimSizes.emplace_back());
                  });
            }
            return success();
          }))
    return {};
  SmallVector<int64_t> partial;
  ReductionKind kind = ReductionKind::Sum;
  if (succeeded(parser.parseOptionalKeyword("partial"))) {
    SMLoc kindLoc = parser.getCurrentLocation();
    StringRef kindName;
    if (parser.parseKeyword(&kindName))
      return {};
    std::optional<ReductionKind> k = symbolizeReductionKind(kindName);
    if (!k) {
      parser.emitError(kindLoc) << "unknown reduction kind '" << kindName
                                << "'; expected sum, max, min or product";
      return {};
    }
    kind = *k;
    if (parseAxisList(parser, mesh, partial))
      return {};
  }
  SmallVector<DenseI64ArrayAttr> dimAttrs, unevenAttrs;
  for (auto &d : dims)
    dimAttrs.push_back(DenseI64ArrayAttr::get(ctx, d));
  if (anyUneven)
    for (auto &s : sizes)
      unevenAttrs.push_back(DenseI64ArrayAttr::get(ctx, s));
  return parser.getChecked<LayoutAttr>(loc, ctx, mesh, dimAttrs, partial, kind,
                                       unevenAttrs);
}

void LayoutAttr::printBody(AsmPrinter &printer) const {
  ArrayRef<StringAttr> names = getMesh().getAxisNames();
  auto printAxes = [&](ArrayRef<int64_t> axes) {
    printer << "[";
    llvm::interleaveComma(axes, printer, [&](int64_t a) {
      printer.printKeywordOrString(names[a].getValue());
    });
    printer << "]";
  };
  printer << "[";
  for (auto [d, axes] : llvm::enumerate(getDimAxes())) {
    if (d)
      printer << ", ";
    printAxes(axes.asArrayRef());
    if (!getUnevenSizes().empty() && !getUnevenSizes()[d].empty()) {
      printer << " sizes(";
      llvm::interleaveComma(getUnevenSizes()[d].asArrayRef(), printer);
      printer << ")";
    }
  }
  printer << "]";
  if (!getPartialAxes().empty()) {
    printer << " partial " << stringifyReductionKind(getPartialKind()) << " ";
    printAxes(getPartialAxes());
  }
}

static MeshAttr parseMeshOperand(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  Attribute attr;
  if (parser.parseAttribute(attr))
    return {};
  auto mesh = dyn_cast<MeshAttr>(attr);
  if (!mesh)
    parser.emitError(loc) << "expected a #dist.mesh attribute";
  return mesh;
}

Attribute LayoutAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  MeshAttr mesh = parseMeshOperand(parser);
  if (!mesh || parser.parseComma())
    return {};
  LayoutAttr layout = parseBody(parser, mesh);
  if (!layout || parser.parseGreater())
    return {};
  return layout;
}

void LayoutAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printAttribute(getMesh());
  printer << ", ";
  printBody(printer);
  printer << ">";
}

//===----------------------------------------------------------------------===//
// StrategyAttr
//===----------------------------------------------------------------------===//

LogicalResult
StrategyAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     MeshAttr mesh, ArrayRef<LayoutAttr> operands,
                     ArrayRef<LayoutAttr> results) {
  for (LayoutAttr l : llvm::concat<const LayoutAttr>(operands, results))
    if (!l || l.getMesh() != mesh)
      return emitError() << "every layout of a strategy must be on its mesh";
  return success();
}

/// `[BODY, BODY, ...]`: one layout per tensor, on `mesh`.
static ParseResult parseLayoutList(AsmParser &parser, MeshAttr mesh,
                                   SmallVectorImpl<LayoutAttr> &out) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        LayoutAttr l = LayoutAttr::parseBody(parser, mesh);
        if (!l)
          return failure();
        out.push_back(l);
        return success();
      });
}

/// `[[2, 1], [1, 4]]`: MindSpore split tuples, normalised to named axes.
static ParseResult parseSplitList(AsmParser &parser, MeshAttr mesh,
                                  SmallVectorImpl<LayoutAttr> &out) {
  DeviceMesh deviceMesh = mesh.toDeviceMesh();
  int64_t tensorIdx = 0;
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        SMLoc loc = parser.getCurrentLocation();
        std::vector<int64_t> counts;
        if (parser.parseCommaSeparatedList(
                AsmParser::Delimiter::Square, [&]() -> ParseResult {
                  return parser.parseInteger(counts.emplace_back());
                }))
          return failure();
        std::string err;
        TensorLayout l = layoutFromSplitCounts(deviceMesh, counts, err);
        if (!err.empty())
          return parser.emitError(loc)
                 << "tensor #" << tensorIdx << ": " << err;
        ++tensorIdx;
        out.push_back(LayoutAttr::get(mesh, l));
        return success();
      });
}

Attribute StrategyAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  MeshAttr mesh = parseMeshOperand(parser);
  if (!mesh)
    return {};
  SmallVector<LayoutAttr> ins, outs;
  bool seenIn = false, seenOut = false;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    bool isIn = key == "in" || key == "splits";
    bool isOut = key == "out" || key == "out_splits";
    if (!isIn && !isOut) {
      parser.emitError(keyLoc) << "unknown strategy field '" << key
                               << "'; expected in, out, splits or out_splits";
      return {};
    }
    if ((isIn && seenIn) || (isOut && seenOut)) {
      parser.emitError(keyLoc) << "strategy field '" << key << "' repeats the "
                               << (isIn ? "operand" : "result") << " layouts";
      return {};
    }
    (isIn ? seenIn : seenOut) = true;
    SmallVectorImpl<LayoutAttr> &target = isIn ? ins : outs;
    bool sugar = key.ends_with("splits");
    if (failed(sugar ? parseSplitList(parser, mesh, target)
                     : parseLayoutList(parser, mesh, target)))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<StrategyAttr>(loc, parser.getContext(), mesh, ins,
                                         outs);
}

void StrategyAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printAttribute(getMesh());
  auto printList = [&](StringRef key, ArrayRef<LayoutAttr> layouts) {
    printer << ", " << key << " = [";
    llvm::interleaveComma(layouts, printer,
                          [&](LayoutAttr l) { l.printBody(printer); });
    printer << "]";
  };
  printList("in", getOperands());
  if (!getResults().empty())
    printList("out", getResults());
  printer << ">";
}
