//===- Optimizer.cpp - Parameter updates of the training step -------------===//
//
// PyTorch's update formulas (torch.optim, default flags: no dampening, no
// Nesterov, no amsgrad), one elementwise linalg.generic per updated tensor so
// that propagation lays each update out like its parameter:
//
//   sgd       g = grad + wd p;  p -= lr g
//   momentum  g = grad + wd p;  buf = mu buf + g;  p -= lr buf
//             (buf starts at 0, so the first step sets buf = g as torch does)
//   adam      g = grad + wd p;  t += 1;  m = b1 m + (1-b1) g;
//             v = b2 v + (1-b2) g^2;
//             p -= lr / (1-b1^t) * m / (sqrt(v) / sqrt(1-b2^t) + eps)
//   adamw     p *= 1 - lr wd, then adam's update with g = grad
//
//===----------------------------------------------------------------------===//

#include "autoshard/Train/Optimizer.h"

#include "autoshard/Train/VjpUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace autoshard::vjp;

namespace autoshard::train {

LogicalResult verifyOptimizer(const OptimizerConfig &c, std::string &why) {
  if (c.kind != "sgd" && c.kind != "momentum" && c.kind != "adam" &&
      c.kind != "adamw") {
    why = "unknown optimizer '" + c.kind +
          "' (expected sgd, momentum, adam or adamw)";
    return failure();
  }
  auto bad = [&](StringRef name, double v) {
    why = ("invalid " + name + ": " + std::to_string(v)).str();
    return failure();
  };
  if (!(c.lr >= 0))
    return bad("lr", c.lr);
  if (!(c.momentum >= 0))
    return bad("momentum", c.momentum);
  if (!(c.beta1 >= 0 && c.beta1 < 1))
    return bad("beta1", c.beta1);
  if (!(c.beta2 >= 0 && c.beta2 < 1))
    return bad("beta2", c.beta2);
  if (!(c.eps >= 0))
    return bad("eps", c.eps);
  if (!(c.weightDecay >= 0))
    return bad("weight-decay", c.weightDecay);
  return success();
}

static bool isAdam(const OptimizerConfig &c) {
  return c.kind == "adam" || c.kind == "adamw";
}

std::vector<StateSlot> optimizerState(const OptimizerConfig &c,
                                      ArrayRef<Type> paramTypes) {
  std::vector<StateSlot> slots;
  for (auto [i, t] : llvm::enumerate(paramTypes)) {
    auto type = cast<RankedTensorType>(t);
    if (c.kind == "momentum")
      slots.push_back({int(i), ".momentum_buffer", type});
    if (isAdam(c)) {
      slots.push_back({int(i), ".exp_avg", type});
      slots.push_back({int(i), ".exp_avg_sq", type});
    }
  }
  if (isAdam(c) && !paramTypes.empty()) {
    Type elem = cast<RankedTensorType>(paramTypes[0]).getElementType();
    slots.push_back({-1, "step", RankedTensorType::get({}, elem)});
  }
  return slots;
}

namespace {
/// Elementwise generics over one parameter's shape.
struct Updater {
  OpBuilder &b;
  Location loc;
  RankedTensorType type;
  Value step; // adam: the new step count (rank 0), else null

