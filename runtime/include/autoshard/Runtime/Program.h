//===- Program.h - The runtime's MLIR-free plan -----------------*- C++ -*-===//
//
// A Program is what one rank executes: a flat list of instructions over SSA
// values (tensors; scalars and indices are rank-0 tensors, index is i64),
// the mesh it runs on and, for every function argument and result, the
// global shape and layout needed to cut global inputs into shards and to
// assemble global outputs. The loader (lib/Lower) builds it from a
// partitioned MLIR module; nothing here depends on MLIR, so the runtime can
// be embedded without the compiler, and plans can be built by hand in tests.
//
// Value semantics: every instruction defines fresh result values. Operands
// marked as "inits" (destination-style outputs) are read as the initial
// result content; the executor copies them unless the init dies at this
// instruction and its storage is not shared, in which case it is reused.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_PROGRAM_H
#define AUTOSHARD_RUNTIME_PROGRAM_H

#include "autoshard/Analysis/Collective.h"
#include "autoshard/Runtime/Tensor.h"
#include "autoshard/Support/DeviceMesh.h"
#include "autoshard/Support/TensorLayout.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace autoshard::rt {

using ValueId = int32_t;

/// Marks a static offset/size/stride taken from the next dynamic operand
/// (a rank-0 i64 value), like MLIR's ShapedType::kDynamic.
constexpr int64_t kDynamic = INT64_MIN;

//===----------------------------------------------------------------------===//
// Scalar bytecode: the body of a generic loop nest.
//===----------------------------------------------------------------------===//

/// Registers hold a double (float types) or an int64 (integer types, i1 as 0
/// or 1). Every instruction rounds/wraps its result to `type`, so f32 and i32
/// arithmetic is bit-exact with MLIR's semantics (a single +,-,*,/ or sqrt
/// computed in double and rounded to f32 is correctly rounded).
enum class ScalarOp : uint8_t {
  // Leaves.
  Const,    // dst = imm (int types) / fimm (float types)
  Index,    // dst = current index of loop `imm`
  Captured, // dst = captures[imm][regs in `args`...] (rank-0: no args)
  // Float and integer arithmetic (the domain follows `type`).
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Max,
  Min, // Div/Rem/Max/Min: signed for ints
  DivU,
  RemU,
  MaxU,
  MinU,
  MaxNum,
  MinNum, // NaN-ignoring float max/min
  Neg,
  Abs,
  // Integer bit ops.
  And,
  Or,
  Xor,
  Shl,
  ShrS,
  ShrU,
  // Float math.
  Exp,
  Exp2,
  Expm1,
  Log,
  Log2,
  Log1p,
  Sqrt,
  Rsqrt,
  Tanh,
  Sin,
  Cos,
  Tan,
  Erf,
  Atan,
  Atan2,
  Pow,
  Floor,
  Ceil,
  Round,
  RoundEven,
  Trunc,
  Fma,
  // Comparisons: `imm` is the arith.cmpf / arith.cmpi predicate number.
  CmpF,
  CmpI,
  Select, // dst = a ? b : c
  // Conversions: `type` is the result type, `srcType` the operand type.
  IToF,
  UIToF,
  FToI,
  FToUI,
  FCast,
  ICast,
  ZExt,
};

/// Scalar types of registers (the element types plus nothing else).
using ScalarType = DType;

struct ScalarInst {
  ScalarOp op = ScalarOp::Const;
  ScalarType type = DType::F32;    // result type
  ScalarType srcType = DType::F32; // operand type for compares/conversions
  int32_t dst = 0, a = -1, b = -1, c = -1;
  int64_t imm = 0;
  double fimm = 0.0;
  std::vector<int32_t> args; // Captured: index registers
};

/// An affine map from loop indices to one operand's indices:
/// index[r] = sum_l coeffs[r * numLoops + l] * i_l + consts[r].
struct AffineMapSpec {
  int64_t numResults = 0;
  std::vector<int64_t> coeffs;
  std::vector<int64_t> consts;
};

