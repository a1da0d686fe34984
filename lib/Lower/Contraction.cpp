//===- Contraction.cpp - Multiply-accumulate linalg ops as GEMMs ----------===//
//
// C[...] += A[...] * B[...]: every loop of size > 1 is a batch loop (in A, B
// and C), an M loop (A and C), an N loop (B and C) or a K loop (A and B).
// The runtime's GEMMs read row-major [batch][rows][cols] operands, each
// optionally transposed per batch entry (transA/transB), and accumulate into
// a row-major [batch][M][N] init. So an operand is used in place, through a
// Reshape (which shares storage), when its dims -- size-1 dims aside -- read
// as the batch group followed by its two other groups in either order, every
// group in one order common to all operands; a C in [batch][N][M] order is
// computed as B^T A^T. An operand that does not read so is packed once by a
// Transpose (C: its init in, the result out; an init that is a fill or an
// empty tensor is made in the packed order instead). The group orders are
// chosen among those the operands use so as to move the fewest elements.
//
//===----------------------------------------------------------------------===//

#include "Contraction.h"
#include "GemmEpilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <array>
#include <optional>

using namespace mlir;
using namespace autoshard;
namespace rt = autoshard::rt;

namespace {

enum Group { Batch, M, N, K, NumGroups };
using Order = SmallVector<int64_t, 4>;
using GroupOrders = std::array<Order, NumGroups>;

/// One operand of the contraction.
struct Operand {
  Value value;
  RankedTensorType type;
  /// The loop indexing each dim; -1 for a constant 0 (on a size-1 dim).
  SmallVector<int64_t, 4> loops;
  /// The loops of size > 1 in dim order: what decides the memory layout.
  Order order;
  /// The groups besides the batch one, in GEMM order (A: M K, B: K N,
  /// C: M N).
  Group first, second;
};

/// `v`, or what it was extended from by an `arith.extf` (a mixed-precision
/// input, --dist-mixed-precision).
Value stripExtension(Value v) {
  if (auto ext = v.getDefiningOp<arith::ExtFOp>())
    return ext.getIn();
  return v;
}

/// The body is `yield(init + in0 * in1)` with either operand order, the
/// inputs possibly extended first (bf16/f16 inputs, f32 accumulation).
bool isMultiplyAccumulate(Block &body) {
  if (body.getNumArguments() != 3)
    return false;
  int extensions = 0;
  for (Operation &op : body.without_terminator())
    if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
      auto arg = dyn_cast<BlockArgument>(ext.getIn());
      if (!arg || arg.getOwner() != &body || arg.getArgNumber() > 1)
        return false;
      ++extensions;
    }
  if (body.getOperations().size() != 3u + extensions)
    return false;
  auto it = std::next(body.begin(), extensions);
  auto mul = dyn_cast<arith::MulFOp>(*it++);
  auto add = dyn_cast<arith::AddFOp>(*it++);
  auto yield = dyn_cast<linalg::YieldOp>(*it);
  if (!mul || !add || !yield || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != add.getResult())
    return false;
  auto isPair = [](Value x, Value y, Value p, Value q) {
    return (x == p && y == q) || (x == q && y == p);
  };
  return isPair(stripExtension(mul.getLhs()), stripExtension(mul.getRhs()),
                body.getArgument(0), body.getArgument(1)) &&
         isPair(add.getLhs(), add.getRhs(), body.getArgument(2),
                mul.getResult());
}

/// Whether `dims` is `a` ++ `b` ++ `c`.
bool readsAs(ArrayRef<int64_t> dims, ArrayRef<int64_t> a, ArrayRef<int64_t> b,
             ArrayRef<int64_t> c) {
  if (dims.size() != a.size() + b.size() + c.size())
    return false;
  return dims.take_front(a.size()) == a &&
         dims.slice(a.size(), b.size()) == b && dims.take_back(c.size()) == c;
}

/// How `x` is read under `orders`: nullopt if it must be packed, else
/// whether its two groups come swapped ([batch][second][first]).
std::optional<bool> fit(const Operand &x, const GroupOrders &orders) {
  if (readsAs(x.order, orders[Batch], orders[x.first], orders[x.second]))
    return false;
  if (readsAs(x.order, orders[Batch], orders[x.second], orders[x.first]))
    return true;
  return std::nullopt;
}

