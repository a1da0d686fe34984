//===- OnnxEinsumOps.cpp - Einsum as one linalg.generic contraction -------===//
//
// An Einsum equation names every dim with a label; the op is one
// linalg.generic with a loop per label: the output's labels parallel, the
// others reductions, each operand read through the projection of its
// labels, the body multiplying the operands into the accumulator. That is
// the shape of a linalg contraction, so the propagation rules that split a
// matmul's batch, M, N or K dims apply to it unchanged. A label repeated
// within one operand (a diagonal) is first taken out by a gather generic,
// so that every indexing map stays a projected permutation.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

using namespace mlir;
using namespace autoshard::onnx_import;
using mlir::utils::IteratorType;

namespace {

/// Labels are letters; the dims an ellipsis covers get labels from 256 on,
/// counted from the right (256: the last), so that they align across
/// operands as numpy broadcasting aligns batch dims.
using Labels = std::vector<int>;

struct Equation {
  std::vector<Labels> inputs;
  Labels output;
};

/// Parses `term` ("ab...c") for an operand of rank `rank`; `ellipsis` is
/// the number of dims the ellipsis covers (set from the largest operand).
FailureOr<Labels> parseTerm(NodeImporter &n, StringRef term, int64_t rank,
                            int64_t &ellipsis) {
  Labels labels;
  size_t dots = term.find("...");
  StringRef before = dots == StringRef::npos ? term : term.take_front(dots);
  StringRef after = dots == StringRef::npos ? "" : term.drop_front(dots + 3);
  for (StringRef part : {before, after})
    for (char c : part)
      if (!llvm::isAlpha(c))
        return n.error() << "equation term '" << term
                         << "' has a character that is not a letter",
               failure();
  int64_t named = before.size() + after.size();
  int64_t covered = rank < 0 ? ellipsis : rank - named;
  if (dots == StringRef::npos && rank >= 0 && covered != 0)
    return n.error() << "equation term '" << term << "' names " << named
                     << " dims of a rank-" << rank << " input",
           failure();
  if (covered < 0)
    return n.error() << "equation term '" << term << "' names more dims "
                     << "than its input has",
           failure();
  for (char c : before)
    labels.push_back(c);
  if (dots != StringRef::npos) {
    ellipsis = std::max(ellipsis, covered);
    for (int64_t k = 0; k < covered; ++k)
      labels.push_back(256 + int(covered - 1 - k));
  }
  for (char c : after)
    labels.push_back(c);
  return labels;
}

FailureOr<Equation> parseEquation(NodeImporter &n, std::string eq) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  StringRef s(eq);
  auto [lhs, rhs] = s.split("->");
  bool explicitOut = s.contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (static_cast<int64_t>(terms.size()) != n.numInputs())
    return n.error() << "equation has " << terms.size() << " inputs, the "
                     << "node " << n.numInputs(),
           failure();
  Equation e;
  int64_t ellipsis = 0;
  for (auto [i, t] : llvm::enumerate(terms)) {
    FailureOr<Labels> l = parseTerm(n, t, n.in(i).rank(), ellipsis);
    if (failed(l))
      return failure();
    e.inputs.push_back(*l);
  }
  if (explicitOut) {
    FailureOr<Labels> l = parseTerm(n, rhs, -1, ellipsis);
    if (failed(l))
      return failure();
    e.output = *l;
    for (size_t k = 0; k < e.output.size(); ++k)
      if (llvm::is_contained(ArrayRef<int>(e.output).take_front(k),
                             e.output[k]))
        return n.error() << "output label repeated", failure();
  } else {
    // Implicit output: the ellipsis dims, then the labels used once, sorted.
    std::map<int, int> uses;
    for (const Labels &l : e.inputs)
      for (int c : l)
        ++uses[c];
    for (auto it = uses.rbegin(); it != uses.rend(); ++it)
      if (it->first >= 256)
        e.output.push_back(it->first);
    for (auto [c, count] : uses)
      if (c < 256 && count == 1)
        e.output.push_back(c);
  }
  return e;
}

