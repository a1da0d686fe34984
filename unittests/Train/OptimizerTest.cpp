//===- OptimizerTest.cpp - Two training steps against PyTorch's formulas --===//
//
// A tiny linear model y = x·W + b with the mse loss, trained for 2 steps of
// @train_step (results fed back to the arguments named by `dist.tied_arg`,
// state arguments with `dist.init = "zeros"` starting at zero), against a
// plain C++ transcription of torch.optim's single-tensor updates with the
// gradients written out by hand:
//
//   SGD       g = grad + wd p;  p -= lr g
//   momentum  g = grad + wd p;  buf = g (step 1), mu buf + g (later);
//             p -= lr buf                    (dampening 0, no Nesterov)
//   Adam      g = grad + wd p;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g²;
//             p -= lr / (1-b1^t) · m / (sqrt(v) / sqrt(1-b2^t) + eps)
//   AdamW     p *= 1 - lr wd; then Adam's update with g = grad
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

using namespace autoshard;
using namespace autoshard::gradcheck;

namespace {

struct Hyper {
  std::string optimizer;
  double lr = 0.01, momentum = 0.9, beta1 = 0.9, beta2 = 0.999, eps = 1e-8,
         weightDecay = 0.0;

  std::string pipeline() const {
    auto num = [](double v) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.17g", v);
      return std::string(buf);
    };
    return "dist-training-step{loss=mse optimizer=" + optimizer +
           " lr=" + num(lr) + " momentum=" + num(momentum) +
           " beta1=" + num(beta1) + " beta2=" + num(beta2) +
           " eps=" + num(eps) + " weight-decay=" + num(weightDecay) + "}";
  }
};

/// PyTorch's per-parameter state and update.
struct RefParam {
  std::vector<double> p, buf, m, v;
};

struct Reference {
  Hyper h;
  int64_t t = 0; // steps taken

  void step(RefParam &s, const std::vector<double> &grad) {
    size_t n = s.p.size();
    if (s.buf.empty())
      s.buf.assign(n, 0.0), s.m.assign(n, 0.0), s.v.assign(n, 0.0);
    double tt = static_cast<double>(t);
    for (size_t i = 0; i < n; ++i) {
      double &p = s.p[i];
      double g = grad[i];
      if (h.optimizer == "sgd") {
        g += h.weightDecay * p;
        p -= h.lr * g;
      } else if (h.optimizer == "momentum") {
        g += h.weightDecay * p;
        s.buf[i] = t == 1 ? g : h.momentum * s.buf[i] + g;
        p -= h.lr * s.buf[i];
      } else {
        if (h.optimizer == "adamw")
          p *= 1 - h.lr * h.weightDecay;
        else
          g += h.weightDecay * p;
        s.m[i] = h.beta1 * s.m[i] + (1 - h.beta1) * g;
        s.v[i] = h.beta2 * s.v[i] + (1 - h.beta2) * g * g;
        double bc1 = 1 - std::pow(h.beta1, tt);
        double bc2 = 1 - std::pow(h.beta2, tt);
        double stepSize = h.lr / bc1;
        double denom = std::sqrt(s.v[i]) / std::sqrt(bc2) + h.eps;
        p -= stepSize * s.m[i] / denom;
      }
    }
  }
};

constexpr int64_t kM = 5, kK = 4, kN = 3;

const char *kLinear = R"(
func.func @main(%x: tensor<5x4xf64> {dist.name = "x"},
                %w: tensor<4x3xf64> {dist.param, dist.name = "w"},
                %b: tensor<3xf64> {dist.param, dist.name = "b"}) -> tensor<5x3xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<5x3xf64>
  %init = linalg.fill ins(%zero : f64) outs(%e : tensor<5x3xf64>) -> tensor<5x3xf64>
  %h = linalg.matmul ins(%x, %w : tensor<5x4xf64>, tensor<4x3xf64>) outs(%init : tensor<5x3xf64>) -> tensor<5x3xf64>
  %e2 = tensor.empty() : tensor<5x3xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%h, %b : tensor<5x3xf64>, tensor<3xf64>) outs(%e2 : tensor<5x3xf64>) {
    ^bb0(%a: f64, %c: f64, %out: f64):
      %r = arith.addf %a, %c : f64
      linalg.yield %r : f64
    } -> tensor<5x3xf64>
  return %y : tensor<5x3xf64>
})";