/// The loops of group `g` in the order `x` holds them.
Order orderIn(const Operand &x, ArrayRef<Group> groupOf, Group g) {
  Order o;
  for (int64_t l : x.order)
    if (groupOf[l] == g)
      o.push_back(l);
  return o;
}

class ContractionLowering {
public:
  /// `builder` may be null for analyse / chooseOrders alone.
  ContractionLowering(linalg::LinalgOp op, lower::PlanBuilder *builder)
      : op(op), raw(op.getOperation()), builder(builder) {}

  /// Fills operands, ranges and groups; false if `op` is no contraction.
  /// With `lookThroughTransposes`, inputs made by a linalg.transpose that
  /// isFoldedIntoContractions are read from the transpose's input.
  bool analyse(bool lookThroughTransposes);
  /// Reads input `i` from the input of `transpose`, which made it.
  void lookThrough(int i, linalg::TransposeOp transpose);
  /// Picks the group orders moving the fewest elements.
  void chooseOrders();
  /// Whether every input that `value` feeds is read in place.
  bool readsInPlace(Value value) const {
    for (int i = 0; i < 2; ++i)
      if (operands[i].value == value && !fit(operands[i], orders))
        return false;
    return true;
  }
  /// Whether the init (a fill or an empty tensor) is made afresh rather
  /// than read: in the packed order, or where others read it too (the GEMM
  /// would otherwise copy it). Needs chooseOrders.
  bool remakesInit() const {
    return freshInit &&
           (!fit(operands[2], orders) || !operands[2].value.hasOneUse());
  }
  /// Whether the GEMM applies the elementwise ops that follow it (a bias
  /// along its columns, then ReLU / GELU: GemmEpilogue.h) itself; sets
  /// `epilogue`. Needs chooseOrders.
  bool matchEpilogue();
  /// Whether `other` need not run: matchEpilogue folded it into the GEMM.
  bool absorbs(Operation *other) const {
    return epilogue && llvm::is_contained(epilogue->absorbed, other);
  }
  /// The op whose result the GEMM defines (the epilogue's last one).
  Operation *getTail() const { return epilogue ? epilogue->tail : raw; }
  /// The ops matchEpilogue folded into the GEMM (none without one).
  ArrayRef<Operation *> getAbsorbed() const {
    return epilogue ? ArrayRef<Operation *>(epilogue->absorbed)
                    : ArrayRef<Operation *>();
  }
  LogicalResult emit();

private:
  /// The group the GEMM's output columns are (the bias runs along them).
  Group columnGroup() const {
    return fit(operands[2], orders).value_or(false) ? M : N;
  }
  /// Whether `bias`, indexed by `map` from the result's dims, is a vector
  /// along the GEMM's columns, stored in their order.
  bool isColumnVector(Value bias, AffineMap map) const;
  rt::ValueId addValue(rt::Shape shape, rt::DType type) {
    return builder->program.addValue(type, std::move(shape));
  }
  rt::DType typeOf(rt::ValueId id) { return builder->program.values[id].type; }
  rt::Shape shapeOf(rt::ValueId id) {
    return builder->program.values[id].shape;
  }
  /// `in` viewed with `shape` (no instruction if it already has it).
  rt::ValueId reshape(rt::ValueId in, rt::Shape shape, rt::ValueId to = -1);
  /// `in` with dim k of the result = dim perm[k] of `in`, packed.
  rt::ValueId transpose(rt::ValueId in, ArrayRef<int64_t> perm,
                        rt::ValueId to = -1);
  /// The permutation putting `x`'s dims in the packed order `target`
  /// (loops), the dims it does not decide (size 1) last.
  SmallVector<int64_t> packingPerm(const Operand &x, ArrayRef<int64_t> target);
  int64_t groupSize(Group g) const {
    int64_t size = 1;
    for (auto [l, range] : llvm::enumerate(ranges))
      if (groupOf[l] == g)
        size *= range;
    return size;
  }
  /// The GEMM operand shape of `x`: [batch,] rows, cols.
  rt::Shape gemmShape(Group rows, Group cols) const {
    rt::Shape s;
    if (batched)
      s.push_back(groupSize(Batch));
    s.push_back(groupSize(rows));
    s.push_back(groupSize(cols));
    return s;
  }
  /// `x` as a GEMM operand; sets `swapped` to its group order.
  FailureOr<rt::ValueId> prepareInput(const Operand &x, bool &swapped);