/// Operand `v` with a repeated label reduced to its diagonal: the result
/// has each label once (first occurrence order).
Value takeDiagonal(NodeImporter &n, Value v, ArrayRef<int64_t> shape,
                   ElemKind kind, Labels &labels) {
  Labels uniq;
  std::vector<int64_t> outShape;
  for (size_t d = 0; d < labels.size(); ++d)
    if (!llvm::is_contained(uniq, labels[d])) {
      uniq.push_back(labels[d]);
      outShape.push_back(shape[d]);
    }
  int64_t rank = outShape.size();
  SmallVector<GenericInput> ins;
  for (int64_t d = 0; d < rank; ++d)
    ins.push_back(loopIndex(n, d, outShape[d], rank));
  Value r =
      n.buildGeneric(
           ins, outShape, kind,
           SmallVector<IteratorType>(rank, IteratorType::parallel), Value(),
           n.getBuilder().getMultiDimIdentityMap(rank),
           [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
             SmallVector<Value> at;
             for (int c : labels) {
               int64_t d = llvm::find(uniq, c) - uniq.begin();
               at.push_back(
                   arith::IndexCastOp::create(b, l, b.getIndexType(), a[d]));
             }
             return Value(tensor::ExtractOp::create(b, l, v, at));
           })
          ->getResult(0);
  labels = uniq;
  return r;
}

LogicalResult convertEinsum(NodeImporter &n, StringRef) {
  const onnx::AttributeProto *eqAttr = n.attr("equation");
  if (!eqAttr)
    return n.error() << "has no equation";
  FailureOr<Equation> eq = parseEquation(n, eqAttr->s());
  if (failed(eq))
    return failure();
  ElemKind kind = n.in(0).kind;
  if (kind == ElemKind::Bool)
    return n.error() << "expects numeric inputs";
  // Loops: the output's labels, then the contracted ones.
  Labels loops = eq->output;
  std::map<int, int64_t> size;
  for (int64_t i = 0; i < n.numInputs(); ++i) {
    if (n.in(i).kind != kind)
      return n.error() << "inputs must have one element type";
    for (auto [d, c] : llvm::enumerate(eq->inputs[i])) {
      int64_t sz = n.in(i).shape[d];
      auto [it, fresh] = size.insert({c, sz});
      if (!fresh && it->second != sz)
        return n.error() << "a label spans dims of sizes " << it->second
                         << " and " << sz
                         << " (broadcasting in Einsum is not supported)";
      if (!llvm::is_contained(loops, c))
        loops.push_back(c);
    }
  }
  for (int c : eq->output)
    if (!size.count(c))
      return n.error() << "an output label names no input dim";
  int64_t numLoops = loops.size(), numOut = eq->output.size();
  MLIRContext *ctx = n.getBuilder().getContext();
  auto mapOf = [&](const Labels &l) {
    SmallVector<AffineExpr> e;
    for (int c : l)
      e.push_back(getAffineDimExpr(llvm::find(loops, c) - loops.begin(), ctx));
    return AffineMap::get(numLoops, 0, e, ctx);
  };
  SmallVector<GenericInput> ins;
  n.main.operands.clear();
  for (int64_t i = 0; i < n.numInputs(); ++i) {
    Labels l = eq->inputs[i];
    Value v = n.materialize(n.in(i));
    std::optional<OperandSource> src;
    if (std::set<int>(l.begin(), l.end()).size() != l.size()) {
      v = takeDiagonal(n, v, n.in(i).shape, kind, l);
    } else {
      src = OperandSource{i, {}};
      for (int64_t d = 0; d < n.in(i).rank(); ++d)
        src->dims.push_back(d);
    }
    ins.push_back({v, mapOf(l), src});
    n.main.operands.push_back(src);
  }
  std::vector<int64_t> outShape;
  for (int c : eq->output)
    outShape.push_back(size[c]);
  SmallVector<IteratorType> iters(numOut, IteratorType::parallel);
  iters.append(numLoops - numOut, IteratorType::reduction);
  Operation *op = n.buildGeneric(
      ins, outShape, kind, iters, n.zeroFilled(outShape, kind),
      mapOf(eq->output), [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
        Value p = a[0];
        for (size_t k = 1; k + 1 < a.size(); ++k)
          p = floatOrInt<arith::MulFOp, arith::MulIOp>(b, l, p, a[k]);
        return floatOrInt<arith::AddFOp, arith::AddIOp>(b, l, a.back(), p);
      });
  n.main.op = op;
  SmallVector<int64_t> ident(numOut);
  std::iota(ident.begin(), ident.end(), 0);
  n.main.resultDims = ident;
  n.setOutput(0, op->getResult(0), kind);
  return success();
}

} // namespace

void autoshard::onnx_import::registerEinsumOps(OpTable &t) {
  t["Einsum"] = convertEinsum;
}
