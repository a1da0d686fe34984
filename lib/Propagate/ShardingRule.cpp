//===- ShardingRule.cpp - Factor-based sharding rule of an op -------------===//
//
// MLIR-free: layouts from factor assignments, candidate enumeration, the
// compute estimate, and the inverse (factor assignment from user layouts).
//
//===----------------------------------------------------------------------===//

#include "autoshard/Propagate/ShardingRule.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Allocator.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string_view>

using namespace autoshard;

//===----------------------------------------------------------------------===//
// ShardingRule
//===----------------------------------------------------------------------===//

int64_t ShardingRule::addFactor(int64_t size, FactorKind kind,
                                std::string name) {
  factors.push_back(Factor{size, kind, std::move(name)});
  return static_cast<int64_t>(factors.size()) - 1;
}

std::string ShardingRule::getFactorName(int64_t f) const {
  if (f >= 0 && f < static_cast<int64_t>(factors.size()) &&
      !factors[f].name.empty())
    return factors[f].name;
  return "f" + std::to_string(f);
}

static std::string_view kindWord(FactorKind kind) {
  switch (kind) {
  case FactorKind::Parallel:
    return "parallel";
  case FactorKind::Reduction:
    return "reduction";
  case FactorKind::NeedReplication:
    return "need-replication";
  }
  return "parallel";
}

std::string ShardingRule::describeFactor(int64_t f) const {
  return std::string(kindWord(factors[f].kind)) + " factor " +
         getFactorName(f) + " (size " + std::to_string(factors[f].size) + ")";
}

int64_t ShardingRule::getDimSize(const TensorFactors &dims, int64_t d) const {
  int64_t size = 1;
  for (int64_t f : dims[d])
    size *= factors[f].size;
  return size;
}

std::string ShardingRule::verify() const {
  int64_t numFactors = static_cast<int64_t>(factors.size());
  for (int64_t f = 0; f < numFactors; ++f)
    if (factors[f].size < 1)
      return getFactorName(f) + " has non-positive size " +
             std::to_string(factors[f].size);
  // holder[f] = the last tensor (operands, then results) seen holding f: a
  // repeat within one tensor is found without a set per tensor. A tensor's
  // name is only built for the message.
  llvm::SmallVector<int64_t, 16> holder(numFactors, -1);
  auto checkTensor = [&](const TensorFactors &dims, int64_t tensor,
                         bool isResult, int64_t index) -> std::string {
    auto name = [&] {
      return (isResult ? "result #" : "operand #") + std::to_string(index);
    };
    for (const auto &dim : dims)
      for (int64_t f : dim) {
        if (f < 0 || f >= numFactors)
          return name() + " refers to factor " + std::to_string(f) +
                 " but the rule has " + std::to_string(numFactors);
        if (holder[f] == tensor)
          return name() + " holds factor " + getFactorName(f) + " twice";
        holder[f] = tensor;
      }
    return "";
  };
  for (int64_t i = 0; i < getNumOperands(); ++i)
    if (std::string e = checkTensor(operandDims[i], i, /*isResult=*/false, i);
        !e.empty())
      return e;
  for (int64_t i = 0; i < getNumResults(); ++i)
    if (std::string e = checkTensor(resultDims[i], getNumOperands() + i,
                                    /*isResult=*/true, i);
        !e.empty())
      return e;
  if (!operandIsInit.empty() &&
      static_cast<int64_t>(operandIsInit.size()) != getNumOperands())
    return "operandIsInit has " + std::to_string(operandIsInit.size()) +
           " entries for " + std::to_string(getNumOperands()) + " operands";
  if (!tiedResult.empty() &&
      static_cast<int64_t>(tiedResult.size()) != getNumOperands())
    return "tiedResult has " + std::to_string(tiedResult.size()) +
           " entries for " + std::to_string(getNumOperands()) + " operands";
  for (int64_t r : tiedResult)
    if (r < -1 || r >= getNumResults())
      return "an operand is tied to result #" + std::to_string(r) +
             " but the op has " + std::to_string(getNumResults());
  return "";
}

static std::string axisList(const DeviceMesh &mesh, AxesRef axes) {
  std::string s = "[";
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i)
      s += ", ";
    s += "'" +
         (axes[i] >= 0 && axes[i] < mesh.getNumAxes()
              ? mesh.getAxis(axes[i]).name
              : "?" + std::to_string(axes[i])) +
         "'";
  }
  return s + "]";
}

static int64_t groupSize(const DeviceMesh &mesh,
                         const std::vector<int64_t> &axes) {
  int64_t n = 1;
  for (int64_t a : axes)
    n *= mesh.getAxisSize(a);
  return n;
}

namespace {
/// Why an assignment has no layouts. Enumeration tries many assignments that
/// fail and only needs to know that they do, so the message is built from
/// this only when getLayouts is asked for it.
struct LayoutFailure {
  enum Kind {
    AxisOutOfRange,
    AxisReused,
    NeedReplication,
    NotDivisible,
    NotContiguous
  };
  Kind kind = AxisOutOfRange;
  /// The factor being split.
  int64_t factor = 0;
  /// AxisOutOfRange, AxisReused: the axis; NotContiguous: the more major
  /// factor that is not split into single elements.
  int64_t other = 0;
  /// NotContiguous: the tensor and dim.
  bool isResult = false;
  int64_t tensor = 0;
  int64_t dim = 0;
};

/// Buffers of computeLayouts, kept across calls so enumeration allocates
/// nothing per assignment.
struct LayoutScratch {
  std::vector<int64_t> owner;
  std::vector<int64_t> shards;
  std::vector<int64_t> partial;
};
} // namespace

