//===- ScalarDiff.cpp - Reverse mode over scalar arith/math bodies --------===//
//
// Every arith/math op's derivative lives in `scalarPartials`; the rest is
// the reverse sweep over a block's scalar expression.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Train/ScalarDiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"


using namespace mlir;

static constexpr double kLn2 = 0.69314718055994530942;
static constexpr double kTwoOverSqrtPi = 1.12837916709551257390;

namespace autoshard::vjp {

namespace {
/// Scalar arithmetic at one location, on one float type.
struct Emitter {
  OpBuilder &b;
  Location loc;
  Value cst(Type t, double v) {
    return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
  }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, loc, x); }
  Value scale(Value x, double k) { return mul(x, cst(x.getType(), k)); }
  /// c ? x : 0.
  Value where(Value c, Value x) {
    return arith::SelectOp::create(b, loc, c, x, cst(x.getType(), 0.0));
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
};
} // namespace

LogicalResult scalarPartials(OpBuilder &b, Operation *op, Value g,
                             SmallVectorImpl<Value> &partials) {
  Emitter e{b, op->getLoc()};
  partials.assign(op->getNumOperands(), Value());
  auto x = [&](unsigned i) { return op->getOperand(i); };
  Value r = op->getNumResults() == 1 ? op->getResult(0) : Value();
  using P = arith::CmpFPredicate;
  // max/min: the gradient goes to the strictly larger (smaller) operand;
  // ties give none, as torch.relu(0) does.
  auto pick = [&](P pred) {
    partials[0] = e.where(e.cmp(pred, x(0), x(1)), g);
    partials[1] = e.where(e.cmp(pred, x(1), x(0)), g);
  };
  bool known =
      llvm::TypeSwitch<Operation *, bool>(op)
          .Case([&](arith::AddFOp) {
            partials[0] = partials[1] = g;
            return true;
          })
          .Case([&](arith::SubFOp) {
            partials[0] = g;
            partials[1] = e.neg(g);
            return true;
          })
          .Case([&](arith::MulFOp) {
            partials[0] = e.mul(g, x(1));
            partials[1] = e.mul(g, x(0));
            return true;
          })
          .Case([&](arith::DivFOp) {
            partials[0] = e.div(g, x(1));
            partials[1] = e.neg(e.div(e.mul(g, r), x(1)));
            return true;
          })
          .Case([&](arith::NegFOp) {
            partials[0] = e.neg(g);
            return true;
          })
          .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](Operation *) {
            pick(P::OGT);
            return true;
          })
          .Case<arith::MinimumFOp, arith::MinNumFOp>([&](Operation *) {
            pick(P::OLT);
            return true;
          })
          .Case([&](arith::SelectOp) {
            if (!isa<FloatType>(r.getType()))
              return true;
            Value zero = e.cst(g.getType(), 0.0);
            partials[1] =
                arith::SelectOp::create(b, op->getLoc(), x(0), g, zero);
            partials[2] =
                arith::SelectOp::create(b, op->getLoc(), x(0), zero, g);
            return true;
          })
          .Case([&](arith::ExtFOp) {
            partials[0] = arith::TruncFOp::create(b, op->getLoc(),
                                                  x(0).getType(), g);
            return true;
          })
          .Case([&](arith::TruncFOp) {
            partials[0] =
                arith::ExtFOp::create(b, op->getLoc(), x(0).getType(), g);
            return true;
          })
          .Case([&](math::FmaOp) {
            partials[0] = e.mul(g, x(1));
            partials[1] = e.mul(g, x(0));
            partials[2] = g;
            return true;
          })
          .Case([&](math::ExpOp) {
            partials[0] = e.mul(g, r);
            return true;
          })
          .Case([&](math::Exp2Op) {
            partials[0] = e.scale(e.mul(g, r), kLn2);
            return true;
          })
          .Case([&](math::ExpM1Op) {
            partials[0] = e.mul(g, e.add(r, e.cst(r.getType(), 1.0)));
            return true;
          })
          .Case([&](math::LogOp) {
            partials[0] = e.div(g, x(0));
            return true;
          })
          .Case([&](math::Log2Op) {
            partials[0] = e.div(g, e.scale(x(0), kLn2));
            return true;
          })
          .Case([&](math::Log1pOp) {
            partials[0] = e.div(g, e.add(x(0), e.cst(r.getType(), 1.0)));
            return true;
          })
          .Case([&](math::SqrtOp) {
            partials[0] = e.div(e.scale(g, 0.5), r);
            return true;
          })
          .Case([&](math::RsqrtOp) {
            // d/dx x^(-1/2) = -1/2 x^(-3/2) = -r / (2x).
            partials[0] = e.neg(e.div(e.scale(e.mul(g, r), 0.5), x(0)));
            return true;
          })
          .Case([&](math::TanhOp) {
            Value one = e.cst(r.getType(), 1.0);
            partials[0] = e.mul(g, e.sub(one, e.mul(r, r)));
            return true;
          })
          .Case([&](math::ErfOp) {
            // 2/sqrt(pi) * exp(-x^2).
            Value ex = math::ExpOp::create(b, op->getLoc(),
                                           e.neg(e.mul(x(0), x(0))));
            partials[0] =
                e.mul(g, e.scale(ex, kTwoOverSqrtPi));
            return true;
          })
          .Case([&](math::AbsFOp) {
            // sign(x) * g, and 0 at x = 0 as torch.abs.
            Value zero = e.cst(g.getType(), 0.0);
            Value pos = e.where(e.cmp(P::OGT, x(0), zero), g);
            Value negPart = e.where(e.cmp(P::OLT, x(0), zero), g);
            partials[0] = e.sub(pos, negPart);
            return true;
          })
          .Case([&](math::PowFOp) {
            // d/da a^b = b a^(b-1) = b r / a;  d/db a^b = r ln a.
            partials[0] = e.div(e.mul(g, e.mul(x(1), r)), x(0));
            partials[1] =
                e.mul(g, e.mul(r, math::LogOp::create(b, op->getLoc(), x(0))));
            return true;
          })
          .Case([&](math::SinOp) {
            partials[0] = e.mul(g, math::CosOp::create(b, op->getLoc(), x(0)));
            return true;
          })
          .Case([&](math::CosOp) {
            partials[0] =
                e.neg(e.mul(g, math::SinOp::create(b, op->getLoc(), x(0))));
            return true;
          })
          .Case([&](math::AtanOp) {
            Value one = e.cst(r.getType(), 1.0);
            partials[0] = e.div(g, e.add(one, e.mul(x(0), x(0))));
            return true;
          })
          .Default([&](Operation *other) {
            // Ops whose results carry no gradient: integer and index
            // arithmetic, comparisons, casts from integers, constants.
            return llvm::none_of(other->getResultTypes(),
                                 [](Type t) { return isa<FloatType>(t); }) ||
                   isa<arith::ConstantOp, arith::SIToFPOp, arith::UIToFPOp>(
                       other);
          });
  if (!known)
    return op->emitError("dist-training-step: no derivative for '")
           << op->getName() << "' in a differentiated body";
  return success();
}