  Value apply(ValueRange ins,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    unsigned rank = type.getRank();
    SmallVector<Value> all(ins);
    SmallVector<AffineMap> maps(ins.size(), b.getMultiDimIdentityMap(rank));
    if (step) {
      all.push_back(step);
      maps.push_back(AffineMap::get(rank, 0, b.getContext()));
    }
    maps.push_back(b.getMultiDimIdentityMap(rank));
    Value v = generic(b, loc, type, all, maps, parallel(rank), body);
    // Without weight decay the parameter is not read.
    return pruneGeneric(b, cast<linalg::GenericOp>(v.getDefiningOp()))
        .getResult(0);
  }
};

/// Scalar helpers inside an update body.
struct Scalars {
  OpBuilder &b;
  Location loc;
  Type t;
  Value c(double v) { return scalar(b, loc, t, v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
  Value pow(Value x, Value y) { return math::PowFOp::create(b, loc, x, y); }
  /// grad + wd * p (the L2 penalty), or grad when wd is 0.
  Value decayed(Value grad, Value p, double wd) {
    return wd == 0 ? grad : add(grad, mul(c(wd), p));
  }
};
} // namespace

/// Adam's or AdamW's update of one parameter; appends m', v' to `state`.
static Value adamUpdate(Updater &u, const OptimizerConfig &c, Value p,
                        Value g, Value m, Value v,
                        SmallVectorImpl<Value> &state) {
  double l2 = c.kind == "adam" ? c.weightDecay : 0.0;
  // The moments do not read the step count.
  Updater moments{u.b, u.loc, u.type, Value()};
  Value m2 = moments.apply({g, p, m}, [&](OpBuilder &bb, Location l, ValueRange a) {
    Scalars s{bb, l, a[0].getType()};
    Value grad = s.decayed(a[0], a[1], l2);
    return s.add(s.mul(s.c(c.beta1), a[2]), s.mul(s.c(1 - c.beta1), grad));
  });
  Value v2 = moments.apply({g, p, v}, [&](OpBuilder &bb, Location l, ValueRange a) {
    Scalars s{bb, l, a[0].getType()};
    Value grad = s.decayed(a[0], a[1], l2);
    return s.add(s.mul(s.c(c.beta2), a[2]),
                 s.mul(s.c(1 - c.beta2), s.mul(grad, grad)));
  });
  state.push_back(m2);
  state.push_back(v2);
  return u.apply({p, m2, v2}, [&](OpBuilder &bb, Location l, ValueRange a) {
    Scalars s{bb, l, a[0].getType()};
    Value t = a[3];
    Value bc1 = s.sub(s.c(1), s.pow(s.c(c.beta1), t));
    Value bc2 = s.sub(s.c(1), s.pow(s.c(c.beta2), t));
    Value param = a[0];
    if (c.kind == "adamw")
      param = s.mul(param, s.c(1 - c.lr * c.weightDecay));
    Value denom = s.add(s.div(s.sqrt(a[2]), s.sqrt(bc2)), s.c(c.eps));
    Value stepSize = s.div(s.c(c.lr), bc1);
    return s.sub(param, s.mul(stepSize, s.div(a[1], denom)));
  });
}

void buildUpdate(OpBuilder &b, Location loc, const OptimizerConfig &c,
                 ValueRange params, ValueRange grads, ValueRange state,
                 SmallVectorImpl<Value> &newParams,
                 SmallVectorImpl<Value> &newState) {
  Value step;
  if (isAdam(c) && !params.empty()) {
    Value t = state.back();
    auto tType = cast<RankedTensorType>(t.getType());
    step = generic(b, loc, tType, {t}, {b.getMultiDimIdentityMap(0),
                                        b.getMultiDimIdentityMap(0)},
                   {}, [](OpBuilder &bb, Location l, ValueRange a) -> Value {
                     return arith::AddFOp::create(
                         bb, l, a[0], scalar(bb, l, a[0].getType(), 1.0));
                   });
  }
  unsigned slot = 0;
  for (auto [p, g] : llvm::zip(params, grads)) {
    Updater u{b, loc, cast<RankedTensorType>(p.getType()), Value()};
    if (c.kind == "sgd" || c.kind == "momentum") {
      Value dir = g;
      if (c.kind == "momentum") {
        dir = u.apply({g, p, state[slot++]},
                      [&](OpBuilder &bb, Location l, ValueRange a) {
                        Scalars s{bb, l, a[0].getType()};
                        Value grad = s.decayed(a[0], a[1], c.weightDecay);
                        return s.add(s.mul(s.c(c.momentum), a[2]), grad);
                      });
        newState.push_back(dir);
      }
      double wd = c.kind == "sgd" ? c.weightDecay : 0.0;
      newParams.push_back(
          u.apply({dir, p}, [&](OpBuilder &bb, Location l, ValueRange a) {
            Scalars s{bb, l, a[0].getType()};
            Value d = s.decayed(a[0], a[1], wd);
            return s.sub(a[1], s.mul(s.c(c.lr), d));
          }));
      continue;
    }
    u.step = step;
    Value m = state[slot++], v = state[slot++];
    newParams.push_back(adamUpdate(u, c, p, g, m, v, newState));
  }
  if (step)
    newState.push_back(step);
}

} // namespace autoshard::train