/// Makes `layout` the replicated layout of `rank` (as
/// TensorLayout::replicated), reusing its buffers.
static void resetLayout(TensorLayout &layout, size_t rank) {
  layout.dimAxes.resize(rank);
  for (LayoutAxes &axes : layout.dimAxes)
    axes.clear();
  layout.partialAxes.clear();
  layout.partialKind = ReductionKind::Sum;
  layout.unevenSizes.clear();
}

/// getLayouts without the message; `fAxes` has one entry per factor.
static bool computeLayouts(const ShardingRule &rule, const DeviceMesh &mesh,
                           const FactorAxes &fAxes,
                           std::vector<TensorLayout> &operandLayouts,
                           std::vector<TensorLayout> &resultLayouts,
                           LayoutScratch &scratch, LayoutFailure &failure) {
  const std::vector<Factor> &factors = rule.factors;
  // Each axis at most once; need-replication factors unsplit; divisibility.
  std::vector<int64_t> &owner = scratch.owner;
  std::vector<int64_t> &shards = scratch.shards;
  owner.assign(mesh.getNumAxes(), -1);
  shards.assign(factors.size(), 1);
  for (size_t f = 0; f < factors.size(); ++f) {
    failure.factor = static_cast<int64_t>(f);
    for (int64_t a : fAxes[f]) {
      failure.other = a;
      if (a < 0 || a >= mesh.getNumAxes()) {
        failure.kind = LayoutFailure::AxisOutOfRange;
        return false;
      }
      if (owner[a] >= 0) {
        failure.kind = LayoutFailure::AxisReused;
        return false;
      }
      owner[a] = static_cast<int64_t>(f);
    }
    if (fAxes[f].empty())
      continue;
    if (factors[f].kind == FactorKind::NeedReplication) {
      failure.kind = LayoutFailure::NeedReplication;
      return false;
    }
    shards[f] = groupSize(mesh, fAxes[f]);
    if (factors[f].size % shards[f] != 0) {
      failure.kind = LayoutFailure::NotDivisible;
      return false;
    }
  }

  auto buildLayout = [&](const TensorFactors &dims, bool isResult,
                         size_t tensor, TensorLayout &layout) -> bool {
    resetLayout(layout, dims.size());
    for (size_t d = 0; d < dims.size(); ++d) {
      const std::vector<int64_t> &fs = dims[d];
      for (size_t k = 0; k < fs.size(); ++k) {
        int64_t f = fs[k];
        if (fAxes[f].empty())
          continue;
        // A minor factor's shards are contiguous in the flattened dim only
        // when every more major factor is split down to single elements.
        for (size_t j = 0; j < k; ++j) {
          int64_t major = fs[j];
          if (factors[major].size / shards[major] != 1) {
            failure.kind = LayoutFailure::NotContiguous;
            failure.factor = f;
            failure.other = major;
            failure.isResult = isResult;
            failure.tensor = static_cast<int64_t>(tensor);
            failure.dim = static_cast<int64_t>(d);
            return false;
          }
        }
        layout.dimAxes[d].insert(layout.dimAxes[d].end(), fAxes[f].begin(),
                                 fAxes[f].end());
      }
    }
    return true;
  };

  std::vector<int64_t> &partial = scratch.partial;
  partial.clear();
  for (size_t f = 0; f < factors.size(); ++f)
    if (factors[f].kind == FactorKind::Reduction)
      partial.insert(partial.end(), fAxes[f].begin(), fAxes[f].end());
  std::sort(partial.begin(), partial.end());

  resultLayouts.resize(rule.resultDims.size());
  for (size_t i = 0; i < rule.resultDims.size(); ++i) {
    if (!buildLayout(rule.resultDims[i], /*isResult=*/true, i,
                     resultLayouts[i]))
      return false;
    resultLayouts[i].partialAxes.assign(partial.begin(), partial.end());
    resultLayouts[i].partialKind = rule.reduction;
  }
  operandLayouts.resize(rule.operandDims.size());
  for (size_t i = 0; i < rule.operandDims.size(); ++i) {
    if (!buildLayout(rule.operandDims[i], /*isResult=*/false, i,
                     operandLayouts[i]))
      return false;
    int64_t tied = rule.getTiedResult(static_cast<int64_t>(i));
    if (tied >= 0) {
      operandLayouts[i].partialAxes = resultLayouts[tied].partialAxes;
      operandLayouts[i].partialKind = resultLayouts[tied].partialKind;
    }
  }
  return true;
}

bool ShardingRule::getLayouts(const DeviceMesh &mesh,
                              const std::vector<std::vector<int64_t>> &fAxes,
                              std::vector<TensorLayout> &operandLayouts,
                              std::vector<TensorLayout> &resultLayouts,
                              std::string &error) const {
  if (fAxes.size() != factors.size()) {
    error = "the assignment gives axes for " + std::to_string(fAxes.size()) +
            " factors but the rule has " + std::to_string(factors.size());
    return false;
  }
  LayoutScratch scratch;
  LayoutFailure failure;
  if (computeLayouts(*this, mesh, fAxes, operandLayouts, resultLayouts, scratch,
                     failure))
    return true;
  int64_t f = failure.factor;
  switch (failure.kind) {
  case LayoutFailure::AxisOutOfRange:
    error = "axis index " + std::to_string(failure.other) + " is not in mesh " +
            mesh.str();
    break;
  case LayoutFailure::AxisReused:
    error = "mesh axis '" + mesh.getAxis(failure.other).name +
            "' is assigned to both " +
            getFactorName(scratch.owner[failure.other]) + " and " +
            getFactorName(f);
    break;
  case LayoutFailure::NeedReplication:
    error = describeFactor(f) + " cannot be split (over " +
            axisList(mesh, fAxes[f]) + ")";
    break;
  case LayoutFailure::NotDivisible:
    error = describeFactor(f) + " is not divisible by its split count " +
            std::to_string(scratch.shards[f]) + " (over " +
            axisList(mesh, fAxes[f]) + ")";
    break;
  case LayoutFailure::NotContiguous:
    error = (failure.isResult ? "result #" : "operand #") +
            std::to_string(failure.tensor) + " dim " +
            std::to_string(failure.dim) + " splits " + getFactorName(f) +
            " but its more major factor " + getFactorName(failure.other) +
            " is not split into single "
            "elements, so the shards would not be contiguous";
    break;
  }
  return false;
}

