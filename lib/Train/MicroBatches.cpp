//===- MicroBatches.cpp - Cutting a batch into micro-batches --------------===//

#include "autoshard/Train/MicroBatches.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace autoshard::train {

bool canCutMicroBatches(Type type, int64_t count, int64_t devices,
                        std::string &why) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || t.getRank() == 0 || !t.hasStaticShape()) {
    why = "is not a statically shaped tensor with a batch dim";
    return false;
  }
  if (t.getDimSize(0) % (count * devices) != 0) {
    why = "has a batch dim of " + std::to_string(t.getDimSize(0)) +
          ", which does not cut into " + std::to_string(count) +
          " micro-batches on each of " + std::to_string(devices) +
          " data-parallel devices";
    return false;
  }
  return true;
}

Value microBatch(OpBuilder &b, Location loc, Value batch, int64_t index,
                 int64_t count, int64_t devices) {
  auto type = cast<RankedTensorType>(batch.getType());
  ArrayRef<int64_t> rest = type.getShape().drop_front();
  int64_t rows = type.getDimSize(0) / (devices * count);
  // [B, rest...] -> [d, K, rows, rest...].
  SmallVector<int64_t> split = {devices, count, rows};
  llvm::append_range(split, rest);
  SmallVector<ReassociationIndices> groups = {{0, 1, 2}};
  for (int64_t i = 0; i < static_cast<int64_t>(rest.size()); ++i)
    groups.push_back({i + 3});
  auto splitType = RankedTensorType::get(split, type.getElementType());
  Value expanded =
      tensor::ExpandShapeOp::create(b, loc, splitType, batch, groups);
  // Micro-batch `index` of every shard: [d, 1, rows, rest...].
  SmallVector<OpFoldResult> offsets(split.size(), b.getIndexAttr(0));
  offsets[1] = b.getIndexAttr(index);
  SmallVector<OpFoldResult> sizes, strides(split.size(), b.getIndexAttr(1));
  for (int64_t s : split)
    sizes.push_back(b.getIndexAttr(s));
  sizes[1] = b.getIndexAttr(1);
  SmallVector<int64_t> sliceShape(split);
  sliceShape[1] = 1;
  auto sliceType = RankedTensorType::get(sliceShape, type.getElementType());
  Value slice = tensor::ExtractSliceOp::create(b, loc, sliceType, expanded,
                                               offsets, sizes, strides);
  // Back to [d * rows, rest...].
  SmallVector<int64_t> shape = {devices * rows};
  llvm::append_range(shape, rest);
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), slice,
      groups);
}

} // namespace autoshard::train