  linalg::LinalgOp op;
  Operation *raw;
  lower::PlanBuilder *builder;
  /// The init's and result's type (the inputs': the same, or bf16/f16
  /// inputs of an f32 accumulation).
  rt::DType dtype = rt::DType::F32;
  /// --dist-mixed-precision=precision=tf32 marked it (dist.tf32).
  bool tf32 = false;
  SmallVector<int64_t> ranges;
  /// Per loop; NumGroups for a loop of size 1 (in no group).
  SmallVector<Group> groupOf;
  std::array<Operand, 3> operands; // A, B, C
  GroupOrders orders;
  /// A batch group of other than one element (BatchMatmul, else Matmul).
  bool batched = false;
  /// The init is a linalg.fill or tensor.empty: a packed C is made afresh.
  bool freshInit = false;
  struct Epilogue {
    rt::GemmEpilogue kind = rt::GemmEpilogue::None;
    Value bias; // null without one
    Operation *tail = nullptr;
    /// The ops the GEMM does the work of: the steps (tail included) and a
    /// broadcast only the bias add read.
    SmallVector<Operation *, 3> absorbed;
  };
  std::optional<Epilogue> epilogue;
};

bool ContractionLowering::analyse(bool lookThroughTransposes) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      raw->getNumResults() != 1 || raw->getNumRegions() != 1 ||
      !raw->getRegion(0).hasOneBlock() ||
      !isMultiplyAccumulate(raw->getRegion(0).front()))
    return false;
  Type elem = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  Type inputElem = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  std::optional<rt::DType> c = lower::toDType(elem),
                           ab = lower::toDType(inputElem);
  // The runtime's GEMMs: f32 or f64 throughout, or bf16/f16 A and B into f32.
  bool lowInputs = ab == rt::DType::BF16 || ab == rt::DType::F16;
  if (!c || !((c == ab && (c == rt::DType::F32 || c == rt::DType::F64)) ||
              (c == rt::DType::F32 && lowInputs)))
    return false;
  dtype = *c;
  tf32 = raw->hasAttr("dist.tf32");

  for (int64_t r : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(r))
      return false;
    ranges.push_back(r);
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Value values[3] = {op.getDpsInputs()[0], op.getDpsInputs()[1],
                     op.getDpsInits()[0]};
  SmallVector<unsigned> seenIn(ranges.size(), 0);
  for (int i = 0; i < 3; ++i) {
    Operand &x = operands[i];
    x.value = values[i];
    x.type = dyn_cast<RankedTensorType>(values[i].getType());
    if (!x.type || !x.type.hasStaticShape() ||
        x.type.getElementType() != (i < 2 ? inputElem : elem))
      return false;
    AffineMap map = maps[i];
    if (map.getNumSymbols() || map.getNumDims() != ranges.size() ||
        map.getNumResults() != x.type.getRank())
      return false;
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      int64_t size = x.type.getDimSize(d);
      if (auto cst = dyn_cast<AffineConstantExpr>(expr)) {
        if (cst.getValue() != 0 || size != 1)
          return false;
        x.loops.push_back(-1);
        continue;
      }
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim || size != ranges[dim.getPosition()] ||
          (seenIn[dim.getPosition()] & (1u << i)))
        return false;
      seenIn[dim.getPosition()] |= 1u << i;
      x.loops.push_back(dim.getPosition());
    }
  }
  // Classify the loops; a loop of size 1 runs once wherever it appears.
  bool any[NumGroups] = {};
  for (auto [l, range] : llvm::enumerate(ranges)) {
    Group g = NumGroups;
    switch (seenIn[l]) {
    case 7:
      g = Batch;
      break;
    case 1 | 4:
      g = M;
      break;
    case 2 | 4:
      g = N;
      break;
    case 1 | 2:
      g = K;
      break;
    default:
      if (range != 1)
        return false;
    }
    if (range == 1)
      g = NumGroups;
    groupOf.push_back(g);
    if (g != NumGroups)
      any[g] = true;
  }
  // Elementwise multiply-adds (no K and no M x N product) stay loop nests.
  if (!any[K] && !(any[M] && any[N]))
    return false;
  batched = groupSize(Batch) != 1;
  // Batched dot products (neither M nor N) are reductions: a GEMM call per
  // batch entry costs more than the loop nest.
  if (batched && !any[M] && !any[N])
    return false;
  const Group firsts[3][2] = {{M, K}, {K, N}, {M, N}};
  for (int i = 0; i < 3; ++i) {
    Operand &x = operands[i];
    x.first = firsts[i][0];
    x.second = firsts[i][1];
    // Loops of size 0 or 1 do not decide the layout: with one the layout
    // does not depend on where the dim is, with the other it is empty.
    for (int64_t l : x.loops)
      if (l >= 0 && ranges[l] > 1)
        x.order.push_back(l);
  }
  for (int i = 0; i < 2 && lookThroughTransposes; ++i)
    if (auto t = operands[i].value.getDefiningOp<linalg::TransposeOp>())
      if (lower::isFoldedIntoContractions(t))
        lookThrough(i, t);
  Operation *init = operands[2].value.getDefiningOp();
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(init))
    freshInit = fill.hasPureTensorSemantics() &&
                !isa<ShapedType>(fill.getInputs()[0].getType());
  else
    freshInit = isa_and_nonnull<tensor::EmptyOp>(init);
  return true;
}