/// getFactorName, appended: str() names every factor of every tensor, and
/// it builds the key propagation caches candidate lists by.
static void appendFactorName(std::string &s, const ShardingRule &rule,
                             int64_t f) {
  if (f >= 0 && f < static_cast<int64_t>(rule.factors.size()) &&
      !rule.factors[f].name.empty()) {
    s += rule.factors[f].name;
    return;
  }
  s += 'f';
  s += std::to_string(f);
}

static void appendTensor(std::string &s, const ShardingRule &rule,
                         const TensorFactors &dims) {
  if (dims.empty()) {
    s += "scalar";
    return;
  }
  for (const auto &dim : dims) {
    s += '[';
    for (size_t k = 0; k < dim.size(); ++k) {
      if (k)
        s += ',';
      appendFactorName(s, rule, dim[k]);
    }
    s += ']';
  }
}

// Appends to one string rather than going through an ostringstream, whose
// construction alone costs more than printing a small rule.
std::string ShardingRule::str() const {
  std::string s;
  s.reserve(64 + 16 * factors.size());
  s += "factors: ";
  if (factors.empty())
    s += "none";
  for (size_t f = 0; f < factors.size(); ++f) {
    if (f)
      s += ", ";
    appendFactorName(s, *this, static_cast<int64_t>(f));
    s += '=';
    s += std::to_string(factors[f].size);
    s += ' ';
    switch (factors[f].kind) {
    case FactorKind::Parallel:
      s += "par";
      break;
    case FactorKind::Reduction:
      s += "red(";
      s += stringifyReductionKind(reduction);
      s += ')';
      break;
    case FactorKind::NeedReplication:
      s += "rep";
      break;
    }
  }
  s += "; operands: ";
  if (operandDims.empty())
    s += "none";
  for (int64_t i = 0; i < getNumOperands(); ++i) {
    if (i)
      s += ", ";
    if (isInit(i))
      s += "init ";
    else if (getTiedResult(i) >= 0)
      s += "acc ";
    appendTensor(s, *this, operandDims[i]);
  }
  s += "; results: ";
  if (resultDims.empty())
    s += "none";
  for (int64_t i = 0; i < getNumResults(); ++i) {
    if (i)
      s += ", ";
    appendTensor(s, *this, resultDims[i]);
  }
  return s;
}

std::string ShardingRule::strFactorAxes(const DeviceMesh &mesh,
                                        const FactorAxes &fAxes) const {
  std::string s;
  for (size_t f = 0; f < fAxes.size(); ++f) {
    if (fAxes[f].empty())
      continue;
    if (!s.empty())
      s += ", ";
    s += getFactorName(f) + "->[";
    for (size_t i = 0; i < fAxes[f].size(); ++i)
      s += (i ? ", " : "") + mesh.getAxis(fAxes[f][i]).name;
    s += "]";
  }
  return s.empty() ? "none" : s;
}

//===----------------------------------------------------------------------===//
// Rule builders
//===----------------------------------------------------------------------===//

ShardingRule autoshard::makeReplicatedRule(
    const std::vector<std::vector<int64_t>> &operandShapes,
    const std::vector<std::vector<int64_t>> &resultShapes) {
  ShardingRule rule;
  rule.flopsPerPoint = 0.0;
  auto add = [&](const std::vector<int64_t> &shape) {
    TensorFactors dims(shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] > 1)
        dims[d].push_back(
            rule.addFactor(shape[d], FactorKind::NeedReplication));
    return dims;
  };
  for (const auto &s : operandShapes)
    rule.operandDims.push_back(add(s));
  for (const auto &s : resultShapes)
    rule.resultDims.push_back(add(s));
  return rule;
}

ShardingRule
autoshard::buildReshapeRule(const std::vector<int64_t> &source,
                            const std::vector<int64_t> &result,
                            const std::vector<int64_t> &extraOperandRanks) {
  // A zero-size (or unknown) dim leaves nothing to split and no factors to
  // peel (the walk below would take a remainder by zero): nothing passes.
  auto nonPositive = [](int64_t d) { return d < 1; };
  if (llvm::any_of(source, nonPositive) || llvm::any_of(result, nonPositive)) {
    std::vector<std::vector<int64_t>> operands{source};
    for (int64_t rank : extraOperandRanks)
      operands.push_back(std::vector<int64_t>(rank, 1));
    return makeReplicatedRule(operands, {result});
  }
  ShardingRule rule;
  rule.flopsPerPoint = 0.0;
  TensorFactors src(source.size()), dst(result.size());
  // Walk both shapes from the most major dim, peeling off common factors:
  // `ri`/`rj` are what is left of the current source/result dim.
  size_t i = 0, j = 0;
  int64_t ri = source.empty() ? 1 : source[0];
  int64_t rj = result.empty() ? 1 : result[0];
  bool stuck = false;
  while (i < source.size() && j < result.size()) {
    if (ri == 1) {
      if (++i < source.size())
        ri = source[i];
      continue;
    }
    if (rj == 1) {
      if (++j < result.size())
        rj = result[j];
      continue;
    }
    int64_t g = std::gcd(ri, rj);
    if (g == 1) {
      stuck = true;
      break;
    }
    // The largest shared major part: a whole dim when one divides the other,
    // else their gcd (only the major part can pass a split through).
    int64_t common = (ri % rj == 0) ? rj : (rj % ri == 0) ? ri : g;
    int64_t f = rule.addFactor(common);
    src[i].push_back(f);
    dst[j].push_back(f);
    // After a gcd the remainders are coprime: unless one is used up, the
    // next round finds no shared factor and stops.
    ri /= common;
    rj /= common;
  }
  if (stuck) {
    // Whatever is left of each dim cannot carry a split through the reshape.
    auto rest = [&](TensorFactors &dims, const std::vector<int64_t> &shape,
                    size_t at, int64_t left) {
      if (at < shape.size() && left > 1)
        dims[at].push_back(rule.addFactor(left, FactorKind::NeedReplication));
      for (size_t k = at + 1; k < shape.size(); ++k)
        if (shape[k] > 1)
          dims[k].push_back(
              rule.addFactor(shape[k], FactorKind::NeedReplication));
    };
    rest(src, source, i, ri);
    rest(dst, result, j, rj);
  }
  rule.operandDims.push_back(src);
  for (int64_t rank : extraOperandRanks)
    rule.operandDims.push_back(TensorFactors(rank));
  rule.resultDims.push_back(dst);
  return rule;
}

