//===- TestPrograms.h - Plans the runtime tests and benches share -*- C++ -*-===//
#ifndef AUTOSHARD_UNITTESTS_RUNTIME_TESTPROGRAMS_H
#define AUTOSHARD_UNITTESTS_RUNTIME_TESTPROGRAMS_H

#include "autoshard/Runtime/Program.h"

namespace autoshard::rt::test {
inline DeviceMesh oneDevice() { return DeviceMesh({MeshAxis{"x", 1}}); }

inline ProgramIO io(ValueId v, Shape shape) {
  ProgramIO p;
  p.value = v;
  p.name = "v" + std::to_string(v);
  p.globalShape = shape;
  p.layout = TensorLayout::replicated(shape.size());
  return p;
}

/// Builds a Program an instruction at a time, so that tests and benchmarks
/// state only what differs between their programs (inputs and outputs
/// replicated, named by value as io() does).
class ProgramBuilder {
public:
  explicit ProgramBuilder(DeviceMesh mesh = oneDevice()) {
    p.mesh = std::move(mesh);
  }
  /// A program input of `type` and `shape`.
  ValueId input(DType type, Shape shape) {
    ValueId v = p.addValue(type, shape);
    p.inputs.push_back(io(v, std::move(shape)));
    return v;
  }
  /// Appends an instruction with one result of `type` and `shape` for the
  /// caller to complete (valid until the next add).
  Instruction &add(OpKind kind, std::vector<ValueId> operands, DType type,
                   Shape shape) {
    Instruction inst;
    inst.kind = kind;
    inst.operands = std::move(operands);
    inst.results = {p.addValue(type, std::move(shape))};
    p.instructions.push_back(std::move(inst));
    return p.instructions.back();
  }
  /// A rank-0 Constant instruction holding `v`.
  ValueId constant(double v, DType type = DType::F32) {
    Instruction &c = add(OpKind::Constant, {}, type, {});
    c.constant = Tensor(type, {});
    c.constant.setFromDouble(0, v);
    return c.results[0];
  }
  /// The result of the last instruction added.
  ValueId last() const { return p.instructions.back().results[0]; }
  /// Appends `v` to the outputs.
  void output(ValueId v) { p.outputs.push_back(io(v, p.values[v].shape)); }
  Program take() { return std::move(p); }

private:
  Program p;
};

/// out = max(in, 0) elementwise over [rows, cols] (one input, one init).
inline std::shared_ptr<GenericSpec> makeReluSpec(int64_t rows, int64_t cols) {
  auto g = std::make_shared<GenericSpec>();
  g->loopRanges = {rows, cols};
  g->numInputs = 1;
  g->numOutputs = 1;
  AffineMapSpec id;
  id.numResults = 2;
  id.coeffs = {1, 0, 0, 1};
  id.consts = {0, 0};
  g->maps = {id, id};
  ScalarInst zero, cmp, sel;
  zero.op = ScalarOp::Const;
  zero.dst = 2;
  cmp.op = ScalarOp::CmpF;
  cmp.type = DType::I1;
  cmp.imm = 2; // ogt
  cmp.dst = 3;
  cmp.a = 0;
  cmp.b = 2;
  sel.op = ScalarOp::Select;
  sel.dst = 4;
  sel.a = 3;
  sel.b = 0;
  sel.c = 2;
  g->body = {zero, cmp, sel};
  g->numRegs = 5;
  g->yields = {4};
  return g;
}

/// relu(x @ w) and the zero init the matmul started from (returned too, so
/// the executor must not update it in place).
inline Program makeReluMatmul() {
  Program p;
  p.mesh = oneDevice();
  ValueId x = p.addValue(DType::F32, {4, 3});
  ValueId w = p.addValue(DType::F32, {3, 2});
  p.inputs = {io(x, {4, 3}), io(w, {3, 2})};
  ValueId c = p.addValue(DType::F32, {4, 2});
  Instruction empty;
  empty.kind = OpKind::Empty;
  empty.results = {c};
  ValueId m = p.addValue(DType::F32, {4, 2});
  Instruction mm;
  mm.kind = OpKind::Matmul;
  mm.operands = {x, w, c};
  mm.results = {m};
  std::shared_ptr<GenericSpec> g = makeReluSpec(4, 2);
  ValueId r = p.addValue(DType::F32, {4, 2});
  Instruction relu;
  relu.kind = OpKind::Generic;
  relu.generic = g;
  relu.operands = {m, m}; // the init is also the input: it must be copied
  relu.results = {r};
  ValueId red = p.addValue(DType::F32, {4, 2});
  Instruction ar;
  ar.kind = OpKind::Collective;
  ar.collective.kind = CollectiveKind::AllReduce;
  ar.collective.axes = {0};
  ar.operands = {r};
  ar.results = {red};
  p.instructions = {empty, mm, relu, ar};
  p.outputs = {io(red, {4, 2}), io(c, {4, 2})};
  return p;
}

/// Collectives left in flight (Executor overlap): t = transpose(x);
/// a = all_reduce(t) (t dies there); f = fill(5) of t's size (would take t's
/// freed buffer); g = all_gather(f); p = permute(f); out = a @ g (reads both
/// pending results), plus p and a.
inline Program makeOverlapProgram(int64_t size) {
  Program p;
  p.mesh = oneDevice();
  Shape s = {size, size};
  ValueId x = p.addValue(DType::F32, s);
  p.inputs = {io(x, s)};
  auto add = [&](OpKind kind, std::vector<ValueId> operands, Shape shape) {
    Instruction inst;
    inst.kind = kind;
    inst.operands = std::move(operands);
    inst.results = {p.addValue(DType::F32, std::move(shape))};
    p.instructions.push_back(inst);
    return &p.instructions.back();
  };
  p.instructions.reserve(10);
  ValueId e = add(OpKind::Empty, {}, s)->results[0];
  add(OpKind::Transpose, {x, e}, s)->perm = {1, 0};
  ValueId t = p.instructions.back().results[0];
  Instruction *ar = add(OpKind::Collective, {t}, s);
  ar->collective.kind = CollectiveKind::AllReduce;
  ar->collective.axes = {0};
  ValueId a = ar->results[0];
  Instruction *five = add(OpKind::Constant, {}, {});
  five->constant = Tensor(DType::F32, {});
  five->constant.setFromDouble(0, 5.0);
  ValueId f = add(OpKind::Fill, {five->results[0]}, s)->results[0];
  Instruction *ag = add(OpKind::Collective, {f}, s);
  ag->collective.kind = CollectiveKind::AllGather;
  ag->collective.axes = {0};
  ag->collective.dim = 0;
  ValueId g = ag->results[0];
  Instruction *perm = add(OpKind::Collective, {f}, s);
  perm->collective.kind = CollectiveKind::Permute;
  perm->collective.pairs = {{0, 0}};
  ValueId pr = perm->results[0];
  ValueId init = add(OpKind::Empty, {}, s)->results[0];
  ValueId out = add(OpKind::Matmul, {a, g, init}, s)->results[0];
  p.outputs = {io(out, s), io(pr, s), io(a, s)};
  return p;
}
} // namespace autoshard::rt::test

#endif // AUTOSHARD_UNITTESTS_RUNTIME_TESTPROGRAMS_H
