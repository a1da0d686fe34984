//===- DistOps.cpp - dist operations -------------------------------------===//

#include "autoshard/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace autoshard::dist;

static LogicalResult verifyLayoutFor(Operation *op, LayoutAttr layout,
                                     Type type, StringRef which) {
  std::string err =
      layout.verifyForShape(cast<RankedTensorType>(type).getShape());
  if (!err.empty())
    return op->emitOpError() << which << " layout: " << err;
  return success();
}

LogicalResult AnnotateOp::verify() {
  return verifyLayoutFor(*this, getLayout(), getInput().getType(), "the");
}

LogicalResult ReshardOp::verify() {
  if (getSource().getMesh() != getTarget().getMesh())
    return emitOpError("source and target layouts must be on the same mesh");
  if (failed(verifyLayoutFor(*this, getSource(), getInput().getType(),
                             "source")) ||
      failed(verifyLayoutFor(*this, getTarget(), getInput().getType(),
                             "target")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives emitted by --dist-partition
//===----------------------------------------------------------------------===//

/// The `shard.grid` a collective names, or a located error.
static FailureOr<shard::GridOp> lookupGrid(Operation *op,
                                           FlatSymbolRefAttr gridName,
                                           SymbolTableCollection &tables) {
  auto grid =
      tables.lookupNearestSymbolFrom<shard::GridOp>(op, gridName.getAttr());
  if (!grid)
    return op->emitOpError() << "refers to unknown shard.grid " << gridName;
  for (int64_t s : grid.getShape())
    if (ShapedType::isDynamic(s))
      return op->emitOpError() << "needs a static grid, " << gridName
                               << " has a dynamic axis";
  return grid;
}

static int64_t gridSize(shard::GridOp grid) {
  int64_t n = 1;
  for (int64_t s : grid.getShape())
    n *= s;
  return n;
}

/// Checks grid axes are in range and distinct; returns the group size.
static FailureOr<int64_t> verifyGridAxes(Operation *op, shard::GridOp grid,
                                         ArrayRef<int16_t> axes) {
  int64_t n = 1;
  llvm::SmallDenseSet<int16_t> seen;
  for (int16_t a : axes) {
    if (a < 0 || a >= grid.getRank())
      return op->emitOpError() << "grid axis " << a << " is out of range for "
                               << "a grid of rank " << grid.getRank();
    if (!seen.insert(a).second)
      return op->emitOpError() << "grid axis " << a << " is listed twice";
    n *= grid.getShape()[a];
  }
  return n;
}

LogicalResult PermuteOp::verify() {
  if (getSources().size() != getTargets().size())
    return emitOpError() << "has " << getSources().size() << " sources but "
                         << getTargets().size() << " targets";
  for (ArrayRef<int64_t> list : {getSources(), getTargets()}) {
    llvm::SmallDenseSet<int64_t> seen;
    for (int64_t p : list)
      if (!seen.insert(p).second)
        return emitOpError() << "mesh position " << p
                             << " appears twice among the "
                             << (list.data() == getSources().data()
                                     ? "sources"
                                     : "targets");
  }
  return success();
}

LogicalResult PermuteOp::verifySymbolUses(SymbolTableCollection &tables) {
  FailureOr<shard::GridOp> grid = lookupGrid(*this, getGridAttr(), tables);
  if (failed(grid))
    return failure();
  int64_t n = gridSize(*grid);
  for (ArrayRef<int64_t> list : {getSources(), getTargets()})
    for (int64_t p : list)
      if (p < 0 || p >= n)
        return emitOpError() << "mesh position " << p
                             << " is outside the grid of " << n << " devices";
  return success();
}

LogicalResult MakePartialOp::verify() {
  switch (getReduction()) {
  case shard::ReductionKind::Sum:
  case shard::ReductionKind::Product:
  case shard::ReductionKind::Max:
  case shard::ReductionKind::Min:
    return success();
  default:
    return emitOpError("supports only sum, product, max and min reductions");
  }
}

LogicalResult MakePartialOp::verifySymbolUses(SymbolTableCollection &tables) {
  FailureOr<shard::GridOp> grid = lookupGrid(*this, getGridAttr(), tables);
  if (failed(grid) || failed(verifyGridAxes(*this, *grid, getGridAxes())))
    return failure();
  return success();
}

/// Shared checks of the uneven gather/slice: `whole` is the tensor holding
/// the full extent along `axis`, `piece` the one holding a device's shard.
static LogicalResult verifyUneven(Operation *op, RankedTensorType whole,
                                  RankedTensorType piece, int64_t axis,
                                  ArrayRef<int64_t> sizes) {
  if (axis < 0 || axis >= whole.getRank())
    return op->emitOpError() << "axis " << axis << " is out of range for rank "
                             << whole.getRank();
  if (sizes.empty())
    return op->emitOpError("needs at least one shard size");
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return op->emitOpError("shard sizes must be non-negative");
    sum += s;
  }
  if (!whole.isDynamicDim(axis) && whole.getDimSize(axis) != sum)
    return op->emitOpError() << "shard sizes sum to " << sum
                             << " but the full extent of axis " << axis
                             << " is " << whole.getDimSize(axis);
  bool allEqual = llvm::all_equal(sizes);
  if (!piece.isDynamicDim(axis) &&
      (!allEqual || piece.getDimSize(axis) != sizes.front()))
    return op->emitOpError() << "the shard's extent along axis " << axis
                             << " must be dynamic when shard sizes differ, or "
                                "equal to the common size";
  for (int64_t d = 0; d < whole.getRank(); ++d)
    if (d != axis && !whole.isDynamicDim(d) && !piece.isDynamicDim(d) &&
        whole.getDimSize(d) != piece.getDimSize(d))
      return op->emitOpError() << "dim " << d << " must not change";
  return success();
}

static LogicalResult verifyUnevenGroup(Operation *op,
                                       SymbolTableCollection &tables,
                                       FlatSymbolRefAttr gridName,
                                       ArrayRef<int16_t> axes,
                                       ArrayRef<int64_t> sizes) {
  FailureOr<shard::GridOp> grid = lookupGrid(op, gridName, tables);
  if (failed(grid))
    return failure();
  FailureOr<int64_t> n = verifyGridAxes(op, *grid, axes);
  if (failed(n))
    return failure();
  if (static_cast<int64_t>(sizes.size()) != *n)
    return op->emitOpError() << "has " << sizes.size()
                             << " shard sizes but the device group has " << *n
                             << " devices";
  return success();
}

LogicalResult AllGatherUnevenOp::verify() {
  return verifyUneven(*this, getResult().getType(), getInput().getType(),
                      getGatherAxis().getSExtValue(), getSizes());
}

LogicalResult
AllGatherUnevenOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyUnevenGroup(*this, tables, getGridAttr(), getGridAxes(),
                           getSizes());
}

LogicalResult AllSliceUnevenOp::verify() {
  return verifyUneven(*this, getInput().getType(), getResult().getType(),
                      getSliceAxis().getSExtValue(), getSizes());
}

LogicalResult AllSliceUnevenOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyUnevenGroup(*this, tables, getGridAttr(), getGridAxes(),
                           getSizes());
}

#define GET_OP_CLASSES
#include "autoshard/Dialect/Dist/IR/DistOps.cpp.inc"