ShardingRule autoshard::buildElementwiseRule(
    const std::vector<std::vector<int64_t>> &operandShapes,
    const std::vector<int64_t> &resultShape) {
  ShardingRule rule;
  TensorFactors res(resultShape.size());
  for (size_t d = 0; d < resultShape.size(); ++d)
    if (resultShape[d] != 1)
      res[d].push_back(rule.addFactor(resultShape[d]));
  for (const auto &shape : operandShapes) {
    TensorFactors dims(shape.size());
    if (shape.size() == resultShape.size())
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] == resultShape[d])
          dims[d] = res[d];
    rule.operandDims.push_back(dims);
  }
  rule.resultDims.push_back(res);
  return rule;
}

//===----------------------------------------------------------------------===//
// Candidates
//===----------------------------------------------------------------------===//

int64_t Candidate::getParallelism(const DeviceMesh &mesh) const {
  int64_t n = 1;
  for (const auto &axes : factorAxes)
    n *= groupSize(mesh, axes);
  return n;
}

/// flopsPerPoint times the product of every factor's local size, or for data
/// movement the local elements of the results; `localSize(f)` is factor f's
/// size divided by its split count.
template <typename LocalSize>
static double flopsOf(const ShardingRule &rule, LocalSize localSize) {
  if (rule.flopsPerPoint > 0.0) {
    double points = 1.0;
    for (size_t f = 0; f < rule.factors.size(); ++f)
      points *= localSize(static_cast<int64_t>(f));
    return rule.flopsPerPoint * points;
  }
  double elements = 0.0;
  for (const auto &dims : rule.resultDims) {
    double local = 1.0;
    for (const auto &dim : dims)
      for (int64_t f : dim)
        local *= localSize(f);
    elements += local;
  }
  return elements;
}

double autoshard::estimateFlops(const ShardingRule &rule,
                                const DeviceMesh &mesh,
                                const FactorAxes &fAxes) {
  return flopsOf(rule, [&](int64_t f) {
    int64_t shards =
        f < static_cast<int64_t>(fAxes.size()) ? groupSize(mesh, fAxes[f]) : 1;
    return static_cast<double>(rule.factors[f].size) /
           static_cast<double>(shards);
  });
}

namespace {
/// Hashes dedup keys more cheaply than hash_combine_range: they are short,
/// and hashing is a good part of the work per assignment.
struct KeyInfo : llvm::DenseMapInfo<llvm::ArrayRef<int64_t>> {
  static unsigned getHashValue(llvm::ArrayRef<int64_t> key) {
    uint64_t h = key.size();
    for (int64_t word : key)
      h = (h ^ static_cast<uint64_t>(word)) * 0x9e3779b97f4a7c15ULL;
    return static_cast<unsigned>(h ^ h >> 32);
  }
};

/// Enumerates axis→factor maps, then the orders of several axes on one
/// factor, in a fixed order, and keeps the assignments whose layouts are new.
///
/// Most assignments that reach a leaf are kept, so the work per leaf is what
/// counts: every check that only depends on how many ways each factor is
/// split (divisibility, contiguity, the partial axes, the flops) is made once
/// per axis→factor map rather than once per order. Duplicates are found from
/// the factor axes alone (packKey), without building layouts, and only
/// looked for when the rule allows them (mayRepeat). A kept assignment is
/// only recorded (its factors' axes packed, as packKey does): candidates are
/// built once the kept assignments are sorted and cut to maxCandidates, each
/// straight into its place, so none is moved, reallocated or built in vain.
struct Enumerator {
  const ShardingRule &rule;
  const DeviceMesh &mesh;
  const EnumerateOptions &options;
  // Scratch vectors are small (factors, dims, mesh axes): kept inline so
  // that an enumeration allocates little besides its candidates.
  llvm::SmallVector<int64_t, 8> eligible;
  /// The assignment being built: axes are appended in mesh order, so every
  /// factor's list is ascending (the first order permute generates).
  FactorAxes fAxes;
  /// The factor axes of the candidate build() is making.
  FactorAxes built;
  /// shards[f] = product of the sizes of fAxes[f] (1 when unsplit).
  llvm::SmallVector<int64_t, 8> shards;
  /// Product of the sizes of every assigned axis (Candidate::getParallelism).
  int64_t parallelism = 1;
  /// Whether every mesh axis has a positive size, so that a factor its axes
  /// do not divide can be dropped as soon as the axis is assigned.
  bool prune = true;
  /// Factors holding several axes at the current leaf of assignAxis.
  llvm::SmallVector<int64_t, 4> multi;
  /// Kept assignments when keys are not packed, as candidates.
  std::vector<Candidate> out;
  struct Kept {
    /// Candidate::getParallelism.
    int64_t parallelism;
    /// When keys are packed, the partialMask and the flops.
    uint64_t partialMask;
    double flops;
  };
  /// Every kept assignment, in generation order. Inline room for as many as
  /// the default maxCandidates: most rules keep fewer, so these rarely grow.
  llvm::SmallVector<Kept, 256> kept;
  /// When keys are packed, the factorCode of every eligible factor of each
  /// kept assignment (eligible.size() codes each).
  llvm::SmallVector<uint64_t, 512> keptCodes;