/// A linalg.generic-like loop nest: for every point of `loopRanges`, load
/// operand elements through their maps into registers 0..N-1 (inputs then
/// inits), run `body`, and store `yields[k]` into output k at its map. The
/// iteration order is row-major over the loops; reductions accumulate in the
/// output as in MLIR's sequential semantics.
struct GenericSpec {
  std::vector<int64_t> loopRanges;
  int32_t numInputs = 0;
  int32_t numOutputs = 0;
  int32_t numCaptures = 0;
  std::vector<AffineMapSpec> maps; // numInputs + numOutputs
  std::vector<ScalarInst> body;
  int32_t numRegs = 0;
  std::vector<int32_t> yields; // one per output
  /// The compiled form of this loop nest: a symbol of the program's
  /// kernelLibrary (KernelLibrary.h), or "" to interpret `body`. The CPU
  /// executor calls it instead of the interpreter; other backends ignore it.
  std::string kernel;
  /// The CUDA form (lib/Lower/GpuKernelCompiler.cpp): an entry of
  /// Program::gpuModule taking the same device pointers as `kernel` (inputs,
  /// outputs, captures) as separate parameters, launched over `gpuThreads`
  /// threads (one per point of the parallel loops; the kernel guards the
  /// tail). "" runs the CUDA backend's bytecode kernel instead.
  std::string gpuKernel;
  int64_t gpuThreads = 0;
};

//===----------------------------------------------------------------------===//
// Instructions.
//===----------------------------------------------------------------------===//

enum class OpKind : uint8_t {
  Constant,     // results[0] = constant
  Empty,        // results[0] = zeros of its type
  Fill,         // results[0] = splat of scalar operands[0]
  Reshape,      // results[0] = operands[0] with the result shape (row-major)
  Matmul,       // operands: A, B, C(init)[, bias]; C += op(A) op(B), then
                // the epilogue
  BatchMatmul,  // same with a leading batch dim on all three
  Generic,      // operands: ins, inits, captures; results: one per init
  Transpose,    // operands: in, init; result[i] dims = in dims[perm[i]]
  Softmax,      // operands: in, init; along `dim`
  Gather,       // operands: source, indices, [init]; tensor.gather over dims
  ExtractSlice, // operands: source, dynamic offsets...; sizes = `sizes`,
                // result shape may drop unit dims (rank reduction)
  InsertSlice,  // operands: source, dest, dynamic offsets...
  Concat,       // operands: pieces; along `dim`
  Pad,          // operands: source, pad value (rank 0), dynamic lows...;
                // low = offsets, high = sizes
  ProcessIndex, // results: mesh coordinate on each of `axes` (rank-0 i64);
                // `dim` == 1 means one result: the linear position
  Collective,   // operands[0] -> results[0], see `collective`
  // 2-D NCHW window ops of f32 tensors whose input the program has padded
  // already; `generic` holds the same op as a loop nest, which backends
  // without their own kernel run instead (operands as in that nest).
  Conv2D, // operands: in, weight [F, C, KH, KW], init; init += conv;
          // strides = window strides, offsets = dilations
  Pool2D, // operands: in, window, init; init = max(init, window max) (dim 0)
          // or init += window sum (dim 1); sizes = [KH, KW], strides,
          // offsets = dilations
};

std::string_view stringifyOpKind(OpKind kind);

/// What a GEMM does to its result before storing it (cuBLASLt's epilogues):
/// add a bias vector along the rows (bias[j] to every C[..., i, j]), then
/// optionally ReLU (max(x, 0)), GELU in its tanh form,
/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), or GELU in its erf form
/// (torch's default nn.GELU()), 0.5 x (1 + erf(x / sqrt(2))). Values are only
/// added (plan files name them, so old plans keep reading).
enum class GemmEpilogue : uint8_t {
  None,
  Bias,
  Relu,
  BiasRelu,
  Gelu,
  BiasGelu,
  GeluErf,
  BiasGeluErf,
};

std::string_view stringifyGemmEpilogue(GemmEpilogue epilogue);
std::optional<GemmEpilogue> symbolizeGemmEpilogue(std::string_view name);
/// Whether the epilogue reads a bias vector (the GEMM's operand 3).
inline bool hasBias(GemmEpilogue e) {
  return e == GemmEpilogue::Bias || e == GemmEpilogue::BiasRelu ||
         e == GemmEpilogue::BiasGelu || e == GemmEpilogue::BiasGeluErf;
}

struct Instruction {
  OpKind kind = OpKind::Constant;
  std::vector<ValueId> operands;
  std::vector<ValueId> results;
  /// Where it came from (e.g. "model.mlir:12:5 linalg.matmul"), for errors.
  std::string location;