std::vector<double> values(const rt::Tensor &t) {
  std::vector<double> v(t.getNumElements());
  for (int64_t i = 0; i < t.getNumElements(); ++i)
    v[i] = t.getAsDouble(i);
  return v;
}

/// The mse loss of x·W + b against t and its gradients, by hand.
double linearGrads(const std::vector<double> &x, const std::vector<double> &t,
                   const std::vector<double> &w, const std::vector<double> &b,
                   std::vector<double> &dw, std::vector<double> &db) {
  dw.assign(kK * kN, 0.0);
  db.assign(kN, 0.0);
  double loss = 0, scale = 2.0 / static_cast<double>(kM * kN);
  for (int64_t i = 0; i < kM; ++i)
    for (int64_t j = 0; j < kN; ++j) {
      double y = b[j];
      for (int64_t k = 0; k < kK; ++k)
        y += x[i * kK + k] * w[k * kN + j];
      double d = y - t[i * kN + j];
      loss += d * d;
      double r = scale * d;
      db[j] += r;
      for (int64_t k = 0; k < kK; ++k)
        dw[k * kN + j] += x[i * kK + k] * r;
    }
  return loss / static_cast<double>(kM * kN);
}

void expectClose(const std::vector<double> &got,
                 const std::vector<double> &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-12 + 1e-9 * std::fabs(want[i])) &&
        bad++ < 6)
      ADD_FAILURE() << what << " element " << i << ": got " << got[i]
                    << ", expected " << want[i];
}

