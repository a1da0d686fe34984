//===- DistDialect.h - dist dialect -----------------------------*- C++ -*-===//
#ifndef AUTOSHARD_DIALECT_DIST_IR_DISTDIALECT_H
#define AUTOSHARD_DIALECT_DIST_IR_DISTDIALECT_H

#include "autoshard/Support/DeviceMesh.h"
#include "autoshard/Support/TensorLayout.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include "autoshard/Dialect/Dist/IR/DistDialect.h.inc"
#include "autoshard/Dialect/Dist/IR/DistEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "autoshard/Dialect/Dist/IR/DistAttrs.h.inc"

#endif // AUTOSHARD_DIALECT_DIST_IR_DISTDIALECT_H