  /// Whether keys are packed from the factor axes (packKey); otherwise each
  /// assignment's layouts are built and encoded (encodeKey).
  bool packed = true;
  /// Every tensor dim of the rule, operands then results: dim k holds the
  /// factors dimFactors[dimStart[k]] .. dimFactors[dimStart[k + 1] - 1].
  llvm::SmallVector<int64_t, 16> dimFactors;
  llvm::SmallVector<size_t, 16> dimStart;
  /// firstDim[t] = the first dim of tensor t (operands then results).
  llvm::SmallVector<size_t, 8> firstDim;
  /// Dims holding a factor that may be split: the only ones whose axes
  /// differ between assignments.
  llvm::SmallVector<size_t, 16> keyDims;
  /// Whether two assignments may give the same layouts. They cannot when
  /// every factor that may be split is the only such factor of some dim:
  /// that dim's axes are the factor's, so the layouts give back the
  /// assignment.
  bool mayRepeat = false;
  /// Dims holding several factors: the only ones a split can make
  /// non-contiguous.
  llvm::SmallVector<size_t, 4> compoundDims;
  /// Axes of each factor at hand, 4 bits per axis (axis + 1), and how many
  /// bits that takes.
  llvm::SmallVector<uint64_t, 8> factorCode;
  llvm::SmallVector<unsigned, 8> factorBits;
  /// Axes of the split reduction factors (bit a: axis a): every result's
  /// partial axes at the current leaf of assignAxis.
  uint64_t partialMask = 0;
  llvm::SmallVector<int64_t, 4> partial;
  /// Flops of the current leaf of assignAxis (every order of its axes has
  /// the same), once a candidate needed them.
  bool haveFlops = false;
  double flops = 0.0;

  // Layouts of the assignment at hand when keys are not packed, reused
  // across assignments.
  std::vector<TensorLayout> operandLayouts, resultLayouts;
  LayoutScratch scratch;
  LayoutFailure failure;

  /// Dedup key of the assignment at hand and the keys seen.
  llvm::SmallVector<int64_t, 16> key;
  llvm::BumpPtrAllocator keyStorage;
  llvm::DenseSet<llvm::ArrayRef<int64_t>, KeyInfo> seen;
  /// Whether axis indices tell layouts apart exactly as TensorLayout::str
  /// does; if not (names str would run together), the key is the printed
  /// text.
  bool codesMatchStr = true;

  Enumerator(const ShardingRule &rule, const DeviceMesh &mesh,
             const EnumerateOptions &options)
      : rule(rule), mesh(mesh), options(options), fAxes(rule.factors.size()),
        shards(rule.factors.size(), 1) {
    for (size_t f = 0; f < rule.factors.size(); ++f) {
      const Factor &factor = rule.factors[f];
      if (factor.kind == FactorKind::NeedReplication || factor.size < 2)
        continue;
      if (factor.kind == FactorKind::Reduction && !options.allowReductionSplits)
        continue;
      eligible.push_back(static_cast<int64_t>(f));
      // assignAxis pushes and pops axes: one buffer takes every count.
      fAxes[f].reserve(mesh.getNumAxes());
    }
    for (int64_t a = 0; a < mesh.getNumAxes(); ++a) {
      const std::string &name = mesh.getAxis(a).name;
      // str separates axes with ", " and brackets; a name holding those (or
      // none at all, or one shared by two axes) prints like something else.
      if (name.empty() || name.find_first_of(" ,[]") != std::string::npos)
        codesMatchStr = false;
      for (int64_t b = 0; b < a; ++b)
        if (mesh.getAxis(b).name == name)
          codesMatchStr = false;
      if (mesh.getAxisSize(a) < 1)
        prune = false;
    }
    // A packed dim holds at most every axis once, 4 bits each.
    packed = codesMatchStr && prune && mesh.getNumAxes() <= 15;
    if (!packed)
      return;
    factorCode.assign(rule.factors.size(), 0);
    factorBits.assign(rule.factors.size(), 0);
    llvm::SmallVector<bool, 8> isEligible(rule.factors.size()),
        isAlone(rule.factors.size());
    for (int64_t f : eligible)
      isEligible[f] = true;
    auto addDims = [&](const TensorFactors &dims) {
      firstDim.push_back(dimStart.size());
      for (const std::vector<int64_t> &fs : dims) {
        if (fs.size() > 1)
          compoundDims.push_back(dimStart.size());
        auto splittable = llvm::make_filter_range(
            fs, [&](int64_t f) { return isEligible[f]; });
        if (!splittable.empty())
          keyDims.push_back(dimStart.size());
        if (llvm::hasSingleElement(splittable))
          isAlone[*splittable.begin()] = true;
        dimStart.push_back(dimFactors.size());
        dimFactors.insert(dimFactors.end(), fs.begin(), fs.end());
      }
    };
    for (const TensorFactors &dims : rule.operandDims)
      addDims(dims);
    for (const TensorFactors &dims : rule.resultDims)
      addDims(dims);
    firstDim.push_back(dimStart.size());
    dimStart.push_back(dimFactors.size());
    mayRepeat = llvm::any_of(eligible, [&](int64_t f) { return !isAlone[f]; });
    key.resize(keyDims.size() + (rule.resultDims.empty() ? 0 : 1));
  }

