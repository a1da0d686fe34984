//===- DistBase.td - dist dialect definition ---------------*- tablegen -*-===//
//
// The `dist` dialect carries autoshard's device meshes, tensor layouts and
// per-operator strategies beside upstream `shard`.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_DIALECT_DIST_IR_DISTBASE_TD
#define AUTOSHARD_DIALECT_DIST_IR_DISTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::autoshard::dist";
  let summary = "Device meshes, tensor layouts and operator strategies";
  let description = [{
    `dist` describes how every tensor of a program is spread over a logical
    device mesh with named axes (`#dist.mesh`), which layout each value has
    (`#dist.layout`: per-dim split axes, pending partial reductions, uneven
    split sizes) and which strategy an operator runs with (`#dist.strategy`).
    `dist.annotate` pins a value's layout; `dist.reshard` is an explicit
    redistribution between two layouts. See docs/design.md.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::shard::ShardDialect"];
  let extraClassDeclaration = [{
    /// Defined beside the attribute storage classes (DistAttrs.cpp).
    void registerAttributes();
    /// Discardable attribute names understood on any operation.
    static constexpr llvm::StringLiteral kStrategyAttrName = "dist.strategy";
    static constexpr llvm::StringLiteral kPriorityAttrName = "dist.priority";
    static constexpr llvm::StringLiteral kMeshAttrName = "dist.mesh";
  }];
}

def Dist_ReductionKind : I32EnumAttr<"ReductionKind",
    "kind of a pending partial reduction", [
  I32EnumAttrCase<"Sum", 0, "sum">,
  I32EnumAttrCase<"Max", 1, "max">,
  I32EnumAttrCase<"Min", 2, "min">,
  I32EnumAttrCase<"Product", 3, "product">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::autoshard::dist";
}

#endif // AUTOSHARD_DIALECT_DIST_IR_DISTBASE_TD
