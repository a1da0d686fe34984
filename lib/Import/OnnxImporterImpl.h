//===- OnnxImporterImpl.h - State shared by the ONNX importer ---*- C++ -*-===//
//
// Private to lib/Import: the importer walks the graph in OnnxImporter.cpp and
// converts nodes in OnnxOps.cpp (folding what is static in OnnxFolding.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_LIB_IMPORT_ONNXIMPORTERIMPL_H
#define AUTOSHARD_LIB_IMPORT_ONNXIMPORTERIMPL_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "onnx/onnx_pb.h"

namespace autoshard::onnx_import {

/// The default-domain opsets read: what PyTorch 1.13-2.x and Hugging Face
/// exports produce. Ops whose signature changed within the range read both
/// spellings (e.g. axes as an attribute before opset 13/18, an input after).
constexpr int64_t kMinOpset = 11;
constexpr int64_t kMaxOpset = 21;

/// A fold holds its result on the host, 8 bytes an element, and
/// materialises it in the IR: a few bytes of a file (a shape, a count, two
/// small constants that broadcast, one input repeated in a Concat) must not
/// make it allocate without bound (fuzz-onnx: an import that ran for
/// minutes). Past this many elements an op is left to its converter and
/// computed at run time, or is an error where it cannot be.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 26;

/// Element types the importer computes in: float and double stay, int64 and
/// int32 stay, the narrower integers (int8/uint8/int16/uint16) widen to i32
/// and uint32/uint64 to i64 (the runtime's integer types; values are kept,
/// only overflow would wrap differently), bool is i1. float16 and bfloat16
/// stay f16 / bf16 (the runtime stores them narrow and computes in f32).
enum class ElemKind { F32, I64, I32, Bool, F64, F16, BF16 };
inline bool isFloatKind(ElemKind k) {
  return k == ElemKind::F32 || k == ElemKind::F64 || k == ElemKind::F16 ||
         k == ElemKind::BF16;
}
/// `v` rounded (to nearest even) to a float16/bfloat16 value; other kinds'
/// values are kept as they are.
double roundToKind(double v, ElemKind kind);
/// A dense float constant of `type` (any float element type) from `values`,
/// each rounded to the element type to nearest even.
mlir::DenseElementsAttr floatElements(mlir::RankedTensorType type,
                                      llvm::ArrayRef<double> values);

mlir::Type getElemType(mlir::MLIRContext *ctx, ElemKind kind);
std::optional<ElemKind> elemKindFromOnnx(int32_t dataType);
const char *onnxTypeName(int32_t dataType);
/// Why an element type is refused: " (...)", appended to the error.
const char *unsupportedTypeHint(int32_t dataType);

/// A tensor whose contents are known at import time (Constant, integer
/// initializers and everything folded from them, e.g. shape arithmetic).
struct HostTensor {
  ElemKind kind = ElemKind::F32;
  std::vector<int64_t> shape;
  std::vector<double> f;  // float kinds
  std::vector<int64_t> i; // integer and bool kinds

  bool isFloat() const { return isFloatKind(kind); }
  int64_t numel() const;
  double getF(int64_t k) const { return isFloat() ? f[k] : double(i[k]); }
  int64_t getI(int64_t k) const { return isFloat() ? int64_t(f[k]) : i[k]; }
  void push(double v) {
    if (isFloat())
      f.push_back(roundToKind(v, kind));
    else
      i.push_back(kind == ElemKind::Bool ? (v != 0.0) : int64_t(v));
  }
  void pushI(int64_t v) {
    if (isFloat())
      f.push_back(roundToKind(double(v), kind));
    else
      i.push_back(kind == ElemKind::Bool ? (v != 0) : v);
  }
};
using HostRef = std::shared_ptr<const HostTensor>;

/// What an ONNX value name stands for while importing.
struct Val {
  mlir::Value value; // the runtime SSA value, created lazily for constants
  HostRef constant;  // the contents when known statically
  std::vector<int64_t> shape;
  ElemKind kind = ElemKind::F32;