  void assignAxis(int64_t a) {
    if (a == mesh.getNumAxes()) {
      emitOrders();
      return;
    }
    assignAxis(a + 1);
    int64_t axisSize = mesh.getAxisSize(a);
    for (int64_t f : eligible) {
      std::vector<int64_t> &axes = fAxes[f];
      // Maps with too many axes on a factor are skipped; the list only grows
      // further down.
      if (options.maxAxesPerFactor > 0 &&
          static_cast<int64_t>(axes.size()) >= options.maxAxesPerFactor)
        continue;
      // So is a factor its axes do not divide: more axes leave it so.
      int64_t split = shards[f] * axisSize;
      if (prune && rule.factors[f].size % split != 0)
        continue;
      int64_t oldShards = shards[f], oldParallelism = parallelism;
      axes.push_back(a);
      shards[f] = split;
      parallelism *= axisSize;
      assignAxis(a + 1);
      axes.pop_back();
      shards[f] = oldShards;
      parallelism = oldParallelism;
    }
  }

  /// computeLayouts' contiguity check: every split factor of a compound dim
  /// has the factors more major than it split into single elements. It
  /// depends on how many ways each factor is split, not on the order of its
  /// axes.
  bool isContiguous() const {
    for (size_t k : compoundDims) {
      bool coarse = false;
      for (size_t i = dimStart[k]; i < dimStart[k + 1]; ++i) {
        int64_t f = dimFactors[i];
        if (coarse && !fAxes[f].empty())
          return false;
        if (rule.factors[f].size / shards[f] != 1)
          coarse = true;
      }
    }
    return true;
  }

  void emitOrders() {
    if (packed) {
      if (!isContiguous())
        return;
      partialMask = 0;
      for (int64_t f : eligible)
        if (rule.factors[f].kind == FactorKind::Reduction)
          for (int64_t a : fAxes[f])
            partialMask |= uint64_t(1) << a;
      haveFlops = false;
    }
    multi.clear();
    for (int64_t f : eligible)
      if (fAxes[f].size() > 1)
        multi.push_back(f);
    // Every permutation of every factor's axes (ascending start: the mesh
    // order is the first one generated).
    permute(0);
  }

  void permute(size_t m) {
    if (m == multi.size()) {
      if (packed)
        considerPacked();
      else
        consider();
      return;
    }
    // next_permutation leaves the list ascending again when it is done.
    std::vector<int64_t> &axes = fAxes[multi[m]];
    do
      permute(m + 1);
    while (std::next_permutation(axes.begin(), axes.end()));
  }

  /// Records `key`; false when an earlier assignment had it.
  bool insertKey() {
    // Storing first hashes once; the few repeated keys stay unused in the
    // arena.
    int64_t *stored = keyStorage.Allocate<int64_t>(key.size());
    std::copy(key.begin(), key.end(), stored);
    return seen.insert(llvm::ArrayRef<int64_t>(stored, key.size())).second;
  }

  /// Keeps the assignment at hand if it is representable and its layouts
  /// are new: two assignments with the same layouts are the same strategy.
  void consider() {
    if (!computeLayouts(rule, mesh, fAxes, operandLayouts, resultLayouts,
                        scratch, failure))
      return;
    encodeKey();
    if (!insertKey())
      return;
    Candidate c;
    c.factorAxes = fAxes;
    // Most assignments that get this far are new: taking the buffers (and
    // building the next layouts afresh) beats copying them.
    c.operandLayouts = std::move(operandLayouts);
    c.resultLayouts = std::move(resultLayouts);
    c.flops = estimateFlops(rule, mesh, c.factorAxes);
    out.push_back(std::move(c));
    kept.push_back({parallelism, 0, 0.0});
  }

  /// consider() for a contiguous assignment when keys are packed: records
  /// it for build().
  void considerPacked() {
    encodeFactors();
    if (mayRepeat) {
      packKey();
      if (!insertKey())
        return;
    }
    for (int64_t f : eligible)
      keptCodes.push_back(factorCode[f]);
    if (!haveFlops) {
      flops = flopsOf(rule, [&](int64_t f) {
        return static_cast<double>(rule.factors[f].size) /
               static_cast<double>(shards[f]);
      });
      haveFlops = true;
    }
    kept.push_back({parallelism, partialMask, flops});
  }

  int64_t getNumKept() const { return static_cast<int64_t>(kept.size()); }

  /// The candidate of kept assignment `k`; each is taken once.
  Candidate take(int64_t k) {
    if (packed)
      return build(k);
    Candidate c = std::move(out[k]);
    if (!options.withFactorAxes)
      c.factorAxes = FactorAxes();
    return c;
  }

