//===- GemmEpilogue.cpp - Elementwise ops a GEMM can apply itself ---------===//
//
// ReLU is matched by its shape (max with +0.0, or the select of a compare).
// GELU comes in many spellings (x*x*x or pow, 0.5*x*(1+t) in any grouping,
// x/sqrt(2) or x*0.7071...), so its body is checked by value instead: the
// ops between the input and the yield may only be +, -, *, /, negation,
// pow, sqrt and one tanh (the tanh form) or one erf (the erf form, torch's
// default nn.GELU()) of float constants and the input, and that function
// must equal the form at a set of points in double (the f32 constants are
// within 1e-7 of it; the two forms differ by more than 1e-4 there).
//
// A GELU spread over several linalg.generic ops (the ONNX exporter's
// Div/Erf/Add/Mul/Mul, one op each) is first merged into one op by
// groupGemmEpilogues, before kernel fusion would merge it with other ops.
//
//===----------------------------------------------------------------------===//

#include "GemmEpilogue.h"
#include "Contraction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace autoshard;
using namespace autoshard::lower;

namespace {

std::optional<double> getConstant(Value v) {
  FloatAttr attr;
  if (matchPattern(v, m_Constant(&attr)))
    return attr.getValueAsDouble();
  return std::nullopt;
}

bool isPositiveZero(Value v) {
  std::optional<double> c = getConstant(v);
  return c && *c == 0 && !std::signbit(*c);
}

/// `y` is max(p, 0): arith.maximumf / maxnumf with +0.0 (either order), or
/// select(p > 0, p, 0).
bool isRelu(Value y, Value p) {
  Operation *op = y.getDefiningOp();
  if (isa_and_nonnull<arith::MaximumFOp, arith::MaxNumFOp>(op)) {
    Value a = op->getOperand(0), b = op->getOperand(1);
    return (a == p && isPositiveZero(b)) || (b == p && isPositiveZero(a));
  }
  auto select = dyn_cast_or_null<arith::SelectOp>(op);
  if (!select)
    return false;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
  return cmp && cmp.getPredicate() == arith::CmpFPredicate::OGT &&
         cmp.getLhs() == p && isPositiveZero(cmp.getRhs()) &&
         select.getTrueValue() == p && isPositiveZero(select.getFalseValue());
}

/// `y` as a function of `p`, built from float constants by the ops GELU's
/// spellings use.
class ScalarFunction {
public:
  ScalarFunction(Value y, Value p) : y(y), p(p) {}

  /// Whether every op between p and y is an allowed one, with one
  /// `Transcendental` (math.tanh or math.erf) and no other.
  template <typename Transcendental> bool isWellFormed() {
    int count = 0;
    SmallPtrSet<Operation *, 16> seen;
    SmallVector<Value> work = {y};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (v == p || getConstant(v))
        continue;
      Operation *op = v.getDefiningOp();
      if (!op ||
          !isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
               arith::NegFOp, math::TanhOp, math::ErfOp, math::PowFOp,
               math::SqrtOp>(op))
        return false;
      if (!seen.insert(op).second)
        continue;
      if (isa<math::TanhOp, math::ErfOp>(op))
        count += isa<Transcendental>(op) ? 1 : 2; // the other one: reject
      llvm::append_range(work, op->getOperands());
    }
    return count == 1 && seen.size() <= 32;
  }

  /// The value at p = x (call isWellFormed first).
  double at(Value v, double x) const {
    if (v == p)
      return x;
    if (std::optional<double> c = getConstant(v))
      return *c;
    Operation *op = v.getDefiningOp();
    auto arg = [&](unsigned i) { return at(op->getOperand(i), x); };
    if (isa<arith::AddFOp>(op))
      return arg(0) + arg(1);
    if (isa<arith::SubFOp>(op))
      return arg(0) - arg(1);
    if (isa<arith::MulFOp>(op))
      return arg(0) * arg(1);
    if (isa<arith::DivFOp>(op))
      return arg(0) / arg(1);
    if (isa<arith::NegFOp>(op))
      return -arg(0);
    if (isa<math::TanhOp>(op))
      return std::tanh(arg(0));
    if (isa<math::ErfOp>(op))
      return std::erf(arg(0));
    if (isa<math::SqrtOp>(op))
      return std::sqrt(arg(0));
    return std::pow(arg(0), arg(1)); // math.powf
  }

  Value y, p;
};