  bool isConstant() const { return constant != nullptr; }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  bool isScalarConstant() const { return constant && constant->numel() == 1; }
};

/// Where a main-op operand comes from: ONNX input `input`, with operand dim d
/// being that input's dim dims[d] (-1: a unit dim the importer added).
struct OperandSource {
  int64_t input;
  llvm::SmallVector<int64_t> dims;
};

/// The op a node's strategy attaches to (the MatMul's contraction, the
/// Gather's tensor.gather, ...) and how its operands relate to the node's.
struct MainOp {
  mlir::Operation *op = nullptr;
  /// One per DPS input (or operand) of `op`; nullopt: not from the node.
  llvm::SmallVector<std::optional<OperandSource>> operands;
  /// Result 0 dim d is the node's output 0 dim resultDims[d].
  std::optional<llvm::SmallVector<int64_t>> resultDims;
  /// Further ops the node's strategy applies to, their operands mapped
  /// alike (a recurrent layer: every gate's projection and step's matmul).
  std::vector<MainOp> more;
};

/// One operand of a linalg.generic being built.
struct GenericInput {
  mlir::Value value;
  mlir::AffineMap map;
  std::optional<OperandSource> source;
};

class NodeImporter;

/// The arith.constant made for each known tensor, keyed by its address. The
/// entry holds the tensor too: one freed while its entry stayed (a
/// converter's temporary) would hand its constant on to whatever tensor the
/// allocator put at that address next.
using MaterializedConstants =
    llvm::DenseMap<const HostTensor *, std::pair<HostRef, mlir::Value>>;

/// Converts one node (its inputs are in the importer's `in(i)`); `opType` is
/// the node's op_type, for converters shared by several ops.
using OpConverter =
    std::function<mlir::LogicalResult(NodeImporter &, llvm::StringRef opType)>;
/// op_type -> converter. Each op-group file (OnnxOps.cpp, OnnxConvOps.cpp,
/// ...) has one `register*Ops(OpTable &)` that adds its ops; getOpTable()
/// calls them all once.
using OpTable = llvm::StringMap<OpConverter>;
const OpTable &getOpTable();
void registerCoreOps(OpTable &table); // OnnxOps.cpp
void registerConvOps(OpTable &table); // OnnxConvOps.cpp
void registerMathOps(OpTable &table); // OnnxMathOps.cpp
void registerReduceOps(OpTable &table); // OnnxReduceOps.cpp
void registerIndexOps(OpTable &table); // OnnxIndexOps.cpp
void registerResizeOps(OpTable &table); // OnnxResizeOps.cpp
void registerRearrangeOps(OpTable &table); // OnnxRearrangeOps.cpp
void registerEinsumOps(OpTable &table); // OnnxEinsumOps.cpp
void registerRecurrentOps(OpTable &table); // OnnxRecurrentOps.cpp

class NodeImporter {
public:
  NodeImporter(mlir::OpBuilder &builder, int64_t opset,
               llvm::StringMap<Val> &values,
               MaterializedConstants &materialized)
      : b(builder), ctx(builder.getContext()), opset(opset), values(values),
        materialized(materialized), loc(builder.getUnknownLoc()) {}

  /// Converts one node; on success its outputs are in `values` and `main`
  /// names the op a strategy for the node applies to (if any).
  mlir::LogicalResult convert(const onnx::NodeProto &node, mlir::Location loc,
                              llvm::StringRef name);
  MainOp main;

  /// A runtime SSA value for `v` (constants become arith.constant).
  mlir::Value materialize(const Val &v);

