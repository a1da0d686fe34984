//===- DistAttrs.td - dist attributes ----------------------*- tablegen -*-===//
#ifndef AUTOSHARD_DIALECT_DIST_IR_DISTATTRS_TD
#define AUTOSHARD_DIALECT_DIST_IR_DISTATTRS_TD

include "autoshard/Dialect/Dist/IR/DistBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

class Dist_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Dist_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Dist_MeshAttr : Dist_Attr<"Mesh", "mesh"> {
  let summary = "a logical device mesh with named axes";
  let description = [{
    A row-major logical mesh. Axes are named and sized; optional per-axis link
    figures (bandwidth in GB/s, latency in us) feed the cost model; optional
    device ids say which device holds each mesh position.

    ```mlir
    #mesh = #dist.mesh<[dp = 2, mp = 4]>
    #fast = #dist.mesh<[node = 2, gpu = 4], bandwidth = [25.0, 300.0],
                       latency = [5.0, 1.0], devices = [0, 1, 2, 3, 4, 5, 6, 7]>
    ```
    A mesh is an attribute, not a symbol, so every layout carries its mesh and
    shard shapes can be computed without a symbol lookup (see docs/design.md).
  }];
  let parameters = (ins
    ArrayRefParameter<"::mlir::StringAttr", "axis names">:$axisNames,
    ArrayRefParameter<"int64_t", "axis sizes">:$axisSizes,
    OptionalParameter<"::mlir::DenseF64ArrayAttr", "GB/s per axis">:$bandwidth,
    OptionalParameter<"::mlir::DenseF64ArrayAttr", "us per axis">:$latency,
    OptionalArrayRefParameter<"int64_t", "device id per position">:$deviceIds
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumAxes() const { return getAxisSizes().size(); }
    /// Link figures per axis; empty when not given.
    llvm::ArrayRef<double> getBandwidthValues() const {
      return getBandwidth() ? getBandwidth().asArrayRef()
                            : llvm::ArrayRef<double>();
    }
    llvm::ArrayRef<double> getLatencyValues() const {
      return getLatency() ? getLatency().asArrayRef()
                          : llvm::ArrayRef<double>();
    }
    int64_t getNumDevices() const;
    std::optional<int64_t> getAxisIndex(llvm::StringRef name) const;
    /// The MLIR-free mesh used by the cost model, planner and runtime.
    ::autoshard::DeviceMesh toDeviceMesh() const;
    static MeshAttr get(::mlir::MLIRContext *ctx,
                        const ::autoshard::DeviceMesh &mesh);
  }];
}

def Dist_LayoutAttr : Dist_Attr<"Layout", "layout"> {
  let summary = "how one tensor is spread over a mesh";
  let description = [{
    For every tensor dim, the ordered list of mesh axes it is split over (major
    to minor); the axes on which the value is a pending partial reduction,
    with its kind; optional explicit uneven shard sizes for a dim.

    ```mlir
    #dist.layout<#mesh, [[dp], []]>                    // rows on dp
    #dist.layout<#mesh, [[dp, mp], []]>                // rows on dp then mp
    #dist.layout<#mesh, [[dp], []], partial = sum[mp]> // pending sum over mp
    #dist.layout<#mesh, [[mp] sizes(3, 5), []]>        // uneven rows on mp=2
    ```
  }];
  let parameters = (ins
    "MeshAttr":$mesh,
    ArrayRefParameter<"::mlir::DenseI64ArrayAttr", "axes per dim">:$dimAxes,
    ArrayRefParameter<"int64_t", "partial axes">:$partialAxes,
    "ReductionKind":$partialKind,
    ArrayRefParameter<"::mlir::DenseI64ArrayAttr",
                      "uneven sizes per dim (empty: even)">:$unevenSizes
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getDimAxes().size(); }
    /// The MLIR-free layout (axis indices into getMesh()).
    ::autoshard::TensorLayout toTensorLayout() const;
    static LayoutAttr get(MeshAttr mesh, const ::autoshard::TensorLayout &l);
    static LayoutAttr getReplicated(MeshAttr mesh, int64_t rank);
    /// Checks the layout against a concrete tensor shape; returns an error
    /// message or "".
    std::string verifyForShape(llvm::ArrayRef<int64_t> shape) const;
    /// Local shard shape / offsets on the device at mesh position `pos`.
    llvm::SmallVector<int64_t> getLocalShape(llvm::ArrayRef<int64_t> shape,
                                             int64_t pos) const;
    llvm::SmallVector<int64_t> getLocalOffsets(llvm::ArrayRef<int64_t> shape,
                                               int64_t pos) const;
    /// Prints / parses the part after the mesh: `[[dp], []] partial = ...`.
    void printBody(::mlir::AsmPrinter &printer) const;
    static LayoutAttr parseBody(::mlir::AsmParser &parser, MeshAttr mesh);
  }];
}

def Dist_StrategyAttr : Dist_Attr<"Strategy", "strategy"> {
  let summary = "the layouts an operator runs with";
  let description = [{
    The layouts of an operation's operands and results on one mesh. Results
    may be omitted (then they are derived). MindSpore-style split tuples are
    sugar, normalised to named axes when parsed:

    ```mlir
    // named form
    #dist.strategy<#mesh, in = [[[dp], []], [[], [mp]]], out = [[[dp], [mp]]]>
    // split tuples on mesh [dp = 2, mp = 4]: the same operands
    #dist.strategy<#mesh, splits = [[2, 1], [1, 4]]>
    ```
    A split count maps to the set of unused axes whose sizes multiply to it;
    when several sets fit, the dims of a tensor take axes in mesh order; if
    that still leaves a choice the parser reports the mapping as ambiguous.
  }];
  let parameters = (ins
    "MeshAttr":$mesh,
    ArrayRefParameter<"LayoutAttr", "operand layouts">:$operands,
    ArrayRefParameter<"LayoutAttr", "result layouts (may be empty)">:$results
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // AUTOSHARD_DIALECT_DIST_IR_DISTATTRS_TD