double geluTanh(double x) {
  const double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

double geluErf(double x) { return 0.5 * x * (1 + std::erf(x * M_SQRT1_2)); }

/// Whether y(p), built with one `Transcendental`, is `form` at the points.
template <typename Transcendental>
bool isFunction(Value y, Value p, double (*form)(double)) {
  ScalarFunction f(y, p);
  if (!f.isWellFormed<Transcendental>())
    return false;
  for (int i = -40; i <= 40; ++i) {
    double x = i * 0.15 + 0.01, want = form(x), got = f.at(y, x);
    if (!(std::fabs(got - want) <= 1e-6 * std::max(1.0, std::fabs(want))))
      return false;
  }
  return true;
}

/// The activation `y` applies to `p` (nullopt: none we fuse).
std::optional<Activation> getActivation(Value y, Value p) {
  if (y == p)
    return Activation::None;
  if (isRelu(y, p))
    return Activation::Relu;
  if (isFunction<math::TanhOp>(y, p, geluTanh))
    return Activation::Gelu;
  if (isFunction<math::ErfOp>(y, p, geluErf))
    return Activation::GeluErf;
  return std::nullopt;
}

bool isIdentity(linalg::LinalgOp op, OpOperand &operand) {
  return op.getMatchingIndexingMap(&operand).isIdentity();
}

/// A copy of its one tensor input into an identity-indexed init (e.g.
/// linalg.broadcast): the input's map is what it reads.
bool isPureBroadcast(linalg::LinalgOp op) {
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !isa<RankedTensorType>(op.getDpsInputs()[0].getType()) ||
      !isIdentity(op, *op.getDpsInitOperand(0)) || op->getNumRegions() != 1 ||
      !op->getRegion(0).hasOneBlock())
    return false;
  Block &body = op->getRegion(0).front();
  auto yield = dyn_cast<linalg::YieldOp>(body.front());
  return yield && yield.getNumOperands() == 1 &&
         yield.getOperand(0) == body.getArgument(0);
}

/// An elementwise op a GEMM epilogue chain may hold: all loops parallel,
/// one result of `type`, every input read by the identity but `bias`
/// (which the chain's first op may read by any map), the init not read.
bool isChainLink(Operation *raw, Type type, bool first) {
  auto op = dyn_cast<linalg::GenericOp>(raw);
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || op->getResult(0).getType() != type ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !isIdentity(op, *op.getDpsInitOperand(0)) ||
      !op.getRegion().front().getArguments().back().use_empty())
    return false;
  int other = 0;
  for (OpOperand *in : op.getDpsInputOperands())
    if (!isIdentity(op, *in) || in->get().getType() != type)
      ++other;
  return other <= (first ? 1 : 0);
}

/// The chain of elementwise ops reading `x` (its one reader first), in
/// block order: each later op reads only results of earlier ones.
SmallVector<Operation *> collectChain(Value x) {
  constexpr size_t kMaxOps = 16;
  if (!x.hasOneUse())
    return {};
  Operation *first = *x.getUsers().begin();
  Type type = x.getType();
  if (!isChainLink(first, type, /*first=*/true))
    return {};
  SmallVector<Operation *> chain = {first};
  SmallPtrSet<Operation *, 16> in = {first};
  auto readsChainOnly = [&](Operation *op) {
    return llvm::all_of(cast<linalg::GenericOp>(op).getDpsInputs(),
                        [&](Value v) {
                          Operation *def = v.getDefiningOp();
                          return def && in.contains(def);
                        });
  };
  for (bool grew = true; grew && chain.size() < kMaxOps;) {
    grew = false;
    for (size_t i = 0; i < chain.size() && chain.size() < kMaxOps; ++i)
      for (Operation *user : chain[i]->getUsers())
        if (!in.contains(user) && user->getBlock() == first->getBlock() &&
            isChainLink(user, type, /*first=*/false) && readsChainOnly(user)) {
          chain.push_back(user);
          in.insert(user);
          grew = true;
        }
  }
  llvm::sort(chain, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return chain;
}

/// Whether only the last of `ops` has readers outside them.
bool isClosed(ArrayRef<Operation *> ops) {
  SmallPtrSet<Operation *, 16> in(ops.begin(), ops.end());
  for (Operation *op : ops.drop_back())
    for (Operation *user : op->getUsers())
      if (!in.contains(user))
        return false;
  return true;
}

/// One linalg.generic computing `ops` (a chain, in order) at the last one:
/// the first op's inputs and init, the bodies cloned one after another.
linalg::GenericOp mergeChain(ArrayRef<Operation *> ops) {
  auto first = cast<linalg::GenericOp>(ops.front());
  OpBuilder b(ops.back());
  auto merged = linalg::GenericOp::create(
      b, first.getLoc(), ops.back()->getResult(0).getType(),
      first.getDpsInputs(), first.getDpsInits(),
      first.getIndexingMapsArray(), first.getIteratorTypesArray());
  Block &firstBody = first.getRegion().front();
  Block *body = b.createBlock(&merged.getRegion(), {},
                              firstBody.getArgumentTypes(),
                              SmallVector<Location>(
                                  firstBody.getNumArguments(), first.getLoc()));
  b.setInsertionPointToStart(body);
  DenseMap<Operation *, Value> scalarOf; // each op's yielded value
  for (Operation *raw : ops) {
    auto op = cast<linalg::GenericOp>(raw);
    Block &opBody = op.getRegion().front();
    IRMapping map;
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = opBody.getArgument(operand.getOperandNumber());
      Operation *def = operand.get().getDefiningOp();
      if (raw == ops.front())
        map.map(arg, body->getArgument(operand.getOperandNumber()));
      else if (!op.isDpsInit(&operand))
        map.map(arg, scalarOf.lookup(def));
      else
        map.map(arg, body->getArguments().back()); // unread
    }
    for (Operation &inner : opBody.without_terminator())
      b.clone(inner, map);
    scalarOf[raw] = map.lookupOrDefault(
        cast<linalg::YieldOp>(opBody.getTerminator()).getOperand(0));
  }
  linalg::YieldOp::create(b, first.getLoc(), scalarOf.lookup(ops.back()));
  return merged;
}

