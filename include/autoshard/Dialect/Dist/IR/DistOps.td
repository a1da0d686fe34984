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

#endif // AUTOSHARD_DIALECT_DIST_IR_DISTOPS_TD