void ContractionLowering::chooseOrders() {
  // An order shared by the operands that are read in place is the order one
  // of them holds, so trying those finds the cheapest choice.
  std::array<SmallVector<Order, 3>, NumGroups> candidates;
  const int holders[NumGroups][3] = {
      {2, 0, 1}, {2, 0, -1}, {2, 1, -1}, {0, 1, -1}};
  for (int g = 0; g < NumGroups; ++g)
    for (int i : holders[g]) {
      if (i < 0)
        continue;
      Order o = orderIn(operands[i], groupOf, static_cast<Group>(g));
      if (!llvm::is_contained(candidates[g], o))
        candidates[g].push_back(o);
    }
  int64_t best = -1;
  GroupOrders trial;
  for (const Order &b : candidates[Batch])
    for (const Order &m : candidates[M])
      for (const Order &n : candidates[N])
        for (const Order &k : candidates[K]) {
          trial = GroupOrders{b, m, n, k};
          int64_t cost = 0;
          for (int i = 0; i < 3; ++i) {
            if (fit(operands[i], trial))
              continue;
            int64_t elems = operands[i].type.getNumElements() + 1;
            cost += i == 2 && !freshInit ? 2 * elems : elems;
          }
          if (best < 0 || cost < best) {
            best = cost;
            orders = trial;
          }
        }
}

rt::ValueId ContractionLowering::reshape(rt::ValueId in, rt::Shape shape,
                                         rt::ValueId to) {
  if (to < 0 && shapeOf(in) == shape)
    return in;
  if (to < 0)
    to = addValue(shape, typeOf(in));
  rt::Instruction &inst = builder->emit(rt::OpKind::Reshape, raw);
  inst.operands = {in};
  inst.results = {to};
  return to;
}

rt::ValueId ContractionLowering::transpose(rt::ValueId in,
                                           ArrayRef<int64_t> perm,
                                           rt::ValueId to) {
  rt::Shape inShape = shapeOf(in), shape;
  for (int64_t p : perm)
    shape.push_back(inShape[p]);
  rt::ValueId init = addValue(shape, typeOf(in));
  builder->emit(rt::OpKind::Empty, raw).results = {init};
  if (to < 0)
    to = addValue(shape, typeOf(in));
  rt::Instruction &inst = builder->emit(rt::OpKind::Transpose, raw);
  inst.operands = {in, init};
  inst.results = {to};
  inst.perm.assign(perm.begin(), perm.end());
  return to;
}

SmallVector<int64_t>
ContractionLowering::packingPerm(const Operand &x, ArrayRef<int64_t> target) {
  SmallVector<int64_t> perm;
  for (int64_t l : target)
    perm.push_back(llvm::find(x.loops, l) - x.loops.begin());
  for (auto [d, l] : llvm::enumerate(x.loops))
    if (!llvm::is_contained(target, l))
      perm.push_back(d);
  return perm;
}

