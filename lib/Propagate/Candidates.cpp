//===- Candidates.cpp - Phase 2: each node's candidate strategies ---------===//
//
// From the op's sharding rule (enumerateCandidates: mesh axes assigned to
// the rule's factors) or its user constraint: an annotation or a reshard is
// its own single candidate, a `dist.strategy` is matched against the rule
// (with a located diagnostic when inconsistent). Lists are shared by every
// node with the same rule (or layouts): the layers of a model enumerate once.
//
//===----------------------------------------------------------------------===//

#include "FunctionPropagation.h"

#include "autoshard/Propagate/RuleModels.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace autoshard;
using namespace autoshard::dist;
using namespace autoshard::propagate;

/// Candidates by rule: rules that print alike and do the same work per
/// point share one list. The printed rule leaves the work out, and the
/// candidates carry their compute estimate: two generics that differ only
/// in their bodies would otherwise both get the first one's.
CandidateList FunctionPropagation::candidatesOf(const ShardingRule &rule) {
  std::string key = rule.str();
  key += " flops/point ";
  key += llvm::utohexstr(llvm::bit_cast<uint64_t>(rule.flopsPerPoint));
  auto [it, inserted] = candCache.try_emplace(std::move(key));
  if (inserted) {
    EnumerateOptions options;
    options.withFactorAxes = false;
    it->second = makeList(enumerateCandidates(rule, dmesh, options));
  }
  return it->second;
}

CandidateList FunctionPropagation::argumentCandidates(Type type) {
  CandidateList &list = argCands[type];
  if (!list)
    list = candidatesOf(buildElementwiseRule({}, getShape(type)));
  return list;
}

FailureOr<CandidateList>
FunctionPropagation::opCandidates(Operation &op, OpClass &cls, bool layoutFree,
                                  bool &userFixed) {
  if (auto annotate = dyn_cast<AnnotateOp>(op)) {
    if (annotate.getLayout().getMesh() != meshAttr)
      return annotate.emitError("dist-propagate: annotation on mesh ")
             << annotate.getLayout().getMesh() << " but propagation runs on "
             << meshAttr;
    CandidateList &list = annotateCands[annotate.getLayout()];
    if (!list) {
      Candidate c;
      c.operandLayouts = {annotate.getLayout().toTensorLayout()};
      c.resultLayouts = c.operandLayouts;
      list = makeList({c});
    }
    userFixed = true;
    return list;
  }
  if (auto reshard = dyn_cast<ReshardOp>(op)) {
    if (reshard.getSource().getMesh() != meshAttr)
      return reshard.emitError("dist-propagate: reshard on mesh ")
             << reshard.getSource().getMesh() << " but propagation runs on "
             << meshAttr;
    Candidate c;
    c.operandLayouts = {reshard.getSource().toTensorLayout()};
    c.resultLayouts = {reshard.getTarget().toTensorLayout()};
    userFixed = true;
    return makeList({c});
  }
  if (!cls.hasRule) {
    cls.rule = getRuleOrReplicated(&op, cls.noRuleReason);
    cls.cands = candidatesOf(cls.rule);
    cls.strategy =
        op.getAttrOfType<StrategyAttr>(DistDialect::kStrategyAttrName);
    cls.hasRule = true;
  }
  if (!cls.noRuleReason.empty())
    op.emitRemark() << "no sharding rule, running replicated: "
                    << cls.noRuleReason;
  StrategyAttr strategy = cls.strategy;
  if (!strategy)
    return cls.cands;
  if (strategy.getMesh() != meshAttr)
    return op.emitError("dist-propagate: strategy on mesh ")
           << strategy.getMesh() << " but propagation runs on " << meshAttr;
  Candidate user;
  if (layoutFree) {
    // A layout-free op takes whatever layout its consumer wants, a pending
    // partial sum included (the pass writes such strategies itself): its
    // strategy is taken as it is. Its work is what the pass counted when it
    // wrote the strategy: where its one reader passed the layout on, the
    // least of the rule's candidates (the solver's choice for a node
    // without edges), else that of the candidate with these layouts.
    for (LayoutAttr l : strategy.getOperands())
      user.operandLayouts.push_back(l.toTensorLayout());
    for (LayoutAttr l : strategy.getResults())
      user.resultLayouts.push_back(l.toTensorLayout());
    std::optional<double> same, least;
    for (const Candidate &c : *cls.cands) {
      least = std::min(least.value_or(c.flops), c.flops);
      if (!same && llvm::equal(c.resultLayouts, user.resultLayouts,
                               [](const TensorLayout &a,
                                  const TensorLayout &b) {
                                 return sameLayout(a, b);
                               }))
        same = c.flops;
    }
    bool passedOn = llvm::all_of(op.getResults(),
                                 [](Value r) { return r.hasOneUse(); });
    user.flops = passedOn ? least.value_or(0.0)
                          : same.value_or(least.value_or(0.0));
    userFixed = true;
    return makeList({user});
  }
  if (failed(matchUserStrategy(&op, strategy, cls.rule, dmesh, user)))
    return failure();
  // Keep only the user's candidate (it may be beyond the enumeration bound).
  if (user.flops == 0.0)
    user.flops = estimateFlops(cls.rule, dmesh, user.factorAxes);
  userFixed = true;
  return makeList({user});
}

