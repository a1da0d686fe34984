//===- Program.cpp - Plan verification and printing -----------------------===//

#include "autoshard/Runtime/Program.h"

#include <sstream>

using namespace autoshard;
using namespace autoshard::rt;

std::string_view autoshard::rt::stringifyOpKind(OpKind kind) {
  switch (kind) {
  case OpKind::Constant:
    return "constant";
  case OpKind::Empty:
    return "empty";
  case OpKind::Fill:
    return "fill";
  case OpKind::Reshape:
    return "reshape";
  case OpKind::Matmul:
    return "matmul";
  case OpKind::BatchMatmul:
    return "batch_matmul";
  case OpKind::Generic:
    return "generic";
  case OpKind::Transpose:
    return "transpose";
  case OpKind::Softmax:
    return "softmax";
  case OpKind::Gather:
    return "gather";
  case OpKind::ExtractSlice:
    return "extract_slice";
  case OpKind::InsertSlice:
    return "insert_slice";
  case OpKind::Concat:
    return "concat";
  case OpKind::Pad:
    return "pad";
  case OpKind::ProcessIndex:
    return "process_index";
  case OpKind::Collective:
    return "collective";
  case OpKind::Conv2D:
    return "conv2d";
  case OpKind::Pool2D:
    return "pool2d";
  }
  return "?";
}

std::string_view autoshard::rt::stringifyGemmEpilogue(GemmEpilogue epilogue) {
  switch (epilogue) {
  case GemmEpilogue::None:
    return "none";
  case GemmEpilogue::Bias:
    return "bias";
  case GemmEpilogue::Relu:
    return "relu";
  case GemmEpilogue::BiasRelu:
    return "bias_relu";
  case GemmEpilogue::Gelu:
    return "gelu";
  case GemmEpilogue::BiasGelu:
    return "bias_gelu";
  case GemmEpilogue::GeluErf:
    return "gelu_erf";
  case GemmEpilogue::BiasGeluErf:
    return "bias_gelu_erf";
  }
  return "?";
}

std::optional<GemmEpilogue>
autoshard::rt::symbolizeGemmEpilogue(std::string_view name) {
  for (GemmEpilogue e :
       {GemmEpilogue::None, GemmEpilogue::Bias, GemmEpilogue::Relu,
        GemmEpilogue::BiasRelu, GemmEpilogue::Gelu, GemmEpilogue::BiasGelu,
        GemmEpilogue::GeluErf, GemmEpilogue::BiasGeluErf})
    if (stringifyGemmEpilogue(e) == name)
      return e;
  return std::nullopt;
}

/// Why a GEMM's epilogue does not fit its operands, or "".
static std::string checkEpilogue(const Instruction &inst,
                                 const std::vector<ValueInfo> &values) {
  bool gemm = inst.kind == OpKind::Matmul || inst.kind == OpKind::BatchMatmul;
  if (!gemm)
    return inst.epilogue == GemmEpilogue::None ? ""
                                               : "an epilogue on a non-GEMM";
  size_t expected = hasBias(inst.epilogue) ? 4 : 3;
  if (inst.operands.size() != expected)
    return "epilogue " + std::string(stringifyGemmEpilogue(inst.epilogue)) +
           " needs " + std::to_string(expected) + " operands";
  if (expected == 3)
    return "";
  const ValueInfo &c = values[inst.operands[2]];
  const ValueInfo &bias = values[inst.operands[3]];
  if (bias.type != c.type || bias.shape.size() != 1 || c.shape.empty() ||
      bias.shape[0] != c.shape.back())
    return "the bias must be a vector of the result's type and length its "
           "last dim";
  return "";
}

/// Minimum operand / exact result counts per kind (-1: any).
static std::pair<int, int> getArity(const Instruction &inst) {
  switch (inst.kind) {
  case OpKind::Constant:
  case OpKind::Empty:
    return {0, 1};
  case OpKind::Fill:
  case OpKind::Reshape:
  case OpKind::ExtractSlice:
  case OpKind::Collective:
    return {1, 1};
  case OpKind::Matmul:
  case OpKind::BatchMatmul:
  case OpKind::Conv2D:
  case OpKind::Pool2D:
    return {3, 1};
  case OpKind::Generic:
    return {0, -1};
  case OpKind::Transpose:
  case OpKind::Softmax:
  case OpKind::Gather:
  case OpKind::InsertSlice:
  case OpKind::Pad:
    return {2, 1};
  case OpKind::Concat:
    return {1, 1};
  case OpKind::ProcessIndex:
    return {0, -1};
  }
  return {0, -1};
}