FailureOr<rt::ValueId> ContractionLowering::prepareInput(const Operand &x,
                                                         bool &swapped) {
  FailureOr<rt::ValueId> id = builder->lookup(x.value, raw);
  if (failed(id))
    return failure();
  std::optional<bool> fits = fit(x, orders);
  swapped = fits.value_or(false);
  rt::ValueId in = *id;
  if (!fits) {
    Order target = orders[Batch];
    target.append(orders[x.first]);
    target.append(orders[x.second]);
    in = transpose(in, packingPerm(x, target));
  }
  return swapped ? reshape(in, gemmShape(x.second, x.first))
                 : reshape(in, gemmShape(x.first, x.second));
}

bool ContractionLowering::isColumnVector(Value bias, AffineMap map) const {
  auto type = cast<RankedTensorType>(bias.getType());
  const Operand &c = operands[2];
  if (map.getNumSymbols() || map.getNumResults() != type.getRank() ||
      map.getNumDims() != c.loops.size())
    return false;
  Order order;
  for (auto [d, expr] : llvm::enumerate(map.getResults())) {
    int64_t size = type.getDimSize(d);
    if (auto cst = dyn_cast<AffineConstantExpr>(expr)) {
      if (cst.getValue() != 0 || size != 1)
        return false;
      continue;
    }
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      return false;
    int64_t loop = c.loops[dim.getPosition()];
    int64_t range = loop < 0 ? 1 : ranges[loop];
    if (size != range)
      return false;
    if (range > 1)
      order.push_back(loop);
  }
  return order == orders[columnGroup()];
}

bool ContractionLowering::matchEpilogue() {
  epilogue.reset();
  // cuBLASLt's epilogues run on f32 results (bf16/f16 inputs included).
  if (!lower::gemmEpiloguesEnabled() || dtype != rt::DType::F32 ||
      llvm::is_contained(ranges, 0))
    return false;
  Value result = raw->getResult(0);
  if (!result.hasOneUse())
    return false;
  auto first = dyn_cast<linalg::LinalgOp>(*result.getUsers().begin());
  std::optional<lower::EpilogueStep> step;
  if (first)
    step = lower::matchEpilogueStep(first, result);
  if (!step || (step->bias && !isColumnVector(step->bias, step->biasMap)))
    return false;
  Epilogue e;
  e.bias = step->bias;
  e.tail = first;
  e.absorbed = {first};
  if (step->broadcast)
    e.absorbed.push_back(step->broadcast);
  lower::Activation act = step->activation;
  // A bias add, then an activation as an op of its own.
  Value sum = first->getResult(0);
  if (step->bias && act == lower::Activation::None && sum.hasOneUse())
    if (auto second = dyn_cast<linalg::LinalgOp>(*sum.getUsers().begin()))
      if (std::optional<lower::EpilogueStep> next =
              lower::matchEpilogueStep(second, sum);
          next && !next->bias) {
        act = next->activation;
        e.tail = second;
        e.absorbed.push_back(second);
      }
  using rt::GemmEpilogue;
  switch (act) {
  case lower::Activation::None:
    e.kind = GemmEpilogue::Bias;
    break;
  case lower::Activation::Relu:
    e.kind = e.bias ? GemmEpilogue::BiasRelu : GemmEpilogue::Relu;
    break;
  case lower::Activation::Gelu:
    e.kind = e.bias ? GemmEpilogue::BiasGelu : GemmEpilogue::Gelu;
    break;
  case lower::Activation::GeluErf:
    e.kind = e.bias ? GemmEpilogue::BiasGeluErf : GemmEpilogue::GeluErf;
    break;
  }
  epilogue = std::move(e);
  return true;
}

