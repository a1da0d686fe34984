//===- OnnxWidening.cpp - float16/bfloat16 nodes computed in f32 ----------===//
//
// Conv, pooling, BatchNormalization and the recurrent layers on float16 or
// bfloat16 tensors are imported as their float32 form between an
// arith.extf of every narrow input and one arith.truncf of each output:
// FP32 accumulation and one rounding per node, as PyTorch's bf16 CPU
// kernels (oneDNN conv, BN and pooling in FP32 "opmath") and autocast's
// cuDNN kernels compute them. Every existing f32 path -- the sharding rules,
// the halo exchange, the compiled kernels -- then applies unchanged; the
// casts are elementwise generics that take their neighbour's layout.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace autoshard::onnx_import;
using mlir::utils::IteratorType;

static bool isNarrowFloat(ElemKind k) {
  return k == ElemKind::F16 || k == ElemKind::BF16;
}

static const char *kindName(ElemKind k) {
  switch (k) {
  case ElemKind::F32:
    return "float32";
  case ElemKind::F64:
    return "float64";
  case ElemKind::F16:
    return "float16";
  case ElemKind::BF16:
    return "bfloat16";
  case ElemKind::I64:
    return "int64";
  case ElemKind::I32:
    return "int32";
  case ElemKind::Bool:
    return "bool";
  }
  return "?";
}

/// `v` with every element converted by `cast` (extf or truncf) to `to`.
static Value castElements(NodeImporter &n, Value v, ElemKind to, bool widen) {
  OpBuilder &b = n.getBuilder();
  auto type = cast<RankedTensorType>(v.getType());
  int64_t rank = type.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<IteratorType> par(rank, IteratorType::parallel);
  Type elem = getElemType(b.getContext(), to);
  return n
      .buildGeneric({GenericInput{v, id, std::nullopt}}, type.getShape(), to,
                    par, Value(), id,
                    [&](OpBuilder &bb, Location l, ArrayRef<Value> x) -> Value {
                      if (widen)
                        return arith::ExtFOp::create(bb, l, elem, x[0]);
                      return arith::TruncFOp::create(bb, l, elem, x[0]);
                    })
      ->getResult(0);
}

FailureOr<ElemKind>
autoshard::onnx_import::widenHalfInputs(NodeImporter &n,
                                        ArrayRef<int64_t> sameType) {
  ElemKind kind = n.in(0).kind;
  bool anyNarrow = false;
  for (int64_t i = 0, e = n.numInputs(); i < e; ++i)
    anyNarrow |= n.hasInput(i) && isNarrowFloat(n.in(i).kind);
  if (!anyNarrow) // the converter's own type checks apply
    return kind;
  for (int64_t i : sameType)
    if (n.hasInput(i) && n.in(i).kind != kind)
      return n.error() << "expects input #" << i << " of input #0's type ("
                       << kindName(kind) << "), got "
                       << kindName(n.in(i).kind);
  for (int64_t i = 0, e = n.numInputs(); i < e; ++i) {
    if (!n.hasInput(i) || !isNarrowFloat(n.in(i).kind))
      continue;
    const Val &v = n.in(i);
    Val wide;
    wide.shape = v.shape;
    wide.kind = ElemKind::F32;
    if (v.isConstant() && n.reserveFold(v.shape)) {
      // Known values stay known: every f16/bf16 value is an f32 one. The
      // host copy counts against the fold budget (a large constant widened
      // by many nodes held a copy a node); past it the program widens.
      HostTensor t = *v.constant;
      t.kind = ElemKind::F32;
      wide.constant = std::make_shared<HostTensor>(std::move(t));
    } else {
      wide.value =
          castElements(n, n.materialize(v), ElemKind::F32, /*widen=*/true);
    }
    n.replaceInput(i, std::move(wide));
  }
  return kind;
}

Value autoshard::onnx_import::narrowFromF32(NodeImporter &n, Value v,
                                            ElemKind kind) {
  if (!isNarrowFloat(kind))
    return v;
  return castElements(n, v, kind, /*widen=*/false);
}
