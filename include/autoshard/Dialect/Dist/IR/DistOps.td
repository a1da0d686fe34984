//===- DistOps.td - dist operations ------------------------*- tablegen -*-===//
#ifndef AUTOSHARD_DIALECT_DIST_IR_DISTOPS_TD
#define AUTOSHARD_DIALECT_DIST_IR_DISTOPS_TD

include "autoshard/Dialect/Dist/IR/DistAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

def Dist_AnnotateOp : Dist_Op<"annotate",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "pin the layout of a value";
  let description = [{
    Fixes the layout of `input` (and of the result, which is the same value
    seen by its users). Propagation treats it as a user constraint; when two
    annotations conflict the higher `priority` wins (0 when absent).

    ```mlir
    %w1 = dist.annotate %arg1 : tensor<64x256xf32>
        as #dist.layout<#mesh, [[], [mp]]> priority 1
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Dist_LayoutAttr:$layout,
                       DefaultValuedAttr<I64Attr, "0">:$priority);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `:` type($input) `as` qualified($layout) (`priority` $priority^)?
    attr-dict
  }];
  let hasVerifier = 1;
}

def Dist_ReshardOp : Dist_Op<"reshard",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "explicit redistribution between two layouts";
  let description = [{
    The value keeps its global meaning; only its distribution changes from
    `source` to `target` (both on the same mesh). Partitioning turns it into
    the cheapest collective sequence that performs it.

    ```mlir
    %1 = dist.reshard %0 : tensor<8x8xf32>
        from #dist.layout<#mesh, [[dp], []]> to #dist.layout<#mesh, [[], [dp]]>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Dist_LayoutAttr:$source,
                       Dist_LayoutAttr:$target);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `:` type($input) `from` qualified($source) `to` qualified($target)
    attr-dict
  }];
  let hasVerifier = 1;
}


//===----------------------------------------------------------------------===//
// Collectives that upstream `shard` lacks (emitted by --dist-partition).
//
// All take the grid by symbol (the `shard.grid` the partitioner emits, same
// shape as the layouts' #dist.mesh). Mesh positions and in-group indices
// follow upstream `shard` and autoshard's DeviceMesh: positions are row-major
// over the grid (axis 0 most major); the index of a device inside the group of
// `grid_axes` is row-major over the listed axes in the order listed
// (DeviceMesh::getGroup / getIndexInGroup).
//===----------------------------------------------------------------------===//

include "mlir/IR/SymbolInterfaces.td"

// Upstream's attributes, declared here without including ShardBase.td (its
// enums would be generated a second time into DistEnums.h.inc).
def Dist_GridAxesAttr : DenseArrayAttrBase<"DenseI16ArrayAttr", "int16_t", "i16">;
def Dist_ShardReductionAttr : Attr<
    CPred<"::llvm::isa<::mlir::shard::ReductionKindAttr>($_self)">,
    "upstream shard reduction kind"> {
  let storageType = "::mlir::shard::ReductionKindAttr";
  let returnType = "::mlir::shard::ReductionKind";
  let convertFromStorage = "$_self.getValue()";
  let constBuilderCall =
      "::mlir::shard::ReductionKindAttr::get($_builder.getContext(), $0)";
}

class Dist_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Dist_Op<mnemonic, !listconcat(traits,
          [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>])>;

def Dist_PermuteOp : Dist_CollectiveOp<"permute",
    [AllTypesMatch<["input", "result"]>]> {
  let summary = "collective permute of whole local shards between mesh positions";
  let description = [{
    Point-to-point moves of whole local tensors: for every `i`, the device at
    mesh position `targets[i]` receives the input of the device at position
    `sources[i]`. A device that is no target keeps its own input. Sources are
    distinct, targets are distinct, all are positions of `grid` (row-major
    linear indices). Every device has the same local type. Emitted for the
    planner's `Permute` step, e.g. the axis swap `[[dp], [mp]] -> [[mp], [dp]]`
    on a 2x2 grid moves (0,1) <-> (1,0):

    ```mlir
    %1 = dist.permute %0 on @mesh sources = [1, 2] targets = [2, 1]
        : tensor<4x4xf32>
    ```
    Upstream `shard` has only `shift` (a uniform shift along one axis) and
    send/recv pairs; a general permutation needs this op.
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$grid,
                       DenseI64ArrayAttr:$sources, DenseI64ArrayAttr:$targets);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `sources` `=` $sources `targets` `=` $targets
    attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Dist_MakePartialOp : Dist_CollectiveOp<"make_partial",
    [AllTypesMatch<["input", "result"]>]> {
  let summary = "turn a value replicated over grid axes into pending partial terms";
  let description = [{
    Local only (no communication). Over the group of `grid_axes` the input is
    replicated; afterwards the group holds terms whose `reduction` is the
    input: for `sum` the device with in-group index 0 keeps the input and the
    others hold zeros; for `product` index 0 keeps it and the others hold
    ones; for `max`/`min` every device keeps it (idempotent). Emitted for the
    planner's `MakePartial` step, and after a constant whose layout is
    partial. Only sum, product, max and min are accepted.

    ```mlir
    %1 = dist.make_partial %0 on @mesh grid_axes = [1] reduction = <sum>
        : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$grid,
                       Dist_GridAxesAttr:$grid_axes,
                       Dist_ShardReductionAttr:$reduction);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `grid_axes` `=` $grid_axes `reduction` `=` $reduction
    attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Dist_AllGatherUnevenOp : Dist_CollectiveOp<"all_gather_uneven",
    [SameOperandsAndResultElementType, SameOperandsAndResultRank]> {
  let summary = "all-gather of shards of different sizes";
  let description = [{
    Like `shard.all_gather`, but the device with in-group index `i` (row-major
    over `grid_axes`) contributes `sizes[i]` slices along `gather_axis`
    (its whole local extent there). Every device of the group receives the
    concatenation in in-group order; the result's `gather_axis` extent is the
    sum of `sizes`. The input's `gather_axis` extent is dynamic when the sizes
    differ (each device's real extent is its own size); other dims match.

    ```mlir
    %1 = dist.all_gather_uneven %0 on @mesh grid_axes = [0] gather_axis = 0
        sizes = [2, 5, 3] : tensor<?x4xf32> -> tensor<10x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$grid,
                       Dist_GridAxesAttr:$grid_axes, IndexAttr:$gather_axis,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `grid_axes` `=` $grid_axes `gather_axis` `=` $gather_axis
    `sizes` `=` $sizes attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Dist_AllSliceUnevenOp : Dist_CollectiveOp<"all_slice_uneven",
    [SameOperandsAndResultElementType, SameOperandsAndResultRank]> {
  let summary = "local slice into shards of different sizes";
  let description = [{
    Like `shard.all_slice` (local, no communication): the device with
    in-group index `i` keeps `sizes[i]` slices of `slice_axis` starting at
    `sizes[0] + ... + sizes[i-1]`. The sizes sum to the input's extent; the
    result's `slice_axis` extent is dynamic when the sizes differ.

    ```mlir
    %1 = dist.all_slice_uneven %0 on @mesh grid_axes = [0] slice_axis = 0
        sizes = [2, 5, 3] : tensor<10x4xf32> -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$grid,
                       Dist_GridAxesAttr:$grid_axes, IndexAttr:$slice_axis,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `grid_axes` `=` $grid_axes `slice_axis` `=` $slice_axis
    `sizes` `=` $sizes attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // AUTOSHARD_DIALECT_DIST_IR_DISTOPS_TD