/// The ops of `value`'s block that it depends on, in block order.
static SetVector<Operation *> expressionOps(Value value) {
  SetVector<Operation *> ops;
  Operation *root = value.getDefiningOp();
  if (!root)
    return ops;
  Block *block = root->getBlock();
  SmallVector<Operation *> stack = {root};
  while (!stack.empty()) {
    Operation *op = stack.pop_back_val();
    if (!ops.insert(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (def->getBlock() == block)
          stack.push_back(def);
  }
  SmallVector<Operation *> sorted(ops.begin(), ops.end());
  llvm::sort(sorted, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return SetVector<Operation *>(sorted.begin(), sorted.end());
}

Value cloneScalarExpr(OpBuilder &b, Value value, IRMapping &mapping) {
  for (Operation *op : expressionOps(value))
    if (!mapping.contains(op->getResult(0)))
      b.clone(*op, mapping);
  return mapping.lookupOrDefault(value);
}

bool dependsOn(Value value, Value leaf) {
  if (value == leaf)
    return true;
  for (Operation *op : expressionOps(value))
    if (llvm::is_contained(op->getOperands(), leaf))
      return true;
  return false;
}

LogicalResult differentiateScalar(OpBuilder &b, Value result,
                                  ArrayRef<Value> leaves, Value seed,
                                  IRMapping &mapping,
                                  SmallVectorImpl<Value> &grads) {
  SetVector<Operation *> ops = expressionOps(result);
  cloneScalarExpr(b, result, mapping);
  // Adjoints of the original values, as values of the new code.
  llvm::DenseMap<Value, Value> adjoint;
  auto accumulate = [&](Value v, Value g) {
    Value &slot = adjoint[v];
    slot = slot ? arith::AddFOp::create(b, g.getLoc(), slot, g) : g;
  };
  accumulate(result, seed);
  for (Operation *op : llvm::reverse(ops)) {
    Value g = adjoint.lookup(op->getResult(0));
    if (!g)
      continue;
    Operation *clone = mapping.lookup(op->getResult(0)).getDefiningOp();
    SmallVector<Value> partials;
    // scalarPartials has named the op in its error.
    if (failed(scalarPartials(b, clone, g, partials)))
      return failure();
    for (auto [operand, partial] : llvm::zip(op->getOperands(), partials))
      if (partial)
        accumulate(operand, partial);
  }
  grads.clear();
  for (Value leaf : leaves)
    grads.push_back(adjoint.lookup(leaf));
  return success();
}

} // namespace autoshard::vjp