void runOptimizer(const Hyper &h) {
  SCOPED_TRACE(h.pipeline());
  auto ctx = makeContext();
  std::string diag;
  auto module = parse(*ctx, kLinear, diag);
  ASSERT_TRUE(module) << diag;
  ASSERT_TRUE(runPipeline(*module, h.pipeline(), diag)) << diag;
  auto step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
  ASSERT_TRUE(step);
  std::unique_ptr<Runner> runner = Runner::create(*module, "train_step", diag);
  if (!runner) {
    std::string ir;
    llvm::raw_string_ostream os(ir);
    (*module)->print(os);
    FAIL() << "cannot lower @train_step:\n" << diag << "\n" << ir;
  }

  std::mt19937_64 rng(7);
  rt::Tensor x = randomFloats(rt::DType::F64, {kM, kK}, rng);
  rt::Tensor w = randomFloats(rt::DType::F64, {kK, kN}, rng);
  rt::Tensor b = randomFloats(rt::DType::F64, {kN}, rng);
  rt::Tensor t = randomFloats(rt::DType::F64, {kM, kN}, rng);

  // Arguments by name: w, b, their state (zeros), x, labels.
  unsigned numArgs = step.getNumArguments();
  std::vector<rt::Tensor> args;
  std::vector<std::string> argNames;
  for (unsigned i = 0; i < numArgs; ++i) {
    auto name = step.getArgAttrOfType<mlir::StringAttr>(i, "dist.name");
    ASSERT_TRUE(name) << "argument " << i << " of @train_step has no dist.name";
    std::string n = name.str();
    argNames.push_back(n);
    mlir::Type type = step.getArgumentTypes()[i];
    if (auto init = step.getArgAttrOfType<mlir::StringAttr>(i, "dist.init")) {
      EXPECT_EQ(init.getValue(), "zeros") << n;
      args.push_back(rt::Tensor(dtypeOf(type), shapeOf(type)));
    } else if (n == "w") {
      args.push_back(w.clone());
    } else if (n == "b") {
      args.push_back(b.clone());
    } else if (n == "x") {
      args.push_back(x.clone());
    } else if (n == "labels") {
      args.push_back(t.clone());
    } else {
      FAIL() << "unexpected argument '" << n << "' of @train_step";
    }
  }
  size_t stateArgs = 0;
  for (unsigned i = 0; i < numArgs; ++i)
    stateArgs += bool(step.getArgAttr(i, "dist.init"));
  size_t wantState = h.optimizer == "momentum" ? 2
                     : h.optimizer == "sgd"    ? 0
                                               : 5;
  EXPECT_EQ(stateArgs, wantState);
  // Result r replaces argument tied[r].
  std::vector<int> tied(step.getNumResults(), -1);
  for (unsigned r = 1; r < step.getNumResults(); ++r) {
    auto attr = step.getResultAttrOfType<mlir::IntegerAttr>(r, "dist.tied_arg");
    ASSERT_TRUE(attr) << "result " << r << " has no dist.tied_arg";
    tied[r] = attr.getInt();
    ASSERT_LT(tied[r], static_cast<int>(numArgs));
  }

  Reference ref{h};
  RefParam rw{values(w), {}, {}, {}}, rb{values(b), {}, {}, {}};
  std::vector<double> xv = values(x), tv = values(t);
  for (int s = 1; s <= 2; ++s) {
    SCOPED_TRACE("step " + std::to_string(s));
    std::vector<double> dw, db;
    double loss = linearGrads(xv, tv, rw.p, rb.p, dw, db);
    ref.t = s;
    ref.step(rw, dw);
    ref.step(rb, db);

    std::vector<rt::Tensor> out;
    try {
      out = runner->run(args);
    } catch (const rt::Error &e) {
      FAIL() << "running @train_step: " << e.what();
    }
    ASSERT_EQ(out.size(), step.getNumResults());
    EXPECT_NEAR(out[0].getAsDouble(0), loss, 1e-12 + 1e-10 * std::fabs(loss))
        << "loss before update " << s;
    for (unsigned r = 1; r < out.size(); ++r)
      args[tied[r]] = out[r];

    std::map<std::string, std::vector<double>> want = {
        {"w", rw.p}, {"b", rb.p}};
    if (h.optimizer == "momentum") {
      want["w.momentum_buffer"] = rw.buf;
      want["b.momentum_buffer"] = rb.buf;
    } else if (h.optimizer != "sgd") {
      want["w.exp_avg"] = rw.m;
      want["w.exp_avg_sq"] = rw.v;
      want["b.exp_avg"] = rb.m;
      want["b.exp_avg_sq"] = rb.v;
      want["optimizer.step"] = {static_cast<double>(s)};
    }
    for (const auto &[name, value] : want) {
      auto it = std::find(argNames.begin(), argNames.end(), name);
      if (it == argNames.end()) {
        ADD_FAILURE() << "@train_step has no argument '" << name << "'";
        continue;
      }
      expectClose(values(args[it - argNames.begin()]), value, name);
    }
  }
}

} // namespace

TEST(Optimizer, SgdWithWeightDecay) {
  Hyper h;
  h.optimizer = "sgd";
  h.lr = 0.1;
  h.weightDecay = 0.05;
  runOptimizer(h);
}

TEST(Optimizer, Momentum) {
  Hyper h;
  h.optimizer = "momentum";
  h.lr = 0.1;
  h.momentum = 0.9;
  h.weightDecay = 0.01;
  runOptimizer(h);
}

TEST(Optimizer, Adam) {
  Hyper h;
  h.optimizer = "adam";
  h.lr = 0.01;
  h.beta1 = 0.9;
  h.beta2 = 0.999;
  h.eps = 1e-8;
  h.weightDecay = 0.01;
  runOptimizer(h);
}

TEST(Optimizer, AdamNoWeightDecay) {
  Hyper h;
  h.optimizer = "adam";
  h.lr = 0.05;
  h.beta1 = 0.8;
  h.beta2 = 0.99;
  h.eps = 1e-6;
  runOptimizer(h);
}

TEST(Optimizer, AdamW) {
  Hyper h;
  h.optimizer = "adamw";
  h.lr = 0.01;
  h.beta1 = 0.9;
  h.beta2 = 0.999;
  h.eps = 1e-8;
  h.weightDecay = 0.1;
  runOptimizer(h);
}
