//===- TestPrograms.h - Hand-built plans the runtime tests share -*- C++
//-*-===//
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
  auto g = std::make_shared<GenericSpec>();
  g->loopRanges = {4, 2};
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
} // namespace autoshard::rt::test

#endif // AUTOSHARD_UNITTESTS_RUNTIME_TESTPROGRAMS_H
