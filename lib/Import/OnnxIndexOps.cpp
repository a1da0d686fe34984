//===- OnnxIndexOps.cpp - Indexing ONNX ops: gathers, scatters, masks -----===//
//
// Ops that read or write by computed index. Each is a linalg.generic whose
// body finds its element with linalg.index and tensor.extract (a gather the
// runtime evaluates as a captured read), so no new kernel is needed.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <numeric>

using namespace mlir;
using namespace autoshard::onnx_import;
using mlir::utils::IteratorType;

namespace {

/// Size: the element count, known from the static shape.
LogicalResult convertSize(NodeImporter &n, StringRef) {
  HostTensor t;
  t.kind = ElemKind::I64;
  t.i = {n.in(0).constant ? n.in(0).constant->numel() : 1};
  if (!n.in(0).constant)
    for (int64_t d : n.in(0).shape)
      t.i[0] *= d;
  n.setOutput(0, std::move(t));
  return success();
}

} // namespace

void autoshard::onnx_import::registerIndexOps(OpTable &t) {
  t["Size"] = convertSize;
}