  // Matmul / BatchMatmul. A and B are f32, f64, or both bf16 or both f16
  // with C f32 (FP32 accumulation) or of their type.
  bool transA = false, transB = false;
  /// Compute with TF32 inputs where the backend has it; the CPU computes in
  /// FP32, which is at least as accurate.
  bool tf32 = false;
  /// Applied to C after the product is added (in FP32, before a bf16/f16
  /// C is rounded); with a bias, operands[3] is a rank-1 vector of C's
  /// type and length C's last dim, the same for every batch entry.
  GemmEpilogue epilogue = GemmEpilogue::None;
  // Transpose: permutation; Gather: gather dims; ProcessIndex: mesh axes.
  std::vector<int64_t> perm;
  // Softmax / Concat: the dim; ProcessIndex: 1 for the linear index.
  int64_t dim = -1;
  // ExtractSlice / InsertSlice: offsets, sizes, strides (kDynamic entries
  // come from the dynamic operands, in order). Pad: offsets = low pads,
  // sizes = high pads.
  std::vector<int64_t> offsets, sizes, strides;
  // Generic.
  std::shared_ptr<const GenericSpec> generic;
  // Constant.
  Tensor constant;
  // Collective: kind, mesh axes (groups as DeviceMesh::getGroup), dim
  // (gather/slice/scatter dim; AllToAll: the dim that becomes split), srcDim
  // (AllToAll: the dim that becomes gathered), reduction, Permute pairs.
  // Uneven steps: `groupExtents[k]` is the extent along `dim` held by group
  // member k (empty: even split).
  CollectiveStep collective;
  std::vector<int64_t> groupExtents;
};

/// The type of one SSA value.
struct ValueInfo {
  DType type = DType::F32;
  Shape shape;
};

/// A function argument or result: its SSA value, global shape and layout.
struct ProgramIO {
  ValueId value = -1;
  std::string name;    // dist.name, else "argN" / "resultN"
  std::string file;    // dist.weight: a .npy with the global value
  /// dist.weight_checksum: what the compiler wrote to `file` (xxh3-64 of its
  /// bytes, 16 hex digits); empty if not recorded.
  std::string fileChecksum;
  Shape globalShape;   // dist.global_type, else the local shape
  TensorLayout layout; // dist.layout, else replicated
  /// Results only (dist.tied_arg): the input this output replaces when the
  /// program runs again (a training step's updated parameter or optimizer
  /// state); -1 if none. The loader guarantees equal local type and layout,
  /// so the local shard is fed back as is.
  int tiedInput = -1;
  /// Arguments only (dist.init = "zeros"): starts at zero rather than from
  /// the seeded initialiser (optimizer state).
  bool zeroInit = false;
};

struct Program {
  /// The mesh (a one-device mesh for an unpartitioned program).
  DeviceMesh mesh;
  std::vector<ValueInfo> values;
  std::vector<ProgramIO> inputs;
  std::vector<ProgramIO> outputs;
  std::vector<Instruction> instructions;
  /// Shared library of the compiled loop nests (GenericSpec::kernel), made
  /// by the compiler (lib/Lower/KernelCompiler.cpp); "" when none is.
  std::string kernelLibrary;
  /// PTX text of the generated CUDA kernels (GenericSpec::gpuKernel), loaded
  /// by the CUDA backend; "" when none were generated.
  std::string gpuModule;

  ValueId addValue(DType type, Shape shape) {
    values.push_back({type, std::move(shape)});
    return static_cast<ValueId>(values.size() - 1);
  }
  /// Checks ids, operand counts and shapes the kernels rely on; returns an
  /// error message or "".
  std::string verify() const;
  /// Which backend the compiled loop nests were made for, as the plan
  /// records it by what it carries: "cpu" (a kernel library), "cuda" (PTX)
  /// or "" (none: every backend interprets the bytecode).
  std::string_view getKernelBackend() const;
  /// A one-line warning when running on `backend` ("cpu" / "cuda") leaves
  /// the kernels compiled for the other one unused, "" otherwise.
  std::string getKernelBackendWarning(std::string_view backend) const;
  /// A readable listing (autoshard-run --print-plan).
  std::string str() const;
};

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_PROGRAM_H