std::string Program::verify() const {
  std::string err = mesh.validate();
  if (!err.empty())
    return "invalid mesh: " + err;
  int64_t numValues = static_cast<int64_t>(values.size());
  std::vector<bool> defined(numValues, false);
  auto checkId = [&](ValueId id) { return id >= 0 && id < numValues; };
  for (const ProgramIO &in : inputs) {
    if (!checkId(in.value))
      return "input '" + in.name + "' refers to no value";
    if (defined[in.value])
      return "input '" + in.name + "' defined twice";
    defined[in.value] = true;
    if (static_cast<int64_t>(in.globalShape.size()) !=
        static_cast<int64_t>(values[in.value].shape.size()))
      return "input '" + in.name + "': global and local ranks differ";
    std::string e = in.layout.validate(mesh, &in.globalShape);
    if (!e.empty())
      return "input '" + in.name + "': " + e;
  }
  for (size_t i = 0; i < instructions.size(); ++i) {
    const Instruction &inst = instructions[i];
    std::string where = "instruction " + std::to_string(i) + " (" +
                        std::string(stringifyOpKind(inst.kind)) +
                        (inst.location.empty() ? "" : " at " + inst.location) +
                        ")";
    auto [minOperands, numResults] = getArity(inst);
    if (static_cast<int>(inst.operands.size()) < minOperands ||
        (numResults >= 0 &&
         static_cast<int>(inst.results.size()) != numResults))
      return where + ": wrong number of operands or results";
    for (ValueId id : inst.operands)
      if (!checkId(id) || !defined[id])
        return where + ": uses a value before it is defined";
    for (ValueId id : inst.results) {
      if (!checkId(id) || defined[id])
        return where + ": result already defined";
      defined[id] = true;
    }
    if (std::string e = checkEpilogue(inst, values); !e.empty())
      return where + ": " + e;
    bool window = inst.kind == OpKind::Conv2D || inst.kind == OpKind::Pool2D;
    if (window && (inst.strides.size() != 2 || inst.offsets.size() != 2 ||
                   (inst.kind == OpKind::Pool2D && inst.sizes.size() != 2)))
      return where + ": expects 2 strides, dilations (and pool sizes)";
    if (inst.kind == OpKind::Generic || window) {
      if (!inst.generic)
        return where + ": missing loop nest";
      const GenericSpec &g = *inst.generic;
      if (static_cast<int64_t>(inst.operands.size()) !=
              g.numInputs + g.numOutputs + g.numCaptures ||
          static_cast<int64_t>(inst.results.size()) != g.numOutputs)
        return where + ": operand counts do not match the loop nest";
      if (!g.kernel.empty() && kernelLibrary.empty())
        return where + ": compiled kernel '" + g.kernel +
               "' but the program has no kernel library";
    }
    if (inst.kind == OpKind::Constant &&
        (inst.constant.isNull() ||
         inst.constant.getShape() != values[inst.results[0]].shape ||
         inst.constant.getDType() != values[inst.results[0]].type))
      return where + ": constant does not match its value type";
    if (inst.kind == OpKind::Collective)
      for (int64_t a : inst.collective.axes)
        if (a < 0 || a >= mesh.getNumAxes())
          return where + ": mesh axis out of range";
  }
  for (const ProgramIO &out : outputs) {
    if (!checkId(out.value) || !defined[out.value])
      return "output '" + out.name + "' refers to no defined value";
    std::string e = out.layout.validate(mesh, &out.globalShape);
    if (!e.empty())
      return "output '" + out.name + "': " + e;
  }
  return "";
}

std::string_view Program::getKernelBackend() const {
  if (!gpuModule.empty())
    return "cuda";
  if (!kernelLibrary.empty())
    return "cpu";
  return "";
}

std::string Program::getKernelBackendWarning(std::string_view backend) const {
  std::string_view made = getKernelBackend();
  if (made.empty() || made == backend)
    return "";
  if (made == "cpu")
    return "the plan's loop nests were compiled for the CPU (a kernel "
           "library); --backend cuda runs them as bytecode kernels (compile "
           "with --backend cuda for generated CUDA kernels)";
  return "the plan's loop nests were compiled for CUDA (PTX); --backend " +
         std::string(backend) +
         " interprets them (compile with --backend cpu for a CPU kernel "
         "library)";
}

std::string Program::str() const {
  std::ostringstream os;
  auto ty = [&](ValueId id) {
    return std::string(stringifyDType(values[id].type)) + "[" +
           stringifyShape(values[id].shape) + "]";
  };
  os << "program on mesh " << mesh.str() << "\n";
  if (!kernelLibrary.empty())
    os << "  kernels " << kernelLibrary << "\n";
  for (const ProgramIO &in : inputs)
    os << "  input %" << in.value << " '" << in.name << "' : " << ty(in.value)
       << " global " << stringifyShape(in.globalShape) << " layout "
       << in.layout.str(mesh) << "\n";
  for (const Instruction &inst : instructions) {
    os << "  ";
    for (size_t i = 0; i < inst.results.size(); ++i)
      os << (i ? ", %" : "%") << inst.results[i];
    os << (inst.results.empty() ? "" : " = ") << stringifyOpKind(inst.kind);
    if (inst.kind == OpKind::Collective)
      os << "." << stringifyCollectiveKind(inst.collective.kind) << " axes [" <<
          [&] {
            std::string s;
            for (int64_t a : inst.collective.axes)
              s += (s.empty() ? "" : ",") + std::to_string(a);
            return s;
          }()
         << "] dim " << inst.collective.dim;
    for (size_t i = 0; i < inst.operands.size(); ++i)
      os << (i ? ", %" : " %") << inst.operands[i];
    if (!inst.results.empty())
      os << " : " << ty(inst.results[0]);
    if (inst.tf32)
      os << " tf32";
    if (inst.epilogue != GemmEpilogue::None)
      os << " epilogue " << stringifyGemmEpilogue(inst.epilogue);
    // The nest's backend: the CPU library, a generated CUDA kernel, or the
    // bytecode interpreter.
    if (inst.kind == OpKind::Generic && inst.generic)
      os << (!inst.generic->kernel.empty()
                 ? " compiled @" + inst.generic->kernel
             : !inst.generic->gpuKernel.empty()
                 ? " cuda kernel @" + inst.generic->gpuKernel
                 : std::string(" interpreted"));
    os << "\n";
  }
  for (const ProgramIO &out : outputs)
    os << "  output %" << out.value << " '" << out.name << "' global "
       << stringifyShape(out.globalShape) << " layout " << out.layout.str(mesh)
       << "\n";
  return os.str();
}