  // Helpers for op converters (any op-group file).
  // Diagnostics and attributes.
  mlir::InFlightDiagnostic error();
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  int64_t attrInt(llvm::StringRef name, int64_t dflt) const;
  float attrFloat(llvm::StringRef name, float dflt) const;
  std::optional<std::vector<int64_t>> attrInts(llvm::StringRef name) const;
  bool hasInput(int64_t i) const;
  const Val &in(int64_t i) const { return inputs[i]; }
  mlir::FailureOr<std::vector<int64_t>> constInts(int64_t i,
                                                  llvm::StringRef what);
  /// The `axes` attribute, else constant input `i`; nullopt: neither given.
  mlir::FailureOr<std::optional<std::vector<int64_t>>> axesArg(int64_t i);
  mlir::LogicalResult normalizeAxis(int64_t &axis, int64_t rank);
  void setOutput(int64_t i, Val v);
  void setOutput(int64_t i, mlir::Value v, ElemKind kind);
  void setOutput(int64_t i, HostTensor t);
  /// Replaces input i (widenHalfInputs: a narrow input by its f32 copy).
  void replaceInput(int64_t i, Val v) { inputs[i] = std::move(v); }

  // Builders.
  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape,
                                    ElemKind kind);
  mlir::Value emptyTensor(llvm::ArrayRef<int64_t> shape, ElemKind kind);
  mlir::Value zeroFilled(llvm::ArrayRef<int64_t> shape, ElemKind kind);
  mlir::Value scalarConstant(mlir::OpBuilder &bb, double v, ElemKind kind);
  mlir::Value reshapeTo(mlir::Value v, llvm::ArrayRef<int64_t> from,
                        llvm::ArrayRef<int64_t> to);
  mlir::Value dropUnitDims(mlir::Value v, llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<bool> drop);
  /// Operand for a generic over `outShape` with numpy broadcasting of `v`
  /// against the trailing dims of `outShape` (leading loop dims from
  /// `firstLoopDim`); unit dims that broadcast are collapsed away so that
  /// every indexing map is a projected permutation.
  GenericInput broadcastInput(const Val &v, int64_t inputIndex,
                              llvm::ArrayRef<int64_t> outShape,
                              int64_t numLoops, int64_t firstLoopDim = 0);
  using BodyFn = std::function<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                           llvm::ArrayRef<mlir::Value>)>;
  /// A linalg.generic over `outShape`; `scalars` are hoisted into the body.
  mlir::Operation *buildGeneric(llvm::ArrayRef<GenericInput> ins,
                                llvm::ArrayRef<int64_t> outShape,
                                ElemKind outKind,
                                llvm::ArrayRef<mlir::utils::IteratorType> iters,
                                mlir::Value init, mlir::AffineMap outMap,
                                const BodyFn &body);
  /// Numpy-broadcasting elementwise op over inputs (scalar constants are
  /// folded into the body); records the generic as the main op.
  mlir::FailureOr<mlir::Value> elementwise(llvm::ArrayRef<int64_t> inputIdx,
                                           ElemKind outKind,
                                           const BodyFn &body);
  /// Sum (or `combine`) of `v` over `axes` (sorted); result drops the axes.
  mlir::Value reduce(mlir::Value v, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<int64_t> axes, ElemKind kind,
                     const BodyFn &combine, double init = 0.0);

  const onnx::NodeProto &getNode() const { return *node; }
  int64_t getOpset() const { return opset; }
  mlir::OpBuilder &getBuilder() { return b; }
  mlir::Location getLoc() const { return loc; }
  int64_t numInputs() const { return static_cast<int64_t>(inputs.size()); }

  // Folding (OnnxFolding.cpp).
  mlir::FailureOr<bool> tryFold(llvm::StringRef opType);
  /// Whether a fold (or a converter's host copy of a constant: Slice,
  /// Reshape, Expand) may make a tensor of `shape` on the host; if so its
  /// elements count against the import's budget. False: compute it at run
  /// time (or report it where that cannot be).
  bool reserveFold(llvm::ArrayRef<int64_t> shape);

  // Op families (OnnxOps.cpp).
  mlir::LogicalResult convertIdentity(llvm::StringRef opType);
  mlir::LogicalResult convertElementwise(llvm::StringRef opType);
  mlir::LogicalResult convertMatMul();
  mlir::LogicalResult convertGemm();
  mlir::LogicalResult convertGather();
  mlir::FailureOr<mlir::Value> nonNegativeIndices(const Val &idx, int64_t dim);
  mlir::LogicalResult convertReshapeLike(llvm::StringRef opType);
  mlir::LogicalResult convertTranspose();
  mlir::LogicalResult convertSlice();
  mlir::LogicalResult convertConcat();
  mlir::LogicalResult convertSplit();
  mlir::LogicalResult convertSoftmax();
  mlir::LogicalResult convertLayerNorm();
  mlir::LogicalResult convertCast();
  mlir::LogicalResult convertExpand();