CandidateList FunctionPropagation::resultCandidates(unsigned pn, unsigned slot,
                                                    Type type) {
  std::map<std::string, TensorLayout> distinct;
  for (const Candidate &c : nodes[pn].cands()) {
    const auto &ls = c.resultLayouts;
    if (slot < ls.size()) {
      unsigned id = pricing.dropPartialId(pricing.intern(ls[slot]));
      distinct.emplace(pricing.key(id), pricing.layouts[id]);
    }
  }
  if (distinct.empty())
    distinct.emplace("", TensorLayout::replicated(getShape(type).size()));
  std::vector<Candidate> own;
  for (auto &[key, l] : distinct) {
    Candidate c;
    c.operandLayouts = {l};
    own.push_back(c);
  }
  return makeList(std::move(own));
}

/// The finest layout from which both `a` and `b` are local slices: each
/// dim split over the axes its two lists begin with (a dim's shards are
/// nested, major axis first, so a prefix of its axes is a coarser split of
/// the same dim), nothing partial. None for uneven layouts.
static std::optional<TensorLayout> commonCoarsening(const TensorLayout &a,
                                                    const TensorLayout &b) {
  auto uneven = [](const TensorLayout &l) {
    return llvm::any_of(l.unevenSizes,
                        [](const auto &sizes) { return !sizes.empty(); });
  };
  if (a.getRank() != b.getRank() || uneven(a) || uneven(b))
    return std::nullopt;
  TensorLayout meet = TensorLayout::replicated(a.getRank());
  for (int64_t d = 0; d < a.getRank(); ++d)
    for (auto [x, y] : llvm::zip(a.dimAxes[d], b.dimAxes[d])) {
      if (x != y)
        break;
      meet.dimAxes[d].push_back(x);
    }
  return meet;
}

/// Every layout the producer may give the value or a consumer may want, and
/// the common intermediates: the common coarsening of every two of them
/// (replicated among them), from which each of the two is a local slice —
/// one reshard to it, shared, then free slices, can beat a reshard per
/// reader. In layoutKey order. Values whose producer and consumers have the
/// same lists (the layers of a model) share one candidate list.
CandidateList
FunctionPropagation::fanoutCandidates(const SmallVector<unsigned, 8> &lists) {
  CandidateList &list = fanoutLists[lists];
  if (list)
    return list;
  std::vector<unsigned> ids;
  std::vector<char> seen(pricing.layouts.size(), 0);
  for (unsigned l : lists)
    for (unsigned id : pricing.lists[l])
      if (!seen[id]) {
        seen[id] = 1;
        ids.push_back(id);
      }
  std::vector<unsigned> all = ids;
  for (unsigned i = 0; i < ids.size(); ++i)
    for (unsigned j = i; j < ids.size(); ++j) {
      // (Interning the meet may grow `pricing.layouts`: it is taken first.)
      std::optional<TensorLayout> meet =
          commonCoarsening(pricing.layouts[ids[i]], pricing.layouts[ids[j]]);
      if (!meet)
        continue;
      unsigned id = pricing.intern(*meet);
      if (id >= seen.size())
        seen.resize(id + 1, 0);
      if (!seen[id]) {
        seen[id] = 1;
        all.push_back(id);
      }
    }
  std::map<StringRef, unsigned> distinct;
  for (unsigned id : all)
    distinct.emplace(pricing.key(id), id);
  std::vector<Candidate> cands;
  cands.reserve(distinct.size());
  for (auto &[key, id] : distinct) {
    Candidate c;
    c.operandLayouts = {pricing.layouts[id]};
    c.resultLayouts = c.operandLayouts;
    cands.push_back(std::move(c));
  }
  list = makeList(std::move(cands));
  return list;
}

unsigned FunctionPropagation::idsOf(unsigned node, unsigned slot,
                                    bool result) {
  const std::vector<Candidate> &cands = nodes[node].cands();
  auto [it, inserted] = slotLists.try_emplace(
      {static_cast<const void *>(&cands), slot * 2 + result}, 0);
  if (!inserted)
    return it->second;
  std::vector<unsigned> ids;
  ids.reserve(cands.size());
  for (const Candidate &c : cands)
    ids.push_back(pricing.intern(result ? c.resultLayouts[slot]
                                        : c.operandLayouts[slot]));
  // Interning does not touch `slotLists`: `it` is valid.
  it->second = pricing.internList(std::move(ids));
  return it->second;
}
