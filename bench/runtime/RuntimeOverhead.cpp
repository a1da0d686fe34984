//===- RuntimeOverhead.cpp - Executor overhead vs direct cblas ------------===//
//
// One rank, L chained layers y = relu(x @ W_l) (+ zero-filled inits), as
// the loader would plan them: Empty + Fill + Matmul (BLAS) + a relu loop
// nest. The direct baseline makes the same sgemm calls on preallocated
// buffers and applies relu in a plain loop. Prints both step times and the
// ratio; the difference is the executor's allocation, copies and bytecode.
//
//   autoshard-bench-runtime [M K LAYERS REPS]
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/Executor.h"
#include "autoshard/Runtime/HostIO.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace autoshard;
using namespace autoshard::rt;

static std::shared_ptr<GenericSpec> reluSpec(int64_t m, int64_t k) {
  auto g = std::make_shared<GenericSpec>();
  g->loopRanges = {m, k};
  g->numInputs = 1;
  g->numOutputs = 1;
  AffineMapSpec id;
  id.numResults = 2;
  id.coeffs = {1, 0, 0, 1};
  id.consts = {0, 0};
  g->maps = {id, id};
  ScalarInst zero, max;
  zero.op = ScalarOp::Const;
  zero.dst = 2;
  max.op = ScalarOp::MaxNum;
  max.dst = 3;
  max.a = 0;
  max.b = 2;
  g->body = {zero, max};
  g->numRegs = 4;
  g->yields = {3};
  return g;
}

int main(int argc, char **argv) {
  int64_t m = argc > 1 ? std::atoll(argv[1]) : 256;
  int64_t k = argc > 2 ? std::atoll(argv[2]) : 512;
  int64_t layers = argc > 3 ? std::atoll(argv[3]) : 8;
  int reps = argc > 4 ? std::atoi(argv[4]) : 10;

  Program p;
  p.mesh = DeviceMesh({MeshAxis{"x", 1}});
  auto input = [&](Shape s, const char *name) {
    ValueId v = p.addValue(DType::F32, s);
    ProgramIO io;
    io.value = v;
    io.name = name;
    io.globalShape = s;
    io.layout = TensorLayout::replicated(s.size());
    p.inputs.push_back(io);
    return v;
  };
  ValueId x = input({m, k}, "x");
  std::vector<ValueId> weights;
  for (int64_t l = 0; l < layers; ++l)
    weights.push_back(input({k, k}, "w"));
  ValueId zero = p.addValue(DType::F32, {});
  Instruction c;
  c.kind = OpKind::Constant;
  c.results = {zero};
  c.constant = Tensor(DType::F32, {});
  p.instructions.push_back(c);
  auto relu = reluSpec(m, k);
  for (int64_t l = 0; l < layers; ++l) {
    ValueId e = p.addValue(DType::F32, {m, k});
    Instruction empty;
    empty.kind = OpKind::Empty;
    empty.results = {e};
    ValueId f = p.addValue(DType::F32, {m, k});
    Instruction fill;
    fill.kind = OpKind::Fill;
    fill.operands = {zero};
    fill.results = {f};
    ValueId mm = p.addValue(DType::F32, {m, k});
    Instruction gemm;
    gemm.kind = OpKind::Matmul;
    gemm.operands = {x, weights[l], f};
    gemm.results = {mm};
    ValueId e2 = p.addValue(DType::F32, {m, k});
    Instruction empty2 = empty;
    empty2.results = {e2};
    ValueId r = p.addValue(DType::F32, {m, k});
    Instruction act;
    act.kind = OpKind::Generic;
    act.generic = relu;
    act.operands = {mm, e2};
    act.results = {r};
    for (Instruction *i : {&empty, &fill, &gemm, &empty2, &act})
      p.instructions.push_back(*i);
    x = r;
  }
  ProgramIO out;
  out.value = x;
  out.name = "y";
  out.globalShape = {m, k};
  out.layout = TensorLayout::replicated(2);
  p.outputs = {out};

  std::vector<Tensor> inputs;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    Tensor t =
        makeSeededTensor(DType::F32, p.values[p.inputs[i].value].shape, 1, i);
    // Keep activations bounded through the layers.
    if (i > 0)
      for (int64_t j = 0; j < t.getNumElements(); ++j)
        t.getData<float>()[j] /= static_cast<float>(k);
    inputs.push_back(t);
  }
  std::unique_ptr<Backend> cpu = createCpuBackend();
  std::unique_ptr<Communicator> comm = createLocalCommunicator(p.mesh);
  Executor exec(p, *cpu, *comm);

  using clock = std::chrono::steady_clock;
  auto time = [&](auto &&fn) {
    fn(); // warm up
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      auto t0 = clock::now();
      fn();
      best = std::min(best,
                      std::chrono::duration<double>(clock::now() - t0).count());
    }
    return best;
  };
  Tensor result;
  double executor = time([&] { result = exec.run(inputs)[0]; });

  std::vector<float> a(m * k), b(m * k);
  Tensor direct;
  double baseline = time([&] {
    std::memcpy(a.data(), inputs[0].getRawData(), inputs[0].getBytes());
    for (int64_t l = 0; l < layers; ++l) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, k, 1.0f,
                  a.data(), k, inputs[l + 1].getData<float>(), k, 0.0f,
                  b.data(), k);
      for (int64_t i = 0; i < m * k; ++i)
        a[i] = std::max(b[i], 0.0f);
    }
  });
  direct = Tensor(DType::F32, {m, k});
  std::memcpy(direct.getRawData(), a.data(), a.size() * sizeof(float));
  double err = 0;
  std::string diff = compareTensors(result, direct, 1e-4, 1e-5, err);
  double flops = 2.0 * m * k * k * layers;
  std::printf("runtime overhead: %lld layers of [%lldx%lld] @ [%lldx%lld] "
              "+ relu, best of %d\n",
              (long long)layers, (long long)m, (long long)k, (long long)k,
              (long long)k, reps);
  std::printf("  executor     %.3f ms  (%.1f GFLOP/s)\n", executor * 1e3,
              flops / executor * 1e-9);
  std::printf("  direct cblas %.3f ms  (%.1f GFLOP/s)\n", baseline * 1e3,
              flops / baseline * 1e-9);
  std::printf("  ratio        %.3f\n", executor / baseline);
  std::printf("  results %s (max abs err %.3g)\n",
              diff.empty() ? "match" : diff.c_str(), err);
  return diff.empty() ? 0 : 1;
}