LogicalResult ContractionLowering::emit() {
  const Operand &a = operands[0], &b = operands[1], &c = operands[2];
  bool transA, transB;
  FailureOr<rt::ValueId> lhs = prepareInput(a, transA);
  FailureOr<rt::ValueId> rhs = prepareInput(b, transB);
  FailureOr<rt::ValueId> result = builder->define(getTail()->getResult(0));
  if (failed(lhs) || failed(rhs) || failed(result))
    return failure();
  // The bias as the vector of the GEMM's columns (a reshape, no copy).
  std::optional<rt::ValueId> bias;
  if (epilogue && epilogue->bias) {
    FailureOr<rt::ValueId> id = builder->lookup(epilogue->bias, raw);
    if (failed(id))
      return failure();
    bias = reshape(*id, {groupSize(columnGroup())});
  }

  // C: in place as [batch][M][N], or as [batch][N][M] = (B^T A^T) per
  // batch entry, or packed as [batch][M][N].
  std::optional<bool> cFits = fit(c, orders);
  bool swapC = cFits.value_or(false);
  rt::Shape gemmOut = swapC ? gemmShape(N, M) : gemmShape(M, N);
  SmallVector<int64_t> cPerm;
  rt::ValueId init = -1;
  if (!cFits) {
    Order target = orders[Batch];
    target.append(orders[M]);
    target.append(orders[N]);
    cPerm = packingPerm(c, target);
  }
  if (remakesInit()) {
    std::optional<rt::ValueId> fillValue;
    if (auto fill = c.value.getDefiningOp<linalg::FillOp>()) {
      FailureOr<rt::ValueId> value = builder->lookup(fill.getInputs()[0], raw);
      if (failed(value))
        return failure();
      fillValue = *value;
    }
    init = addValue(gemmOut, dtype);
    rt::Instruction &inst =
        builder->emit(fillValue ? rt::OpKind::Fill : rt::OpKind::Empty, raw);
    if (fillValue)
      inst.operands = {*fillValue};
    inst.results = {init};
  } else {
    FailureOr<rt::ValueId> id = builder->lookup(c.value, raw);
    if (failed(id))
      return failure();
    init = cFits ? *id : transpose(*id, cPerm);
  }
  init = reshape(init, gemmOut);

  rt::Shape cShape(c.type.getShape().begin(), c.type.getShape().end());
  rt::ValueId gemmResult =
      cFits && gemmOut == cShape ? *result : addValue(gemmOut, dtype);
  rt::Instruction &gemm = builder->emit(
      batched ? rt::OpKind::BatchMatmul : rt::OpKind::Matmul, raw);
  if (!swapC) {
    gemm.operands = {*lhs, *rhs, init};
    gemm.transA = transA;
    gemm.transB = transB;
  } else {
    // C^T = B^T A^T: B is the left operand, transposed unless stored
    // [N][K]; A the right one, transposed unless stored [K][M].
    gemm.operands = {*rhs, *lhs, init};
    gemm.transA = !transB;
    gemm.transB = !transA;
  }
  gemm.results = {gemmResult};
  gemm.tf32 = tf32;
  if (epilogue)
    gemm.epilogue = epilogue->kind;
  if (bias)
    gemm.operands.push_back(*bias);
  if (gemmResult == *result)
    return success();
  if (cFits) {
    reshape(gemmResult, cShape, *result);
    return success();
  }
  rt::Shape packed;
  for (int64_t p : cPerm)
    packed.push_back(cShape[p]);
  SmallVector<int64_t> inverse(cPerm.size());
  for (auto [k, p] : llvm::enumerate(cPerm))
    inverse[p] = k;
  transpose(reshape(gemmResult, packed), inverse, *result);
  return success();
}

void ContractionLowering::lookThrough(int i, linalg::TransposeOp transpose) {
  // Dim d of the transpose's result is dim perm[d] of its input.
  Operand &x = operands[i];
  ArrayRef<int64_t> perm = transpose.getPermutation();
  SmallVector<int64_t, 4> loops(x.loops.size());
  for (auto [d, p] : llvm::enumerate(perm))
    loops[p] = x.loops[d];
  x.loops = loops;
  x.value = transpose.getInput();
  x.type = cast<RankedTensorType>(x.value.getType());
  x.order.clear();
  for (int64_t l : x.loops)
    if (l >= 0 && ranges[l] > 1)
      x.order.push_back(l);
}

} // namespace

