//===- OnnxRecurrentOps.cpp - ONNX LSTM, GRU and RNN, unrolled ------------===//
//
// LSTM, GRU and RNN as torch.onnx exports them (forward, reverse or
// bidirectional; one node per layer; initial states given or absent; also
// ONNX's batch-major layout = 1) are unrolled over the static sequence into
// ops that already have sharding rules and kernels:
//
// - per direction and gate, the weight's gate rows sliced out and transposed
//   once ([H, I] -> [I, H]), the two biases added once;
// - the input projection of all time steps at once, a contraction generic
//   [S, B, I] x [I, H] -> [S, B, H] (no recurrence, so one op per gate);
// - per time step, one linalg.matmul per gate of the previous hidden state
//   with R's gate rows ([B, H] x [H, H]) and one or two elementwise generics
//   for the cell (LSTM: c_t then h_t; GRU, RNN: h_t);
// - Y, Y_h and Y_c assembled by tensor.concat of the steps' states.
//
// float16/bfloat16 layers compute all of this in f32 and round Y, Y_h and
// Y_c once (OnnxWidening.cpp), as a fused cuDNN/oneDNN cell does: the
// state carried between steps is never rounded.
//
// Gates are sliced, never kept stacked as [B, 4H]: a split of the hidden
// units (tensor parallelism) is then a split of every gate's H, so each rank
// computes its H/n units of every gate and the cell's elementwise math needs
// no communication; only the recurrent matmul needs the whole h_{t-1} (one
// all-gather per step). A node strategy on the LSTM/GRU/RNN node gives
// layouts for X, W, R and B; a split of the gate-stacked dim of W, R (dim 1)
// or B splits every gate's hidden units. It applies to every projection,
// bias sum and recurrent matmul (MainOp::more); h_{t-1} takes X's batch
// layout.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace autoshard::onnx_import;
using mlir::utils::IteratorType;

namespace {

enum : int64_t {
  kX = 0,
  kW = 1,
  kR = 2,
  kB = 3,
  kSeqLens = 4,
  kInitH = 5,
  kInitC = 6,
  kPeephole = 7
};

enum class Cell { LSTM, GRU, RNN };

/// The static description of one LSTM/GRU/RNN node, validated.
struct Spec {
  Cell cell = Cell::LSTM;
  bool lstm() const { return cell == Cell::LSTM; }
  /// GRU whose reset gate applies after R's h-gate matmul (torch's form).
  bool gruAfterReset() const { return cell == Cell::GRU && linearBeforeReset; }
  int64_t gates = 4; // LSTM: i o f c; GRU: z r h; RNN: one (ONNX's order)
  int64_t seq = 0, batch = 0, inSize = 0, hidden = 0, dirs = 1;
  bool reverse = false;    // direction = reverse (with dirs = 1)
  bool batchMajor = false; // layout = 1: X [B, S, I], states [B, D, H]
  bool linearBeforeReset = false;
  /// The outputs' type: float16/bfloat16 layers run in f32 (inputs widened,
  /// outputs rounded once).
  ElemKind kind = ElemKind::F32;
};

/// One direction's weights, prepared once: per gate the transposed W and R
/// rows and the bias added to the input projection.
struct DirWeights {
  SmallVector<Value> wT, rT; // [I, H], [H, H]
  SmallVector<Value> xProj;  // [S, B, H]: X W_g^T (+ bias)
  Value rbH;                 // GRU with linear_before_reset: R's h-gate bias
  SmallVector<Value> peep;   // LSTM peepholes i, o, f ([H]), or empty
};

class RecurrentImporter {
public:
  RecurrentImporter(NodeImporter &n, const Spec &s)
      : n(n), b(n.getBuilder()), loc(n.getLoc()), s(s) {}
  LogicalResult run();

private:
  Value slice(Value src, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
              ArrayRef<int64_t> resultShape);
  Value transpose2d(Value v, int64_t rows, int64_t cols);
  Value matmul(Value lhs, Value rhs, int64_t m, int64_t nCols,
               OperandSource lhsSrc, OperandSource rhsSrc);
  /// Where a strategy takes X [S, B, I]'s / h_{t-1} [B, H]'s layouts from.
  OperandSource xSource() const;
  OperandSource hSource() const;
  Value map(ArrayRef<Value> ins, ArrayRef<int64_t> shape,
            const NodeImporter::BodyFn &body);
  DirWeights prepare(int64_t d, Value x);
  Value gateBias(int64_t d, int64_t g);
  std::pair<Value, Value> lstmStep(const DirWeights &w, int64_t t, Value h,
                                   Value c);
  Value gruStep(const DirWeights &w, int64_t t, Value h);
  Value rnnStep(const DirWeights &w, int64_t t, Value h);
  Value state(int64_t input, int64_t d);
  Value stack(ArrayRef<Value> pieces, int64_t dim);
  Value toSeqFirst(Value v, ArrayRef<int64_t> shape, ArrayRef<int64_t> perm);
  void record(Operation *op, SmallVector<std::optional<OperandSource>> srcs);