/// Merges the longest closed prefix of x's chain that is an epilogue step.
void groupChain(Value x) {
  SmallVector<Operation *> chain = collectChain(x);
  for (size_t n = chain.size(); n >= 2; --n) {
    ArrayRef<Operation *> ops = ArrayRef(chain).take_front(n);
    if (!isClosed(ops))
      continue;
    linalg::GenericOp merged = mergeChain(ops);
    if (!matchEpilogueStep(merged, x)) {
      merged->erase();
      continue;
    }
    ops.back()->getResult(0).replaceAllUsesWith(merged->getResult(0));
    for (Operation *op : llvm::reverse(ops))
      op->erase();
    return;
  }
}

} // namespace

void lower::groupGemmEpilogues(Operation *func) {
  if (!gemmEpiloguesEnabled())
    return;
  SmallVector<Value> results;
  func->walk([&](linalg::LinalgOp op) {
    if (op->getNumResults() == 1 &&
        getElementTypeOrSelf(op->getResult(0).getType()).isF32() &&
        isGemm(op))
      results.push_back(op->getResult(0));
  });
  for (Value x : results)
    groupChain(x);
}

std::optional<EpilogueStep> lower::matchEpilogueStep(linalg::LinalgOp op,
                                                     Value x) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || op.getNumDpsInputs() > 2 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      op->getNumRegions() != 1 || !op->getRegion(0).hasOneBlock() ||
      !isIdentity(op, *op.getDpsInitOperand(0)) ||
      !getElementTypeOrSelf(op->getResult(0).getType()).isF32())
    return std::nullopt;
  OpOperand *xOperand = nullptr, *biasOperand = nullptr;
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (in->get() == x && !xOperand)
      xOperand = in;
    else
      biasOperand = in;
  }
  if (!xOperand || !isIdentity(op, *xOperand))
    return std::nullopt;
  Block &body = op->getRegion(0).front();
  Value ax = body.getArgument(xOperand->getOperandNumber());
  if (!body.getArguments().back().use_empty())
    return std::nullopt; // reads the init: not elementwise in x
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Value y = yield.getOperand(0);
  EpilogueStep step;
  Value pre = ax;
  if (biasOperand) {
    auto type = dyn_cast<RankedTensorType>(biasOperand->get().getType());
    if (!type || !type.getElementType().isF32() || !type.hasStaticShape())
      return std::nullopt;
    Value ab = body.getArgument(biasOperand->getOperandNumber());
    if (!ab.hasOneUse() || !ax.hasOneUse())
      return std::nullopt;
    auto add = dyn_cast<arith::AddFOp>(*ab.getUsers().begin());
    if (!add || !((add.getLhs() == ax && add.getRhs() == ab) ||
                  (add.getLhs() == ab && add.getRhs() == ax)))
      return std::nullopt;
    pre = add.getResult();
    step.bias = biasOperand->get();
    step.biasMap = op.getMatchingIndexingMap(biasOperand);
    auto producer = step.bias.getDefiningOp<linalg::LinalgOp>();
    if (isPureBroadcast(producer)) {
      OpOperand *in = producer.getDpsInputOperand(0);
      step.biasMap = producer.getMatchingIndexingMap(in).compose(step.biasMap);
      step.bias = in->get();
      if (producer->getResult(0).hasOneUse())
        step.broadcast = producer;
    }
  }
  std::optional<Activation> act = getActivation(y, pre);
  if (!act || (*act == Activation::None && !step.bias))
    return std::nullopt;
  // ReLU must be the sum's only reader (GELU reads it several times).
  if (*act == Activation::Relu && !pre.hasOneUse())
    return std::nullopt;
  step.activation = *act;
  return step;
}

bool lower::gemmEpiloguesEnabled() {
  const char *env = std::getenv("AUTOSHARD_GEMM_EPILOGUES");
  return !env || std::strcmp(env, "0") != 0;
}
