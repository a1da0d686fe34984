//===- VjpUtils.h - Builders shared by the VJP rules ------------*- C++ -*-===//
//
// Small tensor builders every reverse-mode rule needs: zeros, sums of
// gradients, transposes, reductions to a shape, and a linalg.generic with a
// scalar body. They emit plain linalg/tensor/arith on tensors, so the
// backward is an ordinary program that propagation shards like the forward.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_TRAIN_VJPUTILS_H
#define AUTOSHARD_TRAIN_VJPUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace autoshard::vjp {

using BodyFn = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange /*ins, then out*/)>;

/// tensor.empty of `type` (static shapes only).
mlir::Value empty(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::RankedTensorType type);
/// A tensor of `type` filled with `value` (linalg.fill of tensor.empty).
mlir::Value splat(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::RankedTensorType type, double value);
/// splat(..., 0).
mlir::Value zeros(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::RankedTensorType type);
/// A scalar constant of float type `type`.
mlir::Value scalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                   double value);

/// A linalg.generic with one result of `outType`: `ins` read through `maps`
/// (one per input, then the output's), `iters` per loop, `body` computes the
/// yielded scalar from the block arguments (inputs, then the output's).
/// `init` is the output operand; null means tensor.empty (then the body must
/// not read the output, or every loop must be parallel).
mlir::Value generic(mlir::OpBuilder &b, mlir::Location loc,
                    mlir::RankedTensorType outType, mlir::ValueRange ins,
                    llvm::ArrayRef<mlir::AffineMap> maps,
                    llvm::ArrayRef<mlir::utils::IteratorType> iters,
                    BodyFn body, mlir::Value init = {});

/// Erases the dead ops of `op`'s body, then rebuilds it without the inputs
/// the body no longer reads (a gradient built from a whole forward body
/// often needs only some of its inputs; an unread input would still have to
/// be laid out, and perhaps communicated, for it). Returns the generic to
/// use (`op` itself when nothing was dropped; else `op` is erased).
mlir::linalg::GenericOp pruneGeneric(mlir::OpBuilder &b,
                                     mlir::linalg::GenericOp op);

/// a + b, elementwise (same types).
mlir::Value add(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lhs,
                mlir::Value rhs);
/// linalg.transpose: result dim i = input dim perm[i].
mlir::Value transpose(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                      llvm::ArrayRef<int64_t> perm);
/// Sums `v` (whose dims are loops 0..rank-1) into a zero tensor of
/// `outType` read through `outMap` (a projected permutation of those
/// loops): loops absent from `outMap` are reduced.
mlir::Value sumInto(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                    mlir::AffineMap outMap, mlir::RankedTensorType outType);

/// The identity maps and all-parallel iterators of a rank-`rank` loop nest.
llvm::SmallVector<mlir::utils::IteratorType> parallel(unsigned rank);

/// Fails with a located error unless the named contraction `mm`
/// (linalg.matmul, linalg.batch_matmul) has its default indexing maps and no
/// cast: the rules rebuild the product from plain ops of the same kind.
template <typename OpTy>
llvm::LogicalResult requirePlainContraction(OpTy mm) {
  llvm::StringRef name = mm->getName().getStringRef();
  if (mm.hasUserDefinedMaps())
    return mm.emitError("VJP of ")
           << name << " with non-default indexing_maps is not supported";
  mlir::Type elt = mlir::getElementTypeOrSelf(mm.getResultTypes()[0]);
  if (mm.getCast() != mlir::linalg::TypeFn::cast_signed ||
      llvm::any_of(mm->getOperandTypes(), [&](mlir::Type t) {
        return mlir::getElementTypeOrSelf(t) != elt;
      }))
    return mm.emitError("VJP of ") << name << " with a cast is not supported";
  return llvm::success();
}

/// Whether `t` is a ranked tensor of a float element type.
bool isFloatTensor(mlir::Type t);

/// Succeeds when every tensor operand and result of `op` has a static
/// shape; otherwise emits a located error on `op` (the rules build their
/// temporaries with tensor.empty, which needs static shapes).
mlir::LogicalResult requireStaticShapes(mlir::Operation *op);
/// tensor.extract_slice of `v` with `type`'s shape at `offsets`, unit
/// strides (not rank-reducing).
mlir::Value slice(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                  llvm::ArrayRef<int64_t> offsets, mlir::RankedTensorType type);
/// `v` (static shape) as `type`, the same elements in the same order: `v`
/// itself when the types match, else a tensor.expand_shape or
/// tensor.collapse_shape; null when no single one of those does it.
mlir::Value reshape(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                    mlir::RankedTensorType type);

} // namespace autoshard::vjp

#endif // AUTOSHARD_TRAIN_VJPUTILS_H