  NodeImporter &n;
  OpBuilder &b;
  Location loc;
  const Spec &s;
  SmallVector<MainOp> strategyOps;
};

Value sigmoid(OpBuilder &b, Location l, Value x) {
  Type t = x.getType();
  Value one = arith::ConstantOp::create(b, l, b.getFloatAttr(t, 1.0));
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
  return arith::DivFOp::create(b, l, one, arith::AddFOp::create(b, l, one, e));
}

Value add(OpBuilder &b, Location l, Value x, Value y) {
  return arith::AddFOp::create(b, l, x, y);
}

Value mul(OpBuilder &b, Location l, Value x, Value y) {
  return arith::MulFOp::create(b, l, x, y);
}

/// Rank-reducing static slice with unit strides.
Value RecurrentImporter::slice(Value src, ArrayRef<int64_t> offsets,
                               ArrayRef<int64_t> sizes,
                               ArrayRef<int64_t> resultShape) {
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> ones(offsets.size(), 1);
  auto type = RankedTensorType::get(
      resultShape, cast<RankedTensorType>(src.getType()).getElementType());
  return tensor::ExtractSliceOp::create(
      b, loc, type, src, getAsIndexOpFoldResult(ctx, offsets),
      getAsIndexOpFoldResult(ctx, sizes), getAsIndexOpFoldResult(ctx, ones));
}

Value RecurrentImporter::transpose2d(Value v, int64_t rows, int64_t cols) {
  return linalg::TransposeOp::create(b, loc, v,
                                     n.emptyTensor({cols, rows}, ElemKind::F32),
                                     ArrayRef<int64_t>{1, 0})
      .getResult()[0];
}

/// Records `op` as one the node's strategy applies to.
void RecurrentImporter::record(Operation *op,
                               SmallVector<std::optional<OperandSource>> srcs) {
  MainOp m;
  m.op = op;
  m.operands = std::move(srcs);
  strategyOps.push_back(std::move(m));
}

OperandSource RecurrentImporter::xSource() const {
  return s.batchMajor ? OperandSource{kX, {1, 0, 2}}
                      : OperandSource{kX, {0, 1, 2}};
}

/// h_{t-1} is split like X's batch; its hidden dim is whole (the recurrent
/// matmul contracts it).
OperandSource RecurrentImporter::hSource() const {
  return OperandSource{kX, {s.batchMajor ? 0 : 1, -1}};
}

/// lhs [m, k] x rhs [k, nCols] into a zero fill; a strategy op.
Value RecurrentImporter::matmul(Value lhs, Value rhs, int64_t m, int64_t nCols,
                                OperandSource lhsSrc, OperandSource rhsSrc) {
  auto op = linalg::MatmulOp::create(
      b, loc, ValueRange{lhs, rhs},
      ValueRange{n.zeroFilled({m, nCols}, ElemKind::F32)});
  record(op, {lhsSrc, rhsSrc});
  return op.getResult(0);
}

/// An elementwise generic over `shape` (rank 1 or 2); an operand of rank 1
/// is a per-hidden-unit vector broadcast along the batch.
Value RecurrentImporter::map(ArrayRef<Value> ins, ArrayRef<int64_t> shape,
                             const NodeImporter::BodyFn &body) {
  int64_t rank = shape.size();
  MLIRContext *ctx = b.getContext();
  SmallVector<GenericInput> operands;
  for (Value v : ins) {
    int64_t r = cast<RankedTensorType>(v.getType()).getRank();
    AffineMap m =
        r == rank
            ? b.getMultiDimIdentityMap(rank)
            : AffineMap::get(rank, 0, {b.getAffineDimExpr(rank - 1)}, ctx);
    operands.push_back({v, m, std::nullopt});
  }
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  return n
      .buildGeneric(operands, shape, ElemKind::F32, iters, Value(),
                    b.getMultiDimIdentityMap(rank), body)
      ->getResult(0);
}

/// The bias added to gate g's input projection: W's bias plus R's (R's
/// h-gate bias of a GRU with linear_before_reset stays inside the reset).
Value RecurrentImporter::gateBias(int64_t d, int64_t g) {
  if (!n.hasInput(kB))
    return Value();
  Value bias = n.materialize(n.in(kB));
  int64_t h = s.hidden;
  Value wb = slice(bias, {d, g * h}, {1, h}, {h});
  if (s.gruAfterReset() && g == 2)
    return wb;
  Value rb = slice(bias, {d, (s.gates + g) * h}, {1, h}, {h});
  Value sum =
      map({wb, rb}, {h}, [](OpBuilder &bb, Location l, ArrayRef<Value> x) {
        return add(bb, l, x[0], x[1]);
      });
  OperandSource src{kB, {1}};
  record(sum.getDefiningOp(), {src, src});
  return sum;
}

/// Direction d's weights and its input projections for every step.
DirWeights RecurrentImporter::prepare(int64_t d, Value x) {
  DirWeights w;
  int64_t h = s.hidden, in = s.inSize, g4 = s.gates;
  Value wAll = n.materialize(n.in(kW)), rAll = n.materialize(n.in(kR));
  MLIRContext *ctx = b.getContext();
  for (int64_t g = 0; g < g4; ++g) {
    w.wT.push_back(
        transpose2d(slice(wAll, {d, g * h, 0}, {1, h, in}, {h, in}), h, in));
    w.rT.push_back(
        transpose2d(slice(rAll, {d, g * h, 0}, {1, h, h}, {h, h}), h, h));
    // X [S, B, I] x W_g^T [I, H]: loops (s, b, h, i).
    auto e = [&](unsigned i) { return b.getAffineDimExpr(i); };
    SmallVector<GenericInput> ins = {
        {x, AffineMap::get(4, 0, {e(0), e(1), e(3)}, ctx), xSource()},
        {w.wT[g], AffineMap::get(4, 0, {e(3), e(2)}, ctx),
         OperandSource{kW, {2, 1}}}};
    SmallVector<int64_t> shape = {s.seq, s.batch, h};
    SmallVector<IteratorType> iters(3, IteratorType::parallel);
    iters.push_back(IteratorType::reduction);
    Operation *proj = n.buildGeneric(
        ins, shape, ElemKind::F32, iters, n.zeroFilled(shape, ElemKind::F32),
        AffineMap::get(4, 0, {e(0), e(1), e(2)}, ctx),
        [](OpBuilder &bb, Location l, ArrayRef<Value> v) -> Value {
          return add(bb, l, v[2], mul(bb, l, v[0], v[1]));
        });
    record(proj, {ins[0].source, ins[1].source});
    Value xp = proj->getResult(0);
    // The bias is added after the contraction, which then accumulates into
    // a zero fill (an input-dim split may leave it a partial sum).
    if (Value bias = gateBias(d, g)) {
      SmallVector<GenericInput> bi = {
          {xp, b.getMultiDimIdentityMap(3), std::nullopt},
          {bias, AffineMap::get(3, 0, {e(2)}, ctx), std::nullopt}};
      xp = n.buildGeneric(bi, shape, ElemKind::F32,
                          SmallVector<IteratorType>(3, IteratorType::parallel),
                          Value(), b.getMultiDimIdentityMap(3),
                          [](OpBuilder &bb, Location l, ArrayRef<Value> v) {
                            return add(bb, l, v[0], v[1]);
                          })
               ->getResult(0);
    }
    w.xProj.push_back(xp);
  }
  if (s.gruAfterReset() && n.hasInput(kB))
    w.rbH = slice(n.materialize(n.in(kB)), {d, 5 * h}, {1, h}, {h});
  if (s.lstm() && n.hasInput(kPeephole)) {
    Value p = n.materialize(n.in(kPeephole));
    for (int64_t k = 0; k < 3; ++k)
      w.peep.push_back(slice(p, {d, k * h}, {1, h}, {h}));
  }
  return w;
}

/// LSTM step t (gates i o f c): returns (h_t, c_t).
std::pair<Value, Value>
RecurrentImporter::lstmStep(const DirWeights &w, int64_t t, Value h, Value c) {
  int64_t bs = s.batch, hs = s.hidden;
  SmallVector<Value> xs, hr;
  for (int64_t g = 0; g < 4; ++g) {
    xs.push_back(slice(w.xProj[g], {t, 0, 0}, {1, bs, hs}, {bs, hs}));
    hr.push_back(
        matmul(h, w.rT[g], bs, hs, hSource(), OperandSource{kR, {2, 1}}));
  }
  bool peep = !w.peep.empty();
  // c_t = sigma(f) * c_{t-1} + sigma(i) * tanh(c~), with the peepholes
  // p_i * c_{t-1} and p_f * c_{t-1} inside i and f.
  SmallVector<Value> cIns = {xs[0], hr[0], xs[2], hr[2], xs[3], hr[3], c};
  if (peep)
    cIns.append({w.peep[0], w.peep[2]});
  Value cNext =
      map(cIns, {bs, hs}, [&](OpBuilder &bb, Location l, ArrayRef<Value> v) {
        Value i = add(bb, l, v[0], v[1]);
        Value f = add(bb, l, v[2], v[3]);
        if (peep) {
          i = add(bb, l, i, mul(bb, l, v[7], v[6]));
          f = add(bb, l, f, mul(bb, l, v[8], v[6]));
        }
        Value cc = math::TanhOp::create(bb, l, add(bb, l, v[4], v[5]));
        return add(bb, l, mul(bb, l, sigmoid(bb, l, f), v[6]),
                   mul(bb, l, sigmoid(bb, l, i), cc));
      });
  // h_t = sigma(o) * tanh(c_t), peephole p_o * c_t inside o.
  SmallVector<Value> hIns = {xs[1], hr[1], cNext};
  if (peep)
    hIns.push_back(w.peep[1]);
  Value hNext =
      map(hIns, {bs, hs}, [&](OpBuilder &bb, Location l, ArrayRef<Value> v) {
        Value o = add(bb, l, v[0], v[1]);
        if (peep)
          o = add(bb, l, o, mul(bb, l, v[3], v[2]));
        return mul(bb, l, sigmoid(bb, l, o), math::TanhOp::create(bb, l, v[2]));
      });
  return {hNext, cNext};
}

/// GRU step t (gates z r h): returns h_t.
Value RecurrentImporter::gruStep(const DirWeights &w, int64_t t, Value h) {
  int64_t bs = s.batch, hs = s.hidden;
  OperandSource hSrc = hSource(), rSrc{kR, {2, 1}};
  SmallVector<Value> xs;
  for (int64_t g = 0; g < 3; ++g)
    xs.push_back(slice(w.xProj[g], {t, 0, 0}, {1, bs, hs}, {bs, hs}));
  Value hz = matmul(h, w.rT[0], bs, hs, hSrc, rSrc);
  Value hr = matmul(h, w.rT[1], bs, hs, hSrc, rSrc);
  // h_t = (1 - z) * n + z * h_{t-1}, z = sigma(xz + hz).
  auto blend = [](OpBuilder &bb, Location l, Value z, Value nn, Value prev) {
    Value one =
        arith::ConstantOp::create(bb, l, bb.getFloatAttr(z.getType(), 1.0));
    return add(bb, l, mul(bb, l, arith::SubFOp::create(bb, l, one, z), nn),
               mul(bb, l, z, prev));
  };
  if (s.linearBeforeReset) {
    // n = tanh(xn + r * (h_{t-1} R_h^T + Rb_h)).
    Value hn = matmul(h, w.rT[2], bs, hs, hSrc, rSrc);
    SmallVector<Value> ins = {xs[0], hz, xs[1], hr, xs[2], hn, h};
    bool rb = static_cast<bool>(w.rbH);
    if (rb)
      ins.push_back(w.rbH);
    return map(
        ins, {bs, hs}, [&](OpBuilder &bb, Location l, ArrayRef<Value> v) {
          Value z = sigmoid(bb, l, add(bb, l, v[0], v[1]));
          Value r = sigmoid(bb, l, add(bb, l, v[2], v[3]));
          Value rec = rb ? add(bb, l, v[5], v[7]) : v[5];
          Value nn =
              math::TanhOp::create(bb, l, add(bb, l, v[4], mul(bb, l, r, rec)));
          return blend(bb, l, z, nn, v[6]);
        });
  }
  // n = tanh(xn + (r * h_{t-1}) R_h^T): the reset applies before the matmul.
  Value rh =
      map({xs[1], hr, h}, {bs, hs},
          [](OpBuilder &bb, Location l, ArrayRef<Value> v) {
            return mul(bb, l, sigmoid(bb, l, add(bb, l, v[0], v[1])), v[2]);
          });
  Value hn = matmul(rh, w.rT[2], bs, hs, hSrc, rSrc);
  return map({xs[0], hz, xs[2], hn, h}, {bs, hs},
             [&](OpBuilder &bb, Location l, ArrayRef<Value> v) {
               Value z = sigmoid(bb, l, add(bb, l, v[0], v[1]));
               Value nn = math::TanhOp::create(bb, l, add(bb, l, v[2], v[3]));
               return blend(bb, l, z, nn, v[4]);
             });
}

/// RNN step t: h_t = tanh(x W^T + h_{t-1} R^T + Wb + Rb).
Value RecurrentImporter::rnnStep(const DirWeights &w, int64_t t, Value h) {
  int64_t bs = s.batch, hs = s.hidden;
  Value x = slice(w.xProj[0], {t, 0, 0}, {1, bs, hs}, {bs, hs});
  Value hr = matmul(h, w.rT[0], bs, hs, hSource(), OperandSource{kR, {2, 1}});
  return map({x, hr}, {bs, hs},
             [](OpBuilder &bb, Location l, ArrayRef<Value> v) -> Value {
               return math::TanhOp::create(bb, l, add(bb, l, v[0], v[1]));
             });
}

/// Direction d's initial state from input `input` ([D, B, H]; [B, D, H]
/// batch-major), or zeros when the node has none.
Value RecurrentImporter::state(int64_t input, int64_t d) {
  int64_t bs = s.batch, hs = s.hidden;
  if (!n.hasInput(input))
    return n.zeroFilled({bs, hs}, ElemKind::F32);
  Value v = n.materialize(n.in(input));
  if (s.batchMajor)
    return slice(v, {0, d, 0}, {bs, 1, hs}, {bs, hs});
  return slice(v, {d, 0, 0}, {1, bs, hs}, {bs, hs});
}

/// Concatenation along `dim` (the pieces themselves when there is one).
Value RecurrentImporter::stack(ArrayRef<Value> pieces, int64_t dim) {
  if (pieces.size() == 1)
    return pieces[0];
  return tensor::ConcatOp::create(b, loc, dim, pieces).getResult();
}

/// Batch-major X [B, S, I] or state [B, D, H] as seq-first (perm {1, 0, 2}).
Value RecurrentImporter::toSeqFirst(Value v, ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> perm) {
  SmallVector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(shape[p]);
  return linalg::TransposeOp::create(b, loc, v,
                                     n.emptyTensor(out, ElemKind::F32), perm)
      .getResult()[0];
}

LogicalResult RecurrentImporter::run() {
  int64_t bs = s.batch, hs = s.hidden;
  Value x = n.materialize(n.in(kX));
  if (s.batchMajor)
    x = toSeqFirst(x, {bs, s.seq, s.inSize}, {1, 0, 2});
  // Per direction: Y's [S, 1, B, H], Y_h's and Y_c's [1, B, H].
  SmallVector<Value> ys, yhs, ycs;
  for (int64_t d = 0; d < s.dirs; ++d) {
    DirWeights w = prepare(d, x);
    Value h = state(kInitH, d);
    Value c = s.lstm() ? state(kInitC, d) : Value();
    bool backward = s.reverse || d == 1;
    SmallVector<Value> steps(s.seq);
    for (int64_t k = 0; k < s.seq; ++k) {
      int64_t t = backward ? s.seq - 1 - k : k;
      if (s.cell == Cell::LSTM)
        std::tie(h, c) = lstmStep(w, t, h, c);
      else if (s.cell == Cell::GRU)
        h = gruStep(w, t, h);
      else
        h = rnnStep(w, t, h);
      steps[t] = n.reshapeTo(h, {bs, hs}, {1, 1, bs, hs});
    }
    ys.push_back(stack(steps, 0));
    yhs.push_back(n.reshapeTo(h, {bs, hs}, {1, bs, hs}));
    if (s.lstm())
      ycs.push_back(n.reshapeTo(c, {bs, hs}, {1, bs, hs}));
  }
  Value y = stack(ys, 1), yh = stack(yhs, 0);
  Value yc = s.lstm() ? stack(ycs, 0) : Value();
  if (s.batchMajor) {
    // Y [S, D, B, H] -> [B, S, D, H]; Y_h, Y_c [D, B, H] -> [B, D, H].
    y = toSeqFirst(y, {s.seq, s.dirs, bs, hs}, {2, 0, 1, 3});
    yh = toSeqFirst(yh, {s.dirs, bs, hs}, {1, 0, 2});
    if (yc)
      yc = toSeqFirst(yc, {s.dirs, bs, hs}, {1, 0, 2});
  }
  n.setOutput(0, narrowFromF32(n, y, s.kind), s.kind);
  n.setOutput(1, narrowFromF32(n, yh, s.kind), s.kind);
  if (yc)
    n.setOutput(2, narrowFromF32(n, yc, s.kind), s.kind);
  // The node's strategy applies to every projection, bias sum and
  // recurrent matmul; none of them is the node's output.
  n.main = strategyOps.front();
  n.main.more.assign(strategyOps.begin() + 1, strategyOps.end());
  return success();
}

/// Checks `activations` names the defaults (LSTM: Sigmoid Tanh Tanh; GRU:
/// Sigmoid Tanh; RNN: Tanh) for every direction.
LogicalResult checkActivations(NodeImporter &n, Cell cell, int64_t dirs) {
  const onnx::AttributeProto *a = n.attr("activations");
  if (n.attr("activation_alpha") || n.attr("activation_beta"))
    return n.error() << "has activation_alpha/activation_beta; only the "
                        "default activations are supported";
  if (!a)
    return success();
  SmallVector<StringRef> dflt = {"Sigmoid", "Tanh"};
  if (cell == Cell::LSTM)
    dflt.push_back("Tanh");
  if (cell == Cell::RNN)
    dflt = {"Tanh"};
  if (a->strings_size() != static_cast<int64_t>(dflt.size()) * dirs)
    return n.error() << "has " << a->strings_size() << " activations; expected "
                     << dflt.size() * dirs;
  for (int64_t k = 0; k < a->strings_size(); ++k)
    if (!StringRef(a->strings(k)).equals_insensitive(dflt[k % dflt.size()]))
      return n.error() << "has activation '" << a->strings(k) << "' where "
                       << dflt[k % dflt.size()]
                       << " is expected; only the default activations are "
                          "supported";
  return success();
}

/// Checks input `i` (when present) is a float tensor of `shape`.
LogicalResult checkShape(NodeImporter &n, int64_t i, StringRef what,
                         ArrayRef<int64_t> shape) {
  if (!n.hasInput(i))
    return success();
  const Val &v = n.in(i);
  if (v.kind != ElemKind::F32)
    return n.error() << what << " (input #" << i << ") must be float32";
  if (ArrayRef<int64_t>(v.shape) != shape) {
    InFlightDiagnostic diag = n.error()
                              << what << " (input #" << i << ") has shape [";
    llvm::interleaveComma(v.shape, diag);
    diag << "]; expected [";
    llvm::interleaveComma(shape, diag);
    return diag << "]";
  }
  return success();
}

/// Reads and validates the node's attributes and input shapes.
FailureOr<Spec> readSpec(NodeImporter &n, StringRef opType) {
  Spec s;
  s.cell = opType == "LSTM"  ? Cell::LSTM
           : opType == "GRU" ? Cell::GRU
                             : Cell::RNN;
  s.gates = s.lstm() ? 4 : s.cell == Cell::GRU ? 3 : 1;
  if (!n.hasInput(kX) || !n.hasInput(kW) || !n.hasInput(kR))
    return n.error() << "expects inputs X, W and R";
  if (n.attr("clip"))
    return n.error() << "has clip, which is not supported";
  if (s.lstm() && n.attrInt("input_forget", 0) != 0)
    return n.error() << "has input_forget = 1, which is not supported";
  int64_t layout = n.attrInt("layout", 0);
  if (layout != 0 && layout != 1)
    return n.error() << "has an unknown layout " << layout;
  s.batchMajor = layout == 1;
  const onnx::AttributeProto *dirAttr = n.attr("direction");
  std::string dir = dirAttr ? dirAttr->s() : "forward";
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return n.error() << "has an unknown direction '" << dir << "'";
  s.dirs = dir == "bidirectional" ? 2 : 1;
  s.reverse = dir == "reverse";
  s.linearBeforeReset = n.attrInt("linear_before_reset", 0) != 0;
  if (failed(checkActivations(n, s.cell, s.dirs)))
    return failure();
  const Val &x = n.in(kX), &r = n.in(kR);
  if (x.rank() != 3 || r.rank() != 3)
    return n.error() << "expects X and R of rank 3";
  s.seq = x.shape[s.batchMajor ? 1 : 0];
  s.batch = x.shape[s.batchMajor ? 0 : 1];
  s.inSize = x.shape[2];
  s.hidden = n.attrInt("hidden_size", r.shape[2]);
  int64_t h = s.hidden, d = s.dirs, gh = s.gates * h;
  int64_t b0 = s.batchMajor ? s.batch : d, b1 = s.batchMajor ? d : s.batch;
  if (failed(checkShape(n, kX, "X", x.shape)) ||
      failed(checkShape(n, kW, "W", {d, gh, s.inSize})) ||
      failed(checkShape(n, kR, "R", {d, gh, h})) ||
      failed(checkShape(n, kB, "B", {d, 2 * gh})) ||
      failed(checkShape(n, kInitH, "initial_h", {b0, b1, h})))
    return failure();
  if (s.lstm() && (failed(checkShape(n, kInitC, "initial_c", {b0, b1, h})) ||
                   failed(checkShape(n, kPeephole, "P", {d, 3 * h}))))
    return failure();
  if (n.hasInput(kSeqLens)) {
    // Every sequence runs the full static length; a sequence_lens saying
    // so is accepted, anything else would need masking.
    const Val &lens = n.in(kSeqLens);
    bool full = lens.isConstant() && lens.constant->numel() == s.batch;
    for (int64_t k = 0; full && k < s.batch; ++k)
      full = lens.constant->getI(k) == s.seq;
    if (!full) {
      InFlightDiagnostic diag =
          n.error() << "has a sequence_lens input that is not a constant of "
                    << "the full length " << s.seq
                    << " for every sequence; autoshard unrolls every "
                       "sequence to the static length";
      // A graph input: a user with full-length sequences can freeze it.
      if (!lens.isConstant() && isa<BlockArgument>(lens.value)) {
        const std::string &name = n.getNode().input(kSeqLens);
        diag << " (it is graph input '" << name
             << "': give its value with --freeze " << name << "=FILE.npy)";
      }
      return diag;
    }
  }
  return s;
}

LogicalResult convertRecurrent(NodeImporter &n, StringRef opType) {
  FailureOr<ElemKind> kind =
      widenHalfInputs(n, {kX, kW, kR, kB, kInitH, kInitC, kPeephole});
  if (failed(kind))
    return failure();
  FailureOr<Spec> s = readSpec(n, opType);
  if (failed(s))
    return failure();
  s->kind = *kind;
  if (s->seq < 1 || s->batch < 1 || s->hidden < 1)
    return n.error() << "has an empty sequence, batch or hidden size";
  return RecurrentImporter(n, *s).run();
}

} // namespace

void autoshard::onnx_import::registerRecurrentOps(OpTable &t) {
  t["LSTM"] = convertRecurrent;
  t["GRU"] = convertRecurrent;
  t["RNN"] = convertRecurrent;
}