private:
  mlir::OpBuilder &b;
  mlir::MLIRContext *ctx;
  int64_t opset;
  llvm::StringMap<Val> &values;
  MaterializedConstants &materialized;
  const onnx::NodeProto *node = nullptr;
  std::string nodeName;
  mlir::Location loc;
  llvm::SmallVector<Val> inputs;
  llvm::SmallVector<bool> present;
  /// Elements this import's folds hold on the host (see reserveFold).
  int64_t foldedElements = 0;
};

/// `FOp` on float operands, `IOp` on integer ones (generic bodies of ops
/// that take both, e.g. arith::AddFOp / arith::AddIOp).
template <typename FOp, typename IOp>
mlir::Value floatOrInt(mlir::OpBuilder &b, mlir::Location l, mlir::Value x,
                       mlir::Value y) {
  if (mlir::isa<mlir::FloatType>(x.getType()))
    return FOp::create(b, l, x, y);
  return IOp::create(b, l, x, y);
}

/// A generic operand holding loop `dim`'s index (0..size-1, i64) in a nest
/// of `numLoops` loops: an iota constant rather than linalg.index, so that
/// the op fuses and splits like any other (a split iota is the global index).
GenericInput loopIndex(NodeImporter &n, int64_t dim, int64_t size,
                       int64_t numLoops);

/// float16/bfloat16 nodes computed in f32 (OnnxWidening.cpp): replaces the
/// node's f16/bf16 inputs by their arith.extf to f32 and returns the type
/// the outputs round back to (input #0's); inputs `sameType` must have input
/// #0's type (ONNX's T), else an error.
mlir::FailureOr<ElemKind> widenHalfInputs(NodeImporter &n,
                                          llvm::ArrayRef<int64_t> sameType);
/// `v` (f32) rounded to nearest even to `kind` when it is f16/bf16; `v`
/// itself otherwise.
mlir::Value narrowFromF32(NodeImporter &n, mlir::Value v, ElemKind kind);

/// log(softmax(x)) along `axis` (OnnxReduceOps.cpp; also the losses').
mlir::Value buildLogSoftmax(NodeImporter &n, mlir::Value x,
                            llvm::ArrayRef<int64_t> shape, ElemKind kind,
                            int64_t axis);

/// Numpy broadcast of shapes; nullopt when they do not broadcast.
std::optional<std::vector<int64_t>>
broadcastShapes(llvm::ArrayRef<std::vector<int64_t>> shapes);

/// Static slice / broadcast of a known tensor.
HostTensor sliceHost(const HostTensor &x, llvm::ArrayRef<int64_t> offsets,
                     llvm::ArrayRef<int64_t> sizes,
                     llvm::ArrayRef<int64_t> strides);
HostTensor expandHost(const HostTensor &x, llvm::ArrayRef<int64_t> outShape);

/// Reads a C-order .npy file (f2, f4, f8, i8, i4, i1, u1, b1) as a HostTensor.
mlir::FailureOr<HostTensor> readNpyHost(llvm::StringRef path,
                                        std::string &error);

/// Reads a TensorProto (inline or external data next to `modelDir`).
mlir::FailureOr<HostTensor> readTensorProto(const onnx::TensorProto &t,
                                            llvm::StringRef modelDir,
                                            std::string &error);

} // namespace autoshard::onnx_import

#endif // AUTOSHARD_LIB_IMPORT_ONNXIMPORTERIMPL_H
