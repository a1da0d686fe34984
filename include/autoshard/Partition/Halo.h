//===- Halo.h - Spatially split convolutions and pools ----------*- C++ -*-===//
//
// A 2-D NCHW conv or pool (linalg.conv_2d_nchw_fchw, conv_2d_ngchw_gfchw,
// pooling_nchw_max/sum) whose output rows or columns are split while its
// (padded) input is whole on them: each device computes its own output rows
// from the window of input rows they read. When that whole input is only the
// all-gather of a tensor split the same way, padded for this op, each device
// instead receives the halo rows its window needs from its two neighbours
// (dist.permute) and pads only at the mesh's edges: MindSpore's H/W split.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_PARTITION_HALO_H
#define AUTOSHARD_PARTITION_HALO_H

#include "autoshard/Partition/SpmdBuilder.h"
#include "autoshard/Support/TensorLayout.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace autoshard {

/// Whether `op` is a window op whose result layout splits a spatial dim
/// (the case localiseSpatialWindow handles).
bool isSpatiallySplitWindow(mlir::Operation *op,
                            const TensorLayout &resultLayout);

/// Replaces the local operand 0 of `op` (still of global result type) by the
/// rows and columns this device's output needs: a halo exchange when the
/// input is a pad of all-gathers over the output's axes (the pad and the
/// gathers, then unused, are erased), else a slice of the whole input.
mlir::LogicalResult localiseSpatialWindow(mlir::linalg::LinalgOp op,
                                          const TensorLayout &resultLayout,
                                          const SpmdBuilder &spmd);

} // namespace autoshard

#endif // AUTOSHARD_PARTITION_HALO_H