  /// The candidate of kept assignment `k` when keys are packed.
  Candidate build(int64_t k) {
    Candidate c;
    // The factor axes in `built` (reused: its lists keep their room), moved
    // to the candidate at the end when it carries them. Only the eligible
    // factors' lists can be non-empty.
    built.resize(rule.factors.size());
    for (int64_t f : eligible)
      built[f].clear();
    const uint64_t *codes = keptCodes.data() + k * eligible.size();
    for (size_t e = 0; e < eligible.size(); ++e) {
      // One nibble (axis + 1) per axis, the major axis in the highest: read
      // minor first, from the end of `axes`.
      int64_t axes[16];
      int64_t *first = std::end(axes);
      for (uint64_t code = codes[e]; code; code >>= 4)
        *--first = static_cast<int64_t>(code & 15) - 1;
      if (first != std::end(axes))
        built[eligible[e]].assign(first, std::end(axes));
    }
    partial.clear();
    for (uint64_t mask = kept[k].partialMask; mask; mask &= mask - 1)
      partial.push_back(llvm::countr_zero(mask));
    c.resultLayouts.reserve(rule.resultDims.size());
    for (size_t i = 0; i < rule.resultDims.size(); ++i) {
      TensorLayout &l = c.resultLayouts.emplace_back();
      fillDims(built, rule.operandDims.size() + i, l);
      if (!partial.empty())
        l.partialAxes.assign(partial.begin(), partial.end());
      l.partialKind = rule.reduction;
    }
    c.operandLayouts.reserve(rule.operandDims.size());
    for (size_t i = 0; i < rule.operandDims.size(); ++i) {
      TensorLayout &l = c.operandLayouts.emplace_back();
      fillDims(built, i, l);
      int64_t tied = rule.getTiedResult(static_cast<int64_t>(i));
      if (tied >= 0) {
        if (!partial.empty())
          l.partialAxes = c.resultLayouts[tied].partialAxes;
        l.partialKind = c.resultLayouts[tied].partialKind;
      }
    }
    c.flops = kept[k].flops;
    if (options.withFactorAxes)
      c.factorAxes = built;
    return c;
  }

  /// The dims of tensor `t`'s fresh layout for the factor axes `axesOf`, as
  /// computeLayouts builds them.
  void fillDims(const FactorAxes &axesOf, size_t t,
                TensorLayout &layout) const {
    layout.dimAxes.reserve(firstDim[t + 1] - firstDim[t]);
    for (size_t d = firstDim[t]; d < firstDim[t + 1]; ++d) {
      size_t begin = dimStart[d], end = dimStart[d + 1];
      if (end - begin == 1) {
        // Most dims are unsplit: an empty list is built without looking
        // at a range.
        const std::vector<int64_t> &fromFactor = axesOf[dimFactors[begin]];
        if (fromFactor.empty())
          layout.dimAxes.emplace_back();
        else
          layout.dimAxes.emplace_back(fromFactor.begin(), fromFactor.end());
        continue;
      }
      LayoutAxes &axes = layout.dimAxes.emplace_back();
      size_t n = 0;
      for (size_t i = begin; i < end; ++i)
        n += axesOf[dimFactors[i]].size();
      if (n == 0)
        continue;
      axes.reserve(n);
      for (size_t i = begin; i < end; ++i)
        axes.insert(axes.end(), axesOf[dimFactors[i]].begin(),
                    axesOf[dimFactors[i]].end());
    }
  }

  /// A key equal for two representable assignments exactly when their
  /// layouts are (and so, with codesMatchStr, when encodeKey's are): per
  /// dim that may be split, its axes in order, 4 bits each; then the
  /// results' partial axes (the same for every result, and tied operands
  /// copy them). Ranks, the other dims and the partial kind are the same for
  /// every assignment.
  /// Sets factorCode and factorBits.
  void encodeFactors() {
    for (int64_t f : eligible) {
      uint64_t code = 0;
      for (int64_t a : fAxes[f])
        code = code << 4 | static_cast<uint64_t>(a + 1);
      factorCode[f] = code;
      factorBits[f] = 4 * static_cast<unsigned>(fAxes[f].size());
    }
  }

  /// From encodeFactors' codes.
  void packKey() {
    for (size_t k = 0; k < keyDims.size(); ++k) {
      uint64_t word = 0;
      for (size_t i = dimStart[keyDims[k]]; i < dimStart[keyDims[k] + 1]; ++i) {
        int64_t f = dimFactors[i];
        if (factorBits[f])
          word = word << factorBits[f] | factorCode[f];
      }
      key[k] = static_cast<int64_t>(word);
    }
    if (!rule.resultDims.empty())
      key.back() = static_cast<int64_t>(partialMask);
  }

  /// A key equal for two assignments exactly when every operand's and
  /// result's TensorLayout::str is: each dim's axes, then the partial axes
  /// and their kind when there are any (str prints no uneven sizes, and no
  /// kind when nothing is partial). All partial layouts of a rule share its
  /// reduction kind, so its code need not match the printed word.
  void encodeKey() {
    key.clear();
    auto add = [&](const TensorLayout &l) {
      if (!codesMatchStr) {
        for (char ch : l.str(mesh))
          key.push_back(static_cast<unsigned char>(ch));
        key.push_back(-1);
        return;
      }
      key.push_back(l.getRank());
      for (const LayoutAxes &axes : l.dimAxes) {
        key.push_back(static_cast<int64_t>(axes.size()));
        key.insert(key.end(), axes.begin(), axes.end());
      }
      key.push_back(static_cast<int64_t>(l.partialAxes.size()));
      if (l.partialAxes.empty())
        return;
      key.push_back(static_cast<int64_t>(l.partialKind));
      key.insert(key.end(), l.partialAxes.begin(), l.partialAxes.end());
    };
    for (const TensorLayout &l : operandLayouts)
      add(l);
    for (const TensorLayout &l : resultLayouts)
      add(l);
  }
};
} // namespace

std::vector<Candidate>
autoshard::enumerateCandidates(const ShardingRule &rule, const DeviceMesh &mesh,
                               const EnumerateOptions &options) {
  Enumerator e(rule, mesh, options);
  e.assignAxis(0);

  llvm::SmallVector<int64_t, 64> order(e.getNumKept());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return e.kept[x].parallelism > e.kept[y].parallelism;
  });
  if (options.maxCandidates > 0 &&
      static_cast<int64_t>(order.size()) > options.maxCandidates) {
    // Keep the replicated candidate (the last: parallelism 1, generated
    // first among those) so every op can always fall back to it.
    order[options.maxCandidates - 1] = order.back();
    order.resize(options.maxCandidates);
  }
  std::vector<Candidate> candidates;
  candidates.reserve(order.size());
  for (int64_t k : order)
    candidates.push_back(e.take(k));
  return candidates;
}