/// The linalg ops whose epilogue `op` may be part of: it is a step (the
/// first or the second) or the bias broadcast the first step reads.
static SmallVector<linalg::LinalgOp> getEpilogueHeads(Operation *op) {
  SmallVector<Operation *, 2> steps = {op};
  if (op->getNumResults() == 1 && op->getResult(0).hasOneUse())
    steps.push_back(*op->getResult(0).getUsers().begin());
  SmallVector<linalg::LinalgOp> heads;
  auto add = [&](Value v) {
    if (auto head = v.getDefiningOp<linalg::LinalgOp>())
      if (head != op && !llvm::is_contained(heads, head))
        heads.push_back(head);
  };
  for (Operation *step : steps)
    for (Value v : step->getOperands()) {
      add(v);
      if (auto prev = v.getDefiningOp<linalg::LinalgOp>())
        for (Value w : prev->getOperands())
          add(w);
    }
  return heads;
}

FailureOr<bool> lower::tryLowerContraction(linalg::LinalgOp op,
                                           PlanBuilder &builder) {
  ContractionLowering lowering(op, &builder);
  if (lowering.analyse(/*lookThrough=*/true)) {
    lowering.chooseOrders();
    // With an epilogue the GEMM is emitted at its last op, where
    // everything it reads (the bias too) is defined.
    if (lowering.matchEpilogue())
      return true;
    if (failed(lowering.emit()))
      return failure();
    return true;
  }
  // An op of a contraction's epilogue: the GEMM where the tail is, nothing
  // for the others.
  for (linalg::LinalgOp head : getEpilogueHeads(op)) {
    ContractionLowering gemm(head, &builder);
    if (!gemm.analyse(/*lookThrough=*/true))
      continue;
    gemm.chooseOrders();
    if (!gemm.matchEpilogue() || !gemm.absorbs(op))
      continue;
    if (gemm.getTail() == op && failed(gemm.emit()))
      return failure();
    return true;
  }
  return false;
}

bool lower::isGemm(linalg::LinalgOp op) {
  ContractionLowering lowering(op, nullptr);
  return lowering.analyse(/*lookThroughTransposes=*/true);
}

SmallVector<Operation *> lower::getGemmEpilogueOps(linalg::LinalgOp op) {
  ContractionLowering lowering(op, nullptr);
  if (!lowering.analyse(/*lookThroughTransposes=*/true))
    return {};
  lowering.chooseOrders();
  if (!lowering.matchEpilogue())
    return {};
  return SmallVector<Operation *>(lowering.getAbsorbed());
}

/// The result of a one-result linalg op on tensors, if anything reads it.
static Value usedTensorResult(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      op->getResult(0).use_empty())
    return nullptr;
  return op->getResult(0);
}

bool lower::isRemadeByContractions(linalg::FillOp fill) {
  Value result = usedTensorResult(fill);
  if (!result)
    return false;
  for (OpOperand &use : result.getUses()) {
    auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!user || user.getNumDpsInputs() != 2 || use.getOperandNumber() != 2)
      return false;
    ContractionLowering lowering(user, nullptr);
    if (!lowering.analyse(/*lookThroughTransposes=*/true))
      return false;
    lowering.chooseOrders();
    if (!lowering.remakesInit())
      return false;
  }
  return true;
}

bool lower::isFoldedIntoContractions(linalg::TransposeOp transpose) {
  Value result = usedTensorResult(transpose);
  if (!result)
    return false;
  // Only inputs of contractions; with one use the packing copy (if the
  // contraction needs one) replaces the transpose, with more every one of
  // them must read the transpose's input in place.
  bool single = result.hasOneUse();
  SmallPtrSet<Operation *, 4> users;
  for (OpOperand &use : result.getUses()) {
    auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!user || use.getOperandNumber() >= 2 || user.getNumDpsInputs() != 2)
      return false;
    users.insert(user);
  }
  for (Operation *user : users) {
    ContractionLowering lowering(cast<linalg::LinalgOp>(user), nullptr);
    if (!lowering.analyse(/*lookThrough=*/false))
      return false;
    if (single)
      continue;
    for (int i = 0; i < 2; ++i)
      if (user->getOperand(i) == result)
        lowering.lookThrough(i, transpose);
    lowering.chooseOrders();
    if (!lowering.readsInPlace(transpose.getInput()))
      return false;
  }
  return true;
}