//===----------------------------------------------------------------------===//
// Factor assignment from user layouts
//===----------------------------------------------------------------------===//

bool autoshard::inferFactorAxes(const ShardingRule &rule,
                                const DeviceMesh &mesh,
                                const std::vector<const TensorLayout *> &ops,
                                const std::vector<const TensorLayout *> &res,
                                Candidate &out, std::string &error) {
  size_t numFactors = rule.factors.size();
  FactorAxes fAxes(numFactors);
  std::vector<std::string> setBy(numFactors);

  // Operands first (in order), then results: the first tensor holding a
  // factor decides its axes.
  struct Given {
    const TensorLayout *layout;
    const TensorFactors *dims;
    std::string name;
    bool mayBePartial;
    bool isResult;
    int64_t index;
  };
  std::vector<Given> given;
  for (int64_t i = 0; i < rule.getNumOperands(); ++i)
    if (i < static_cast<int64_t>(ops.size()) && ops[i])
      given.push_back({ops[i], &rule.operandDims[i],
                       "operand #" + std::to_string(i),
                       rule.getTiedResult(i) >= 0, false, i});
  for (int64_t i = 0; i < rule.getNumResults(); ++i)
    if (i < static_cast<int64_t>(res.size()) && res[i])
      given.push_back({res[i], &rule.resultDims[i],
                       "result #" + std::to_string(i), true, true, i});

  for (const Given &g : given) {
    const TensorLayout &l = *g.layout;
    const TensorFactors &dims = *g.dims;
    if (std::string e = l.validate(mesh); !e.empty()) {
      error = g.name + ": " + e;
      return false;
    }
    if (l.getRank() != static_cast<int64_t>(dims.size())) {
      error = g.name + " has a layout of rank " + std::to_string(l.getRank()) +
              " but the op's rule gives it rank " + std::to_string(dims.size());
      return false;
    }
    if (l.isPartial() && !g.mayBePartial) {
      error = g.name + " is partial over " + axisList(mesh, l.partialAxes) +
              " but the op reads complete values";
      return false;
    }
    for (int64_t d = 0; d < l.getRank(); ++d) {
      if (l.hasUnevenDim(d)) {
        error = g.name + " dim " + std::to_string(d) +
                " has uneven shard sizes, which the op's rule cannot split";
        return false;
      }
      const LayoutAxes &axes = l.dimAxes[d];
      const std::vector<int64_t> &fs = dims[d];
      if (fs.empty()) {
        if (!axes.empty()) {
          error = g.name + " splits dim " + std::to_string(d) + " over " +
                  axisList(mesh, axes) +
                  " but the op cannot split that dim (it holds no factor)";
          return false;
        }
        continue;
      }
      // Deal the dim's axes out to its factors, major first: a factor takes
      // axes until its size is used up, so the next factor's axes start on
      // a whole-factor boundary.
      size_t pos = 0;
      for (size_t k = 0; k < fs.size(); ++k) {
        int64_t f = fs[k];
        size_t start = pos;
        if (k + 1 == fs.size()) {
          pos = axes.size();
        } else {
          int64_t prod = 1;
          while (pos < axes.size() && prod < rule.factors[f].size)
            prod *= mesh.getAxisSize(axes[pos++]);
          if (pos < axes.size() && prod != rule.factors[f].size) {
            error = g.name + " splits dim " + std::to_string(d) + " over " +
                    axisList(mesh, axes) +
                    ", which does not fall on whole "
                    "factors of the dim (" +
                    rule.describeFactor(f) + " is its major part)";
            return false;
          }
        }
        std::vector<int64_t> mine(axes.begin() + start, axes.begin() + pos);
        if (!mine.empty() &&
            rule.factors[f].kind == FactorKind::NeedReplication) {
          error = g.name + " splits dim " + std::to_string(d) + " over " +
                  axisList(mesh, mine) + " but that dim is the op's " +
                  rule.describeFactor(f) + ", which must stay whole";
          return false;
        }
        if (!setBy[f].empty() && fAxes[f] != mine) {
          std::string first =
              fAxes[f].empty() ? "does not"
                               : "splits it over " + axisList(mesh, fAxes[f]);
          if (mine.empty())
            error = g.name + " does not split " + rule.describeFactor(f) +
                    " but " + setBy[f] + " splits it over " +
                    axisList(mesh, fAxes[f]);
          else
            error = g.name + " splits " + rule.describeFactor(f) + " over " +
                    axisList(mesh, mine) + " but " + setBy[f] + " " + first;
          return false;
        }
        if (setBy[f].empty()) {
          fAxes[f] = mine;
          setBy[f] = g.name;
        }
      }
    }
  }

  Candidate c;
  if (!rule.getLayouts(mesh, fAxes, c.operandLayouts, c.resultLayouts, error))
    return false;
  // Partial axes (of results and tied operands) and anything else not
  // decided by the dims must match what the assignment implies.
  for (const Given &g : given) {
    const TensorLayout *implied =
        g.isResult ? &c.resultLayouts[g.index] : &c.operandLayouts[g.index];
    if (*implied != *g.layout) {
      error = g.name + " has layout " + g.layout->str(mesh) +
              " but the split factors (" + rule.strFactorAxes(mesh, fAxes) +
              ") give it " + implied->str(mesh);
      return false;
    }
  }
  c.factorAxes = std::move(fAxes);
  c.flops = estimateFlops(rule, mesh, c.factorAxes);
  out = std::move(c);
  return true;
}
