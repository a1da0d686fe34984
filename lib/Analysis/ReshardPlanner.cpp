//===- ReshardPlanner.cpp - Cheapest collective sequence ------------------===//
//
// Dijkstra over layouts. A state says, for every mesh axis, whether it is
// unused, partial, or splits dim d at position k, plus the shard sizes of the
// dims that are uneven in the source or the target. Edges are the legal steps
// of Collective.h, weighted by the cost model's time (integer picoseconds so
// that equal costs tie exactly); ties go to fewer communicating steps, then
// fewer local steps, then the first path found in a fixed edge order.
//
// The state is a fixed-size POD so that expanding an edge allocates nothing:
// the propagation pass plans thousands of reshards.
//
// ReshardPlanner::costUs prices without steps, and with one search per source
// instead of one per pair: for even layouts the graph depends on the target
// only through its partial axes (MakePartial edges) and the permute edge
// straight to it, so one search, resumed target by target, settles every
// state in the order the single-target search would, and costTo() adds the
// straight permute per target. Times are summed in microseconds along the
// path in plan()'s order, so the double is exactly plan()->timeUs. The
// searches of one shape, element size and target partial signature also
// share that graph (SharedGraph): a state's out-edges are generated once and
// replayed, in the same order, by every search that reaches it.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Analysis/ReshardPlanner.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <tuple>
#include <unordered_map>

using namespace autoshard;

namespace {

constexpr int kMaxAxes = 8;
constexpr int kMaxUneven = 8;
constexpr int8_t kUnused = -1;
constexpr int8_t kPartial = -2;

struct State {
  /// Per mesh axis: kUnused, kPartial or the tensor dim it splits.
  std::array<int8_t, kMaxAxes> dim;
  /// Per mesh axis that splits a dim: its position there (0 = major).
  std::array<int8_t, kMaxAxes> pos;
  /// Per uneven slot: interned shard sizes (0 = even split).
  std::array<uint16_t, kMaxUneven> uneven;
  /// 1 + ReductionKind of the partial axes; 0 when there are none.
  uint8_t kind;

  State() {
    dim.fill(kUnused);
    pos.fill(0);
    uneven.fill(0);
    kind = 0;
  }
  bool operator==(const State &o) const {
    // Word compares: this runs for every probe of the node table.
    uint64_t a[4], b[4];
    std::memcpy(&a[0], dim.data(), 8);
    std::memcpy(&a[1], pos.data(), 8);
    std::memcpy(&a[2], uneven.data(), 16);
    std::memcpy(&b[0], o.dim.data(), 8);
    std::memcpy(&b[1], o.pos.data(), 8);
    std::memcpy(&b[2], o.uneven.data(), 16);
    return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3])) ==
               0 &&
           kind == o.kind;
  }
};

struct StateHash {
  size_t operator()(const State &s) const {
    // The fields as 64-bit words, multiply-xorshift mixed: hashing is on the
    // search's hot path.
    static_assert(kMaxAxes == 8 && kMaxUneven == 8, "words below");
    uint64_t w[4];
    std::memcpy(&w[0], s.dim.data(), 8);
    std::memcpy(&w[1], s.pos.data(), 8);
    std::memcpy(&w[2], s.uneven.data(), 16);
    uint64_t h = s.kind;
    for (uint64_t x : w) {
      h = (h ^ x) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 32;
    }
    return static_cast<size_t>(h);
  }
};

/// A short ordered list of mesh axes.
struct AxisList {
  int8_t n = 0;
  std::array<int8_t, kMaxAxes> a{};
  void push(int8_t x) { a[n++] = x; }
};

struct Edge {
  CollectiveKind kind;
  AxisList axes;
  int8_t dim = -1, srcDim = -1;
};

/// Cost of a path: time first, then communicating steps, then local steps.
struct Cost {
  int64_t timePs = 0;
  int32_t commSteps = 0;
  int32_t localSteps = 0;
  bool operator<(const Cost &o) const {
    return std::tie(timePs, commSteps, localSteps) <
           std::tie(o.timePs, o.commSteps, o.localSteps);
  }
};

/// An edge's time: the picoseconds Dijkstra orders by, and the microseconds
/// CostModel::getStepTimeUs gives for the same step, which plans sum.
struct Time {
  int64_t ps = 0;
  double us = 0.0;
};

/// A search node. Its state and the edge into it live beside it (private
/// searches) or in the shared graph (multi-target ones, which keep many
/// small searches alive and never walk edges back).
struct Node {
  Cost cost;
  /// The sum of the path's step times in the order plan() adds them, so
  /// that costUs() returns plan()'s double exactly.
  double timeUs = 0.0;
  int parent = -1;
  /// Position in the settle order (-1 until settled).
  int order = -1;
  /// Multi-target mode: the node's state in the shared graph, and the next
  /// settled node of the same permute signature (-1 = none yet). Kept here
  /// rather than in per-search side tables, which cost an allocation each.
  int gid = -1;
  int nextSameSig = -1;
  /// Position in the queue (-1 when not in it).
  int heapPos = -1;
  bool settled() const { return order >= 0; }
};

/// The id of `s` in `states`, appended if new (`inserted`), through `table`:
/// an open-addressing index of `states` (-1 = empty slot; a power-of-two
/// size, kept at most half full).
int internState(std::vector<State> &states, std::vector<int32_t> &table,
                const State &s, bool &inserted) {
  size_t mask = table.size() - 1;
  size_t h = StateHash()(s) & mask;
  for (; table[h] >= 0; h = (h + 1) & mask)
    if (states[table[h]] == s) {
      inserted = false;
      return table[h];
    }
  inserted = true;
  int id = static_cast<int>(states.size());
  table[h] = id;
  states.push_back(s);
  if (states.size() * 2 > table.size()) {
    std::vector<int32_t> bigger(table.size() * 2, -1);
    size_t bmask = bigger.size() - 1;
    for (size_t i = 0; i < states.size(); ++i) {
      size_t b = StateHash()(states[i]) & bmask;
      while (bigger[b] >= 0)
        b = (b + 1) & bmask;
      bigger[b] = static_cast<int32_t>(i);
    }
    table.swap(bigger);
  }
  return id;
}

/// The link of each group of mesh axes (by mask), looked up in the cost model
/// on first use. Multi-target searches share their graph's: the links depend
/// only on the model, and a search per source would otherwise allocate and
/// fill its own.
struct LinkTable {
  std::vector<LinkSpec> link;
  std::vector<bool> known;
  void init(int numAxes) {
    if (!link.empty())
      return;
    link.resize(size_t(1) << numAxes);
    known.assign(size_t(1) << numAxes, false);
  }
};

/// The graph of the multi-target searches of one shape, element size and
/// target partial signature: their expand() reads nothing else, so each
/// state's out-edges are generated once, in expand()'s order, and every
/// search replays them (the pass starts one search per source layout).
struct SharedGraph {
  /// No Edge: costUs() never builds steps, so only the times are kept.
  struct Succ {
    int32_t to;
    bool comm;
    Time time;
  };
  std::vector<State> states;
  /// Per state: its out-edges, succs[first, first + count); first < 0 until
  /// generated.
  std::vector<int32_t> first, count;
  std::vector<Succ> succs;
  /// Per state: the id of its permute signature (Search::signatureOf), ~0u
  /// until computed.
  std::vector<uint32_t> sigs;
  /// Per signature id: its key (kind, partial axes, shards per dim: 2 + rank
  /// words, as the graph has one shape) at sigKeys[id * (2 + rank)], and the
  /// bytes of a shard (equal for all its states).
  std::vector<int64_t> sigKeys;
  std::vector<double> sigBytes;
  /// Open-addressing index of the signature ids by key (-1 = empty slot):
  /// a new state looks its key up, and an ordered map of vectors cost more
  /// than the rest of the search on small graphs.
  std::vector<int32_t> sigTable = std::vector<int32_t>(64, -1);
  /// Open-addressing index of `states` (-1 = empty slot).
  std::vector<int32_t> table = std::vector<int32_t>(64, -1);
  LinkTable links;

  /// The id of signature `key` (`len` words), added if new (`inserted`; the
  /// caller then appends its sigBytes).
  uint32_t internSig(const int64_t *key, size_t len, bool &inserted) {
    auto hash = [&](const int64_t *k) {
      uint64_t h = len;
      for (size_t i = 0; i < len; ++i) {
        h = (h ^ static_cast<uint64_t>(k[i])) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 32;
      }
      return static_cast<size_t>(h);
    };
    size_t mask = sigTable.size() - 1;
    size_t h = hash(key) & mask;
    for (; sigTable[h] >= 0; h = (h + 1) & mask)
      if (std::equal(key, key + len, &sigKeys[sigTable[h] * len])) {
        inserted = false;
        return sigTable[h];
      }
    inserted = true;
    size_t count = sigKeys.size() / len;
    uint32_t id = static_cast<uint32_t>(count++);
    sigTable[h] = static_cast<int32_t>(id);
    sigKeys.insert(sigKeys.end(), key, key + len);
    if (count * 2 > sigTable.size()) {
      std::vector<int32_t> bigger(sigTable.size() * 2, -1);
      size_t bmask = bigger.size() - 1;
      for (size_t i = 0; i < count; ++i) {
        size_t b = hash(&sigKeys[i * len]) & bmask;
        while (bigger[b] >= 0)
          b = (b + 1) & bmask;
        bigger[b] = static_cast<int32_t>(i);
      }
      sigTable.swap(bigger);
    }
    return id;
  }

  int intern(const State &s) {
    bool inserted;
    int id = internState(states, table, s, inserted);
    if (inserted) {
      first.push_back(-1);
      count.push_back(0);
      sigs.push_back(~0u);
    }
    return id;
  }
};

class Search {
public:
  Search(const CostModel &model, const std::vector<int64_t> &shape,
         int64_t elemBytes, const PlannerOptions &options)
      : model(model), mesh(model.getMesh()), shape(shape), elemBytes(elemBytes),
        options(options), numAxes(static_cast<int>(mesh.getNumAxes())),
        rank(static_cast<int>(shape.size())) {
    // Copied out of the mesh: the sizes are read for every edge expanded.
    axisSize.fill(1);
    for (int a = 0; a < numAxes && a < kMaxAxes; ++a)
      axisSize[a] = mesh.getAxisSize(a);
  }

  std::optional<ReshardPlan> run(const TensorLayout &from,
                                 const TensorLayout &to, std::string &error);

  /// Multi-target mode, for layouts without uneven splits: searches from
  /// `from` towards every target whose partial axes and reduction are
  /// those of `to` (the only part of the target the graph depends on), on
  /// `graph`, shared by the searches of the same shape, element size and
  /// target partial signature. The layouts come as evenState()s, which the
  /// caller keeps per layout.
  void startMulti(const State &from, const State &to, SharedGraph &graph);
  /// The time of the path the single-target search for `target` would
  /// pick; std::nullopt when there is none. `targetId` is targetStateId().
  std::optional<double> costTo(const State &target, int targetId);
  /// `target`'s id in the shared graph, added if new (an id the searches
  /// never reach changes nothing). The same for every search of the graph,
  /// so callers may keep it.
  int targetStateId(const State &target) { return shared->intern(target); }
  /// `layout` as a state (even layouts only; no checks).
  static State evenState(const TensorLayout &layout);

private:
  /// run()'s setup (startMulti() has its own).
  bool prepare(const TensorLayout &from, const TensorLayout &to, State &start,
               std::string &error);
  /// Settles nodes until shared state `target` is settled; its index, or -1
  /// when the queue runs dry first.
  int settleUntil(int target);
  /// Multi-target mode: the id of shared state `gid`'s permute signature
  /// (states of one id are exactly those samePermuteSignature() pairs).
  /// Inline: it is computed once per shared state, and looked up for every
  /// node settled and every target priced.
  uint32_t signatureOf(int gid) {
    uint32_t sig = shared->sigs[gid];
    return sig != ~0u ? sig : computeSignature(gid);
  }
  uint32_t computeSignature(int gid);
  // Conversions.
  bool toState(const TensorLayout &layout, State &out, std::string &error);
  TensorLayout toLayout(const State &s) const;

  // Shard sizes.
  int getUneven(const State &s, int d) const {
    int slot = slotOfDim[d];
    return slot < 0 ? 0 : s.uneven[slot];
  }
  int64_t numShards(const State &s, int d) const {
    int64_t n = 1;
    for (int a = 0; a < numAxes; ++a)
      if (s.dim[a] == d)
        n *= axisSize[a];
    return n;
  }
  int64_t shardSize(const State &s, int d, int64_t n, int64_t shard) const {
    int id = getUneven(s, d);
    return id ? sizes[id][shard] : shape[d] / n;
  }
  double localBytes(const State &s) const;
  uint16_t intern(std::vector<int64_t> v, int64_t extent);
  uint16_t coarsen(uint16_t id, int64_t factor, int64_t extent);
  /// Resulting uneven ids of dim `d` once its axis list (in `next`) has
  /// grown from `nOld` to `nNew` shards. At most two: the even split and the
  /// target's sizes.
  int sliceVariants(const State &cur, const State &next, int d, int64_t nOld,
                    int64_t nNew, std::array<uint16_t, 2> &ids);

  // Axis lists of the state being expanded.
  void loadLists(const State &s);
  bool isPrefixOfTarget(const State &next, int d) const;
  static void append(State &s, int8_t axis, int d, int8_t &count) {
    s.dim[axis] = static_cast<int8_t>(d);
    s.pos[axis] = count++;
  }

  // Costs.
  Time transferTime(uint32_t mask, double bytes);
  /// Index of the node of `s`, created (with no parent) if new.
  int lookup(const State &s, bool &inserted);
  int64_t groupSize(uint32_t mask) const {
    int64_t n = 1;
    for (int a = 0; a < numAxes; ++a)
      if (mask & (1u << a))
        n *= axisSize[a];
    return n;
  }
  static uint32_t maskOf(const AxisList &l) {
    uint32_t m = 0;
    for (int i = 0; i < l.n; ++i)
      m |= 1u << l.a[i];
    return m;
  }

  // Permute.
  struct GroupOrder {
    AxisList a, b; // the group's axes in `before` and in `after`
  };
  void groupOrders(const State &before, const State &after,
                   std::vector<GroupOrder> &out) const;
  bool samePermuteSignature(const State &a, const State &b) const;
  /// The device pairs (source, destination) of the permute from `before`
  /// to `after` (same permute signature), and the mask of the mesh axes
  /// some pair's coordinates differ on.
  uint32_t permutePairs(const State &before, const State &after,
                        std::vector<std::pair<int64_t, int64_t>> &pairs) const;
  /// permutePairs()'s mask alone, without walking the devices. Searches
  /// price permutes with it and plans with permutePairs()' mask, so
  /// AnalysisTests' costUs-equals-plan check compares the two.
  uint32_t permuteMask(const State &before, const State &after) const;

  /// Relaxes every out-edge of `nodeIdx`: generate()s them, or in
  /// multi-target mode replays them from the shared graph (generating them
  /// there first if no search has).
  void expand(int nodeIdx);
  void generate(int nodeIdx);
  /// What generate()'s phases share about the node being expanded.
  struct Expanding {
    int node;
    State s;
    AxisList partial, unused; // its partial and unused axes
    double bytes;             // its local bytes
  };
  // generate()'s phases: the out-edges of one collective kind each.
  void generateAllReduce(const Expanding &x);
  void generateReduceScatter(const Expanding &x);
  void generateAllGather(const Expanding &x);
  void generateAllSlice(const Expanding &x);
  void generateAllToAll(const Expanding &x);
  void generateMakePartial(const Expanding &x);
  void generatePermutes(const Expanding &x);
  /// `s` with `seq` appended to dim `d`'s axis list (minor-most).
  State appended(const State &s, const AxisList &seq, int d);
  /// Relaxes `next`, `s` with dim `d` split `factor` times further, once
  /// for each uneven-size variant the split can take.
  void relaxSplit(int nodeIdx, const State &s, State next, int d,
                  int64_t factor, const Edge &e, Time time, bool comm);
  /// The share of the bytes each device sends in a group over `mask`.
  double frac(uint32_t mask) const {
    double n = static_cast<double>(groupSize(mask));
    return (n - 1) / n;
  }
  bool isComm(uint32_t mask) const { return groupSize(mask) > 1; }
  Time commTime(uint32_t mask, double bytes) {
    return isComm(mask) ? transferTime(mask, bytes) : Time();
  }
  /// Pops the cheapest node, marks it settled and returns it; -1 when the
  /// queue is empty.
  int settleNext() {
    if (queue.empty())
      return -1;
    int idx = queue[0].node();
    QItem last = queue.pop_back_val();
    if (!queue.empty()) {
      queue[0] = last;
      siftDown(0);
    }
    Node &n = nodes[idx];
    n.heapPos = -1;
    n.order = numSettled++;
    return idx;
  }
  /// An edge of generate(): recorded into the shared graph in multi-target
  /// mode, else relaxed at once.
  void relax(int from, const State &next, const Edge &edge, Time time,
             bool comm);
  /// Relaxes node `to` (`inserted`: just created) through an edge of `time`
  /// from node `from`, whose cost and time are `base` and `baseUs` (read
  /// once per expanded node); whether `to` improved.
  bool update(int from, const Cost &base, double baseUs, int to, bool inserted,
              Time time, bool comm) {
    Cost c = base;
    c.timePs += time.ps;
    (comm ? c.commSteps : c.localSteps) += 1;
    Node &n = nodes[to];
    if (!inserted && (n.settled() || !(c < n.cost)))
      return false;
    n.cost = c;
    n.timeUs = baseUs + time.us;
    n.parent = from;
    enqueue(to);
    return true;
  }
  /// The node of shared state `gid`, created (with no parent) if new.
  int localNode(int gid, bool &inserted);
  bool isMulti() const { return shared != nullptr; }

  const CostModel &model;
  const DeviceMesh &mesh;
  const std::vector<int64_t> &shape;
  int64_t elemBytes;
  const PlannerOptions &options;
  int numAxes, rank;
  std::array<int64_t, kMaxAxes> axisSize;

  // Small vectors here and below: the pass starts hundreds of searches, and
  // on small graphs their allocations cost as much as the search itself.
  llvm::SmallVector<int, 8> slotOfDim;
  /// Interned shard sizes by id; id 0 (even) is added by the first intern(),
  /// so that searches of even layouts allocate nothing for it.
  std::vector<std::vector<int64_t>> sizes;
  std::map<std::vector<int64_t>, uint16_t> sizeIds;
  std::map<std::pair<uint16_t, int64_t>, uint16_t> coarsened;
  TensorLayout targetLayout;
  /// The target. In multi-target mode only its partial axes and kind are
  /// set, and no edge goes specially to it.
  State goal;
  /// How many nodes have settled.
  int numSettled = 0;
  /// Multi-target mode: per signature id, the first and the last settled
  /// node of that signature (chained in settle order by Node::nextSameSig):
  /// costTo() only looks at those of the target's signature.
  llvm::SmallVector<std::pair<int, int>, 16> sigChains;
  std::vector<std::vector<int64_t>> coords;
  std::vector<int64_t> strides;

  /// Inline room for a small graph's nodes (the pass keeps hundreds of
  /// searches of a few dozen nodes).
  llvm::SmallVector<Node, 32> nodes;
  /// Private searches: each node's state and the edge into it.
  std::vector<State> nodeStates;
  std::vector<Edge> nodeEdges;
  /// Open-addressing index of `nodes` by state (-1 = empty slot); unused in
  /// multi-target mode, which indexes by shared state instead.
  std::vector<int32_t> table;
  /// Multi-target mode: the shared graph, and the node of each shared state
  /// (-1 = none yet).
  SharedGraph *shared = nullptr;
  llvm::SmallVector<int, 32> nodeOf;
  /// The links by mask of axes: the shared graph's in multi-target mode,
  /// else ownLinks.
  LinkTable *links = nullptr;
  LinkTable ownLinks;
  /// A queue entry: (time, communicating steps, local steps, node index),
  /// ordered lexicographically, with the last three packed into one word so
  /// that the heap compares two integers. Step counts fit in 16 bits: an
  /// entry's path is a settled, cheapest path plus one edge, and a cheapest
  /// path takes a few steps per mesh axis (kMaxAxes = 8), as detours only
  /// add time or steps.
  struct QItem {
    int64_t timePs;
    uint64_t rest;
    QItem(const Cost &c, int idx)
        : timePs(c.timePs),
          rest((uint64_t(uint16_t(c.commSteps)) << 48) |
               (uint64_t(uint16_t(c.localSteps)) << 32) | uint32_t(idx)) {}
    bool operator>(const QItem &o) const {
      return timePs != o.timePs ? timePs > o.timePs : rest > o.rest;
    }
    int node() const { return static_cast<int>(static_cast<uint32_t>(rest)); }
  };
  /// A binary min-heap with one entry per queued node (its position in
  /// Node::heapPos, so that an improved cost moves the entry up rather than
  /// adding one: popping stale entries was most of a search), with inline
  /// room for a small graph's queue. Entries are distinct and totally
  /// ordered, so the pop order does not depend on the heap's layout.
  llvm::SmallVector<QItem, 16> queue;
  /// Queues node `idx` at its cost, or moves its entry up to it (costs only
  /// improve while a node is queued).
  void enqueue(int idx) {
    QItem item(nodes[idx].cost, idx);
    int pos = nodes[idx].heapPos;
    if (pos < 0) {
      queue.push_back(item);
      pos = static_cast<int>(queue.size()) - 1;
    } else {
      queue[pos] = item;
    }
    siftUp(pos);
  }
  void placeAt(size_t i, const QItem &item) {
    queue[i] = item;
    nodes[item.node()].heapPos = static_cast<int>(i);
  }
  void siftUp(size_t i) {
    QItem item = queue[i];
    while (i > 0) {
      size_t parent = (i - 1) / 2;
      if (!(queue[parent] > item))
        break;
      placeAt(i, queue[parent]);
      i = parent;
    }
    placeAt(i, item);
  }
  void siftDown(size_t i) {
    QItem item = queue[i];
    const size_t size = queue.size();
    for (size_t child; (child = 2 * i + 1) < size; i = child) {
      if (child + 1 < size && queue[child] > queue[child + 1])
        ++child;
      if (!(item > queue[child]))
        break;
      placeAt(i, queue[child]);
    }
    placeAt(i, item);
  }

  /// Every ordered non-empty selection of distinct axes of `from`, each
  /// followed by its extensions.
  static void orderedSubsets(const AxisList &from,
                             llvm::SmallVectorImpl<AxisList> &out) {
    out.clear();
    AxisList cur;
    extendSubsets(from, out, cur, 0);
  }
  static void extendSubsets(const AxisList &from,
                            llvm::SmallVectorImpl<AxisList> &out, AxisList &cur,
                            uint32_t used) {
    for (int i = 0; i < from.n; ++i) {
      if (used & (1u << i))
        continue;
      cur.push(from.a[i]);
      out.push_back(cur);
      extendSubsets(from, out, cur, used | (1u << i));
      --cur.n;
    }
  }

  // Scratch for expand() and permutePairs().
  mutable std::vector<GroupOrder> orderScratch;
  llvm::SmallVector<AxisList, 8> lists;
};

uint16_t Search::intern(std::vector<int64_t> v, int64_t extent) {
  int64_t n = static_cast<int64_t>(v.size());
  if (n <= 1)
    return 0;
  if (extent % n == 0 && std::all_of(v.begin(), v.end(), [&](int64_t x) {
        return x == extent / n;
      }))
    return 0;
  auto it = sizeIds.find(v);
  if (it != sizeIds.end())
    return it->second;
  if (sizes.empty())
    sizes.emplace_back(); // id 0: even
  uint16_t id = static_cast<uint16_t>(sizes.size());
  sizes.push_back(v);
  sizeIds.emplace(std::move(v), id);
  return id;
}

uint16_t Search::coarsen(uint16_t id, int64_t factor, int64_t extent) {
  if (id == 0)
    return 0;
  auto key = std::make_pair(id, factor);
  auto it = coarsened.find(key);
  if (it != coarsened.end())
    return it->second;
  const std::vector<int64_t> &old = sizes[id];
  std::vector<int64_t> v(old.size() / factor, 0);
  for (size_t i = 0; i < old.size(); ++i)
    v[i / factor] += old[i];
  uint16_t res = intern(std::move(v), extent);
  coarsened.emplace(key, res);
  return res;
}

bool Search::isPrefixOfTarget(const State &next, int d) const {
  const LayoutAxes &t = targetLayout.dimAxes[d];
  for (int a = 0; a < numAxes; ++a) {
    if (next.dim[a] != d)
      continue;
    int p = next.pos[a];
    if (p >= static_cast<int>(t.size()) || t[p] != a)
      return false;
  }
  return true;
}

int Search::sliceVariants(const State &cur, const State &next, int d,
                          int64_t nOld, int64_t nNew,
                          std::array<uint16_t, 2> &ids) {
  int count = 0;
  int curId = getUneven(cur, d);
  if (curId == 0 && shape[d] % nNew == 0)
    ids[count++] = 0;
  int slot = slotOfDim[d];
  if (slot < 0 || !targetLayout.hasUnevenDim(d) || !isPrefixOfTarget(next, d))
    return count;
  // The target's sizes coarsened to nNew shards must refine the current ones.
  const std::vector<int64_t> &t = targetLayout.unevenSizes[d];
  int64_t factor = static_cast<int64_t>(t.size()) / nNew;
  std::vector<int64_t> v(nNew, 0);
  for (size_t i = 0; i < t.size(); ++i)
    v[i / factor] += t[i];
  int64_t m = nNew / nOld;
  for (int64_t j = 0; j < nOld; ++j) {
    int64_t sum = 0;
    for (int64_t k = 0; k < m; ++k)
      sum += v[j * m + k];
    if (sum != shardSize(cur, d, nOld, j))
      return count;
  }
  uint16_t id = intern(std::move(v), shape[d]);
  if (count == 0 || ids[0] != id)
    ids[count++] = id;
  return count;
}

double Search::localBytes(const State &s) const {
  double bytes = static_cast<double>(elemBytes);
  for (int d = 0; d < rank; ++d) {
    int id = getUneven(s, d);
    if (id) {
      bytes *= static_cast<double>(
          *std::max_element(sizes[id].begin(), sizes[id].end()));
    } else {
      bytes *= static_cast<double>(shape[d] / numShards(s, d));
    }
  }
  return bytes;
}

Time Search::transferTime(uint32_t mask, double bytes) {
  if (!links->known[mask]) {
    std::vector<int64_t> axes;
    for (int a = 0; a < numAxes; ++a)
      if (mask & (1u << a))
        axes.push_back(a);
    links->link[mask] = model.getGroupLink(axes);
    links->known[mask] = true;
  }
  // The expression of CostModel::getTransferTimeUs, so totals agree.
  const LinkSpec &link = links->link[mask];
  double us = link.latencyUs + bytes / (link.bandwidthGBps * 1e3);
  return {static_cast<int64_t>(std::llround(us * 1e6)), us};
}

int Search::lookup(const State &s, bool &inserted) {
  int idx = internState(nodeStates, table, s, inserted);
  if (inserted) {
    nodes.emplace_back();
    nodeEdges.emplace_back();
  }
  return idx;
}

bool Search::toState(const TensorLayout &layout, State &out,
                     std::string &error) {
  State s = evenState(layout);
  for (int d = 0; d < rank; ++d) {
    if (!layout.hasUnevenDim(d))
      continue;
    uint16_t id = intern(layout.unevenSizes[d], shape[d]);
    if (id && slotOfDim[d] < 0) {
      error = "internal error: no uneven slot for dim " + std::to_string(d);
      return false;
    }
    if (slotOfDim[d] >= 0)
      s.uneven[slotOfDim[d]] = id;
  }
  out = s;
  return true;
}

TensorLayout Search::toLayout(const State &s) const {
  TensorLayout l = TensorLayout::replicated(rank);
  for (int d = 0; d < rank; ++d) {
    LayoutAxes &axes = l.dimAxes[d];
    for (int a = 0; a < numAxes; ++a)
      if (s.dim[a] == d) {
        if (static_cast<int>(axes.size()) <= s.pos[a])
          axes.resize(s.pos[a] + 1, -1);
        axes[s.pos[a]] = a;
      }
  }
  for (int a = 0; a < numAxes; ++a)
    if (s.dim[a] == kPartial)
      l.partialAxes.push_back(a);
  if (s.kind)
    l.partialKind = static_cast<ReductionKind>(s.kind - 1);
  bool anyUneven = false;
  for (int d = 0; d < rank; ++d)
    anyUneven |= getUneven(s, d) != 0;
  if (anyUneven) {
    l.unevenSizes.resize(rank);
    for (int d = 0; d < rank; ++d)
      if (int id = getUneven(s, d))
        l.unevenSizes[d] = sizes[id];
  }
  return l;
}

void Search::loadLists(const State &s) {
  for (int d = 0; d < rank; ++d)
    lists[d].n = 0;
  for (int a = 0; a < numAxes; ++a)
    if (s.dim[a] >= 0) {
      AxisList &l = lists[s.dim[a]];
      l.n = std::max<int8_t>(l.n, s.pos[a] + 1);
      l.a[s.pos[a]] = static_cast<int8_t>(a);
    }
}

bool Search::samePermuteSignature(const State &a, const State &b) const {
  if (a.kind != b.kind || a.uneven != b.uneven)
    return false;
  for (int x = 0; x < numAxes; ++x)
    if ((a.dim[x] == kPartial) != (b.dim[x] == kPartial))
      return false;
  for (int d = 0; d < rank; ++d)
    if (numShards(a, d) != numShards(b, d))
      return false;
  return true;
}

void Search::groupOrders(const State &before, const State &after,
                         std::vector<GroupOrder> &out) const {
  out.clear();
  // Groups: tensor dims, then the replicated axes (group `rank`), ordered by
  // position on a dim and in mesh order when replicated.
  for (int g = 0; g <= rank; ++g) {
    int8_t code = g < rank ? static_cast<int8_t>(g) : kUnused;
    GroupOrder o;
    for (int a = 0; a < numAxes; ++a) {
      if (before.dim[a] == code)
        o.a.a[code == kUnused ? o.a.n : before.pos[a]] = static_cast<int8_t>(a),
                                        ++o.a.n;
      if (after.dim[a] == code)
        o.b.a[code == kUnused ? o.b.n : after.pos[a]] = static_cast<int8_t>(a),
                                        ++o.b.n;
    }
    // Identical lists map every device's coordinates to themselves.
    if (o.a.n == o.b.n &&
        std::equal(o.a.a.begin(), o.a.a.begin() + o.a.n, o.b.a.begin()))
      continue;
    out.push_back(o);
  }
}

uint32_t Search::permuteMask(const State &before, const State &after) const {
  // The axes some device's coordinate changes on in permutePairs(). Each
  // group (a dim, or the replicated axes in mesh order) has the same size in
  // both states (same permute signature), and p's index in it is decomposed
  // over before's axis list: an axis's coordinate is the index's digit of
  // stride "product of the sizes after it in the list". An axis of size > 1
  // keeps every coordinate exactly when it stays in its group with the same
  // stride; otherwise some index moves it (stride s in before, not in after:
  // the index s has digit 1 in one and a different digit in the other).
  auto suffix = [&](const State &s, int x) {
    int64_t n = 1;
    for (int y = 0; y < numAxes; ++y)
      if (s.dim[y] == s.dim[x] &&
          (s.dim[x] == kUnused ? y > x : s.pos[y] > s.pos[x]))
        n *= axisSize[y];
    return n;
  };
  uint32_t mask = 0;
  for (int x = 0; x < numAxes; ++x) {
    if (axisSize[x] == 1 || before.dim[x] == kPartial)
      continue;
    if (after.dim[x] != before.dim[x] || suffix(before, x) != suffix(after, x))
      mask |= 1u << x;
  }
  return mask;
}

uint32_t
Search::permutePairs(const State &before, const State &after,
                     std::vector<std::pair<int64_t, int64_t>> &pairs) const {
  // Device p takes the shard of the device q that holds, in `before`, the
  // block p holds in `after`, with the same partial coordinates and the same
  // replica index (row-major over the replicated axes in mesh order): for
  // each group, p's index over after's axes is decomposed over before's.
  std::vector<GroupOrder> &orders = orderScratch;
  groupOrders(before, after, orders);
  uint32_t mask = 0;
  std::array<int64_t, kMaxAxes> qc{};
  int64_t numDevices = static_cast<int64_t>(coords.size());
  for (int64_t p = 0; p < numDevices; ++p) {
    const std::vector<int64_t> &c = coords[p];
    for (int a = 0; a < numAxes; ++a)
      qc[a] = c[a];
    for (const GroupOrder &o : orders) {
      int64_t idx = 0;
      for (int i = 0; i < o.b.n; ++i)
        idx = idx * axisSize[o.b.a[i]] + c[o.b.a[i]];
      for (int i = o.a.n - 1; i >= 0; --i) {
        int64_t size = axisSize[o.a.a[i]];
        qc[o.a.a[i]] = idx % size;
        idx /= size;
      }
    }
    int64_t q = 0;
    for (int a = 0; a < numAxes; ++a)
      q += qc[a] * strides[a];
    if (q == p)
      continue;
    for (int a = 0; a < numAxes; ++a)
      if (qc[a] != c[a])
        mask |= 1u << a;
    pairs.emplace_back(q, p);
  }
  return mask;
}

void Search::relax(int from, const State &next, const Edge &edge, Time time,
                   bool comm) {
  if (isMulti()) {
    shared->succs.push_back({shared->intern(next), comm, time});
    return;
  }
  bool inserted;
  int to = lookup(next, inserted);
  if (update(from, nodes[from].cost, nodes[from].timeUs, to, inserted, time,
             comm))
    nodeEdges[to] = edge;
}

int Search::localNode(int gid, bool &inserted) {
  if (static_cast<size_t>(gid) >= nodeOf.size())
    nodeOf.resize(shared->states.size(), -1);
  int &idx = nodeOf[gid];
  inserted = idx < 0;
  if (inserted) {
    idx = static_cast<int>(nodes.size());
    nodes.emplace_back().gid = gid;
  }
  return idx;
}

void Search::expand(int nodeIdx) {
  if (!isMulti()) {
    generate(nodeIdx);
    return;
  }
  int gid = nodes[nodeIdx].gid;
  if (shared->first[gid] < 0) {
    int32_t begin = static_cast<int32_t>(shared->succs.size());
    generate(nodeIdx);
    shared->first[gid] = begin;
    shared->count[gid] = static_cast<int32_t>(shared->succs.size()) - begin;
  }
  // In generation order: the same relaxations as a private search's.
  const Cost base = nodes[nodeIdx].cost;
  const double baseUs = nodes[nodeIdx].timeUs;
  // Room for every successor's node up front, so that the loop below works
  // on raw pointers (this loop is most of a small graph's search).
  const SharedGraph::Succ *succ = shared->succs.data() + shared->first[gid];
  const SharedGraph::Succ *end = succ + shared->count[gid];
  if (nodeOf.size() < shared->states.size())
    nodeOf.resize(shared->states.size(), -1);
  nodes.reserve(nodes.size() + (end - succ));
  int *nodeOfData = nodeOf.data();
  for (; succ != end; ++succ) {
    int &to = nodeOfData[succ->to];
    bool inserted = to < 0;
    if (inserted) {
      to = static_cast<int>(nodes.size());
      nodes.emplace_back().gid = succ->to;
    }
    update(nodeIdx, base, baseUs, to, inserted, succ->time, succ->comm);
  }
}

void Search::generate(int nodeIdx) {
  Expanding x;
  x.node = nodeIdx;
  x.s = isMulti() ? shared->states[nodes[nodeIdx].gid] : nodeStates[nodeIdx];
  loadLists(x.s);
  for (int a = 0; a < numAxes; ++a) {
    if (x.s.dim[a] == kPartial)
      x.partial.push(static_cast<int8_t>(a));
    else if (x.s.dim[a] == kUnused)
      x.unused.push(static_cast<int8_t>(a));
  }
  x.bytes = localBytes(x.s);
  // One phase a collective kind, in this order: the order of the edges
  // breaks ties between paths of equal cost.
  generateAllReduce(x);
  generateReduceScatter(x);
  generateAllGather(x);
  generateAllSlice(x);
  if (options.enableAllToAll)
    generateAllToAll(x);
  generateMakePartial(x);
  generatePermutes(x);
}

State Search::appended(const State &s, const AxisList &seq, int d) {
  State next = s;
  int8_t count = lists[d].n;
  for (int i = 0; i < seq.n; ++i)
    append(next, seq.a[i], d, count);
  return next;
}

void Search::relaxSplit(int nodeIdx, const State &s, State next, int d,
                        int64_t factor, const Edge &e, Time time, bool comm) {
  int64_t nOld = numShards(s, d), nNew = nOld * factor;
  std::array<uint16_t, 2> ids;
  int nv = sliceVariants(s, next, d, nOld, nNew, ids);
  for (int v = 0; v < nv; ++v) {
    if (slotOfDim[d] >= 0)
      next.uneven[slotOfDim[d]] = ids[v];
    relax(nodeIdx, next, e, time, comm);
  }
}

void Search::generateAllReduce(const Expanding &x) {
  // Any non-empty subset of the partial axes.
  const AxisList &partial = x.partial;
  for (uint32_t sub = 1; sub < (1u << partial.n); ++sub) {
    State next = x.s;
    Edge e{CollectiveKind::AllReduce, {}, -1, -1};
    for (int i = 0; i < partial.n; ++i)
      if (sub & (1u << i)) {
        next.dim[partial.a[i]] = kUnused;
        e.axes.push(partial.a[i]);
      }
    bool anyLeft = std::any_of(next.dim.begin(), next.dim.begin() + numAxes,
                               [](int8_t v) { return v == kPartial; });
    if (!anyLeft)
      next.kind = 0;
    uint32_t m = maskOf(e.axes);
    relax(x.node, next, e, commTime(m, 2 * frac(m) * x.bytes), isComm(m));
  }
}

void Search::generateReduceScatter(const Expanding &x) {
  // Any ordered non-empty subset of the partial axes onto any dim.
  if (!x.partial.n)
    return;
  // Ordered subsets of up to 4 axes (64) fit without allocating.
  llvm::SmallVector<AxisList, 64> seqs;
  orderedSubsets(x.partial, seqs);
  for (const AxisList &seq : seqs) {
    uint32_t m = maskOf(seq);
    Time t = commTime(m, frac(m) * x.bytes);
    for (int d = 0; d < rank; ++d) {
      State next = appended(x.s, seq, d);
      if (x.partial.n == seq.n)
        next.kind = 0;
      Edge e{CollectiveKind::ReduceScatter, seq, static_cast<int8_t>(d), -1};
      relaxSplit(x.node, x.s, next, d, groupSize(m), e, t, isComm(m));
    }
  }
}

void Search::generateAllGather(const Expanding &x) {
  // A minor-most suffix of a dim's axes.
  for (int d = 0; d < rank; ++d) {
    const AxisList &l = lists[d];
    for (int j = 1; j <= l.n; ++j) {
      State next = x.s;
      Edge e{CollectiveKind::AllGather, {}, static_cast<int8_t>(d), -1};
      for (int i = l.n - j; i < l.n; ++i) {
        next.dim[l.a[i]] = kUnused;
        next.pos[l.a[i]] = 0;
        e.axes.push(l.a[i]);
      }
      uint32_t m = maskOf(e.axes);
      if (slotOfDim[d] >= 0)
        next.uneven[slotOfDim[d]] =
            coarsen(x.s.uneven[slotOfDim[d]], groupSize(m), shape[d]);
      relax(x.node, next, e, commTime(m, frac(m) * localBytes(next)),
            isComm(m));
    }
  }
}

void Search::generateAllSlice(const Expanding &x) {
  // Any ordered non-empty subset of the unused axes onto a dim.
  if (!x.unused.n)
    return;
  llvm::SmallVector<AxisList, 64> seqs;
  orderedSubsets(x.unused, seqs);
  for (const AxisList &seq : seqs) {
    int64_t m = groupSize(maskOf(seq));
    for (int d = 0; d < rank; ++d) {
      Edge e{CollectiveKind::AllSlice, seq, static_cast<int8_t>(d), -1};
      relaxSplit(x.node, x.s, appended(x.s, seq, d), d, m, e, Time(), false);
    }
  }
}

void Search::generateAllToAll(const Expanding &x) {
  // A minor-most suffix of one dim's axes onto another dim.
  for (int src = 0; src < rank; ++src) {
    const AxisList &l = lists[src];
    for (int j = 1; j <= l.n; ++j) {
      AxisList moved;
      for (int i = l.n - j; i < l.n; ++i)
        moved.push(l.a[i]);
      uint32_t m = maskOf(moved);
      Time t = commTime(m, frac(m) * x.bytes);
      for (int d = 0; d < rank; ++d) {
        if (d == src)
          continue;
        State next = appended(x.s, moved, d);
        if (slotOfDim[src] >= 0)
          next.uneven[slotOfDim[src]] =
              coarsen(x.s.uneven[slotOfDim[src]], groupSize(m), shape[src]);
        Edge e{CollectiveKind::AllToAll, moved, static_cast<int8_t>(d),
               static_cast<int8_t>(src)};
        relaxSplit(x.node, x.s, next, d, groupSize(m), e, t, isComm(m));
      }
    }
  }
}

void Search::generateMakePartial(const Expanding &x) {
  // Unused axes that the target holds partial, with the target's reduction
  // (nothing else can be useful).
  const State &s = x.s;
  if (!goal.kind || (s.kind != 0 && s.kind != goal.kind))
    return;
  AxisList cand;
  for (int i = 0; i < x.unused.n; ++i)
    if (goal.dim[x.unused.a[i]] == kPartial)
      cand.push(x.unused.a[i]);
  for (uint32_t sub = 1; sub < (1u << cand.n); ++sub) {
    State next = s;
    next.kind = goal.kind;
    Edge e{CollectiveKind::MakePartial, {}, -1, -1};
    for (int i = 0; i < cand.n; ++i)
      if (sub & (1u << i)) {
        next.dim[cand.a[i]] = kPartial;
        e.axes.push(cand.a[i]);
      }
    relax(x.node, next, e, Time(), false);
  }
}

void Search::generatePermutes(const Expanding &x) {
  // Straight to the goal when it holds the same shards, and swaps of two
  // equal-size axes (axis swaps such as [[x],[y]] -> [[y],[x]]).
  // Multi-target mode leaves out the edge straight to the goal: costTo()
  // adds it per target. It only enters the goal, so it changes no other
  // node's path.
  const State &s = x.s;
  auto permuteTo = [&](const State &next) {
    uint32_t m = permuteMask(s, next);
    Edge e{CollectiveKind::Permute, {}, -1, -1};
    relax(x.node, next, e, m ? transferTime(m, x.bytes) : Time(), m != 0);
  };
  if (!isMulti() && !(s == goal) && samePermuteSignature(s, goal))
    permuteTo(goal);
  for (int a = 0; a < numAxes; ++a) {
    for (int b = a + 1; b < numAxes; ++b) {
      if (axisSize[a] != axisSize[b] || s.dim[a] == kPartial ||
          s.dim[b] == kPartial || (s.dim[a] == kUnused && s.dim[b] == kUnused))
        continue;
      State next = s;
      std::swap(next.dim[a], next.dim[b]);
      std::swap(next.pos[a], next.pos[b]);
      if (isMulti() || !(next == goal))
        permuteTo(next);
    }
  }
}

bool Search::prepare(const TensorLayout &from, const TensorLayout &to,
                     State &start, std::string &error) {
  slotOfDim.assign(rank, -1);
  int numSlots = 0;
  for (int d = 0; d < rank; ++d) {
    if (!from.hasUnevenDim(d) && !to.hasUnevenDim(d))
      continue;
    if (numSlots == kMaxUneven) {
      error = "cannot plan reshard: more than " + std::to_string(kMaxUneven) +
              " dims with uneven splits";
      return false;
    }
    slotOfDim[d] = numSlots++;
  }
  targetLayout = to;
  if (!toState(from, start, error) || !toState(to, goal, error))
    return false;

  links = &ownLinks;
  links->init(numAxes);
  lists.assign(rank, AxisList());

  nodes.reserve(256);
  nodeStates.reserve(256);
  nodeEdges.reserve(256);
  queue.reserve(256);
  table.assign(512, -1);
  bool inserted;
  lookup(start, inserted);
  enqueue(0);
  return true;
}

std::optional<ReshardPlan> Search::run(const TensorLayout &from,
                                       const TensorLayout &to,
                                       std::string &error) {
  State start;
  if (!prepare(from, to, start, error))
    return std::nullopt;
  // For the device pairs of permute steps.
  int64_t numDevices = mesh.getNumDevices();
  coords.resize(numDevices);
  for (int64_t p = 0; p < numDevices; ++p)
    coords[p] = mesh.getCoordinate(p);
  strides.assign(numAxes, 1);
  for (int a = numAxes - 2; a >= 0; --a)
    strides[a] = strides[a + 1] * axisSize[a + 1];

  int goalIdx = -1;
  for (int idx; (idx = settleNext()) >= 0;) {
    if (nodeStates[idx] == goal) {
      goalIdx = idx;
      break;
    }
    expand(idx);
  }
  if (goalIdx < 0) {
    error = "no sequence of collectives turns " + from.str(mesh) + " into " +
            to.str(mesh);
    return std::nullopt;
  }

  // Walk back and build the steps.
  std::vector<int> path;
  for (int i = goalIdx; i > 0; i = nodes[i].parent)
    path.push_back(i);
  std::reverse(path.begin(), path.end());
  std::vector<CollectiveStep> steps;
  for (int i : path) {
    const Node &n = nodes[i];
    const State &prev = nodeStates[n.parent];
    const State &cur = nodeStates[i];
    const Edge &edge = nodeEdges[i];
    CollectiveStep step;
    step.kind = edge.kind;
    for (int k = 0; k < edge.axes.n; ++k)
      step.axes.push_back(edge.axes.a[k]);
    step.dim = edge.dim;
    step.srcDim = edge.srcDim;
    if (prev.kind)
      step.reduction = static_cast<ReductionKind>(prev.kind - 1);
    if (step.kind == CollectiveKind::MakePartial)
      step.reduction = static_cast<ReductionKind>(cur.kind - 1);
    step.before = toLayout(prev);
    step.after = toLayout(cur);
    if (step.kind == CollectiveKind::Permute) {
      uint32_t m = permutePairs(prev, cur, step.pairs);
      for (int a = 0; a < numAxes; ++a)
        if (m & (1u << a))
          step.axes.push_back(a);
    }
    // Merge consecutive local steps that compose into one.
    if (!steps.empty()) {
      CollectiveStep &last = steps.back();
      bool mergeSlice = step.kind == CollectiveKind::AllSlice &&
                        last.kind == CollectiveKind::AllSlice &&
                        last.dim == step.dim;
      bool mergePartial = step.kind == CollectiveKind::MakePartial &&
                          last.kind == CollectiveKind::MakePartial;
      if (mergeSlice || mergePartial) {
        last.axes.insert(last.axes.end(), step.axes.begin(), step.axes.end());
        last.after = step.after;
        continue;
      }
    }
    steps.push_back(std::move(step));
  }
  ReshardPlan plan;
  if (!steps.empty()) {
    steps.front().before = from;
    steps.back().after = to;
  }
  for (const CollectiveStep &step : steps) {
    plan.timeUs += model.getStepTimeUs(step, shape, elemBytes);
    plan.bytesPerDevice += model.getStepBytes(step, shape, elemBytes);
  }
  plan.steps = std::move(steps);
  return plan;
}

State Search::evenState(const TensorLayout &layout) {
  State s;
  for (size_t d = 0; d < layout.dimAxes.size(); ++d)
    for (size_t i = 0; i < layout.dimAxes[d].size(); ++i) {
      int64_t a = layout.dimAxes[d][i];
      s.dim[a] = static_cast<int8_t>(d);
      s.pos[a] = static_cast<int8_t>(i);
    }
  for (int64_t a : layout.partialAxes)
    s.dim[a] = kPartial;
  if (layout.isPartial())
    s.kind = static_cast<uint8_t>(1 + static_cast<int>(layout.partialKind));
  return s;
}

void Search::startMulti(const State &from, const State &to,
                        SharedGraph &graph) {
  // prepare() for valid even layouts (no uneven slots, so their states are
  // evenState()s), without converting the layouts again.
  shared = &graph;
  slotOfDim.assign(rank, -1);
  // Keep only what MakePartial edges read.
  goal = to;
  for (int a = 0; a < numAxes; ++a)
    if (goal.dim[a] != kPartial) {
      goal.dim[a] = kUnused;
      goal.pos[a] = 0;
    }
  links = &shared->links;
  links->init(numAxes);
  lists.assign(rank, AxisList());
  bool inserted;
  localNode(shared->intern(from), inserted);
  enqueue(0);
}

uint32_t Search::computeSignature(int gid) {
  const State &s = shared->states[gid];
  // Even states only (multi-target mode): samePermuteSignature's fields.
  llvm::SmallVector<int64_t, 16> key;
  uint32_t partial = 0;
  for (int a = 0; a < numAxes; ++a)
    if (s.dim[a] == kPartial)
      partial |= 1u << a;
  key.push_back(s.kind);
  key.push_back(partial);
  for (int d = 0; d < rank; ++d)
    key.push_back(numShards(s, d));
  bool inserted;
  uint32_t id = shared->internSig(key.data(), key.size(), inserted);
  if (inserted)
    shared->sigBytes.push_back(localBytes(s));
  shared->sigs[gid] = id;
  return id;
}

int Search::settleUntil(int target) {
  int found = static_cast<size_t>(target) < nodeOf.size() ? nodeOf[target] : -1;
  if (found >= 0 && nodes[found].settled())
    return found;
  // The loop of run(), resumed where the last target left it, so nodes
  // settle in the same order and with the same parents as in one search
  // run to exhaustion.
  for (int idx; (idx = settleNext()) >= 0;) {
    uint32_t sig = signatureOf(nodes[idx].gid);
    if (sig >= sigChains.size())
      sigChains.resize(std::max<size_t>(sig + 1, shared->sigBytes.size()),
                       {-1, -1});
    std::pair<int, int> &chain = sigChains[sig];
    if (chain.first < 0)
      chain.first = idx;
    else
      nodes[chain.second].nextSameSig = idx;
    chain.second = idx;
    expand(idx);
    if (nodes[idx].gid == target)
      return idx;
  }
  return -1;
}

std::optional<double> Search::costTo(const State &target, int targetId) {
  // The single-target search for `target` differs from this one only by the
  // permute edges straight to the target from every other state with the
  // same permute signature (and by leaving out swaps onto the target, which
  // such an edge from the same state replaces at the same cost). As those
  // edges only enter the target, every node cheaper than the target settles
  // in the same order with the same path in both searches, and the target's
  // path there is the first, in settle order then edge order, of the
  // cheapest ways in: this search's own path (its first way in) or a
  // permute from a settled state. From one state, this search's way in
  // comes first unless it is a swap, which the permute matches exactly.
  int g = settleUntil(targetId);
  bool have = g >= 0;
  Cost best;
  double bestUs = 0.0;
  int bestOrder = -1;
  if (have) {
    best = nodes[g].cost;
    bestUs = nodes[g].timeUs;
    bestOrder = nodes[g].parent < 0 ? -1 : nodes[nodes[g].parent].order;
  }
  // In settle order, so costs only grow; every cheaper state has settled.
  // Only states of the target's permute signature can permute to it, and
  // the others never change `best`, so visiting just those stops where the
  // full scan would have found nothing more.
  uint32_t sig = signatureOf(targetId);
  if (sig >= sigChains.size())
    return have ? std::optional<double>(bestUs) : std::nullopt;
  // They all hold shards of one size.
  double bytes = shared->sigBytes[sig];
  for (int idx = sigChains[sig].first; idx >= 0; idx = nodes[idx].nextSameSig) {
    const Node &n = nodes[idx];
    if (have && !(n.cost < best))
      break;
    if (n.gid == targetId)
      continue;
    uint32_t m = permuteMask(shared->states[n.gid], target);
    Time t = m ? transferTime(m, bytes) : Time();
    Cost c = n.cost;
    c.timePs += t.ps;
    (m ? c.commSteps : c.localSteps) += 1;
    if (!have || c < best || (!(best < c) && n.order < bestOrder)) {
      have = true;
      best = c;
      bestUs = n.timeUs + t.us;
      bestOrder = n.order;
    }
  }
  if (!have)
    return std::nullopt;
  return bestUs;
}

} // namespace

std::optional<ReshardPlan> autoshard::planReshard(
    const CostModel &model, const std::vector<int64_t> &globalShape,
    int64_t elemBytes, const TensorLayout &from, const TensorLayout &to,
    const PlannerOptions &options, std::string &error) {
  const DeviceMesh &mesh = model.getMesh();
  if (mesh.getNumAxes() > kMaxAxes) {
    error = "cannot plan reshard: meshes of more than " +
            std::to_string(kMaxAxes) + " axes are not supported";
    return std::nullopt;
  }
  if (globalShape.size() > 127) {
    error = "cannot plan reshard: tensors of rank above 127 are not supported";
    return std::nullopt;
  }
  for (int64_t extent : globalShape)
    if (extent < 0) {
      error = "cannot plan reshard of a tensor with dynamic dims";
      return std::nullopt;
    }
  if (elemBytes <= 0) {
    error = "cannot plan reshard: element size must be positive";
    return std::nullopt;
  }
  for (const auto &[layout, what] :
       {std::pair<const TensorLayout *, const char *>{&from, "source"},
        {&to, "target"}}) {
    std::string msg = layout->validate(mesh, &globalShape);
    if (!msg.empty()) {
      error = std::string("cannot plan reshard: invalid ") + what + " layout " +
              layout->str(mesh) + ": " + msg;
      return std::nullopt;
    }
  }
  Search search(model, globalShape, elemBytes, options);
  return search.run(from, to, error);
}

/// Whether `l` splits some dim unevenly: such layouts make the search graph
/// depend on the target's sizes, so costUs() prices them through plan().
static bool anyUneven(const TensorLayout &l) {
  return std::any_of(l.unevenSizes.begin(), l.unevenSizes.end(),
                     [](const auto &v) { return !v.empty(); });
}

/// costUs()'s state: layouts interned per shape with their validity, and
/// the searches, kept to be resumed for later targets. Lookups allocate
/// nothing: the pass prices thousands of pairs.
struct ReshardPlanner::CostIndex {
  struct LayoutInfo {
    TensorLayout layout;
    /// TensorLayout::validate's message; empty when valid.
    std::string invalid;
    /// Some dim is split unevenly: priced through plan().
    bool uneven = false;
    State state;
    /// As a target: the part of `state` that multi-target searches depend
    /// on (partial axes and kind), packed; they are kept by it.
    uint32_t partialSig = 0;
    /// As a source: (elemBytes, target partial signature, search index).
    std::vector<std::tuple<int64_t, uint32_t, uint32_t>> searches;
    /// As a target: its state's id in the shared graph of the searches of
    /// element size targetElemBytes (the target's partial signature picks
    /// the rest of the graph's key), -1 until interned: saves hashing the
    /// state for every pair.
    int64_t targetElemBytes = 0;
    int targetGid = -1;
  };
  struct ShapeEntry {
    /// planReshard's shape checks; empty when they pass.
    std::string error;
    /// Layout ids by layoutHash.
    llvm::DenseMap<uint64_t, llvm::SmallVector<uint32_t, 1>> layoutIds;
    std::vector<LayoutInfo> layouts;
    /// The searches' graphs by (elemBytes, target partial signature).
    std::map<std::pair<int64_t, uint32_t>, std::unique_ptr<SharedGraph>> graphs;
  };
  /// By shape; node-based, so the searches can refer to the key.
  std::map<std::vector<int64_t>, ShapeEntry> shapes;
  /// The last source's id (in the last shape): the pass prices a source
  /// against many targets in a row.
  uint32_t lastFrom = ~0u;
  /// The last shape's entry: the pass prices many pairs of one shape in a
  /// row.
  std::map<std::vector<int64_t>, ShapeEntry>::iterator lastShape = shapes.end();
  std::vector<std::unique_ptr<Search>> searches;

  /// The entry of `shape` (created with planReshard's shape checks, in its
  /// order and with its messages); lastShape points at it. The last shape's
  /// test is inline: it runs for every priced pair.
  ShapeEntry &entry(const DeviceMesh &mesh, const std::vector<int64_t> &shape) {
    if (lastShape != shapes.end() && lastShape->first == shape)
      return lastShape->second;
    return otherEntry(mesh, shape);
  }
  ShapeEntry &otherEntry(const DeviceMesh &mesh,
                         const std::vector<int64_t> &shape) {
    bool inserted;
    std::tie(lastShape, inserted) = shapes.try_emplace(shape);
    lastFrom = ~0u;
    ShapeEntry &e = lastShape->second;
    if (!inserted)
      return e;
    if (mesh.getNumAxes() > kMaxAxes)
      e.error = "cannot plan reshard: meshes of more than " +
                std::to_string(kMaxAxes) + " axes are not supported";
    else if (shape.size() > 127)
      e.error =
          "cannot plan reshard: tensors of rank above 127 are not supported";
    else if (std::any_of(shape.begin(), shape.end(),
                         [](int64_t x) { return x < 0; }))
      e.error = "cannot plan reshard of a tensor with dynamic dims";
    return e;
  }

  // Layouts are interned field by field (sameFields, the kind always):
  // operator== treats some differing layouts as equal, and their messages
  // and validity could differ.
  static uint64_t layoutHash(const TensorLayout &l) {
    return hashFields(l, /*kindOnlyWhenPartial=*/false);
  }
  static bool sameLayout(const TensorLayout &a, const TensorLayout &b) {
    return sameFields(a, b, /*kindOnlyWhenPartial=*/false);
  }
  uint32_t intern(ShapeEntry &entry, const std::vector<int64_t> &shape,
                  const DeviceMesh &mesh, const TensorLayout &l) {
    llvm::SmallVector<uint32_t, 1> &bucket = entry.layoutIds[layoutHash(l)];
    for (uint32_t id : bucket)
      if (sameLayout(entry.layouts[id].layout, l))
        return id;
    uint32_t id = static_cast<uint32_t>(entry.layouts.size());
    bucket.push_back(id);
    LayoutInfo info;
    info.layout = l;
    info.uneven = anyUneven(l);
    // A shape that fails planReshard's checks is refused before any layout
    // is read (evenState assumes at most kMaxAxes axes).
    if (entry.error.empty()) {
      info.invalid = l.validate(mesh, &shape);
      if (info.invalid.empty() && !info.uneven) {
        info.state = Search::evenState(l);
        info.partialSig = info.state.kind;
        for (int a = 0; a < kMaxAxes; ++a)
          if (info.state.dim[a] == kPartial)
            info.partialSig |= 1u << (8 + a);
      }
    }
    entry.layouts.push_back(std::move(info));
    return id;
  }
};

ReshardPlanner::ReshardPlanner(const CostModel &model, PlannerOptions options)
    : model(model), options(options) {}

ReshardPlanner::~ReshardPlanner() = default;

ReshardPlanner::CostIndex &ReshardPlanner::getCostIndex() {
  if (!costIndex)
    costIndex = std::make_unique<CostIndex>();
  return *costIndex;
}

uint32_t ReshardPlanner::layoutId(const std::vector<int64_t> &globalShape,
                                  const TensorLayout &layout) {
  CostIndex &index = getCostIndex();
  CostIndex::ShapeEntry &entry = index.entry(model.getMesh(), globalShape);
  return index.intern(entry, index.lastShape->first, model.getMesh(), layout);
}

std::optional<double>
ReshardPlanner::costUs(const std::vector<int64_t> &globalShape,
                       int64_t elemBytes, const TensorLayout &from,
                       const TensorLayout &to, std::string &error) {
  if (anyUneven(from) || anyUneven(to)) {
    auto p = plan(globalShape, elemBytes, from, to, error);
    if (!p)
      return std::nullopt;
    return p->timeUs;
  }
  CostIndex &index = getCostIndex();
  CostIndex::ShapeEntry &entry = index.entry(model.getMesh(), globalShape);
  if (!entry.error.empty()) {
    error = entry.error;
    return std::nullopt;
  }
  const std::vector<int64_t> &shape = index.lastShape->first;
  const DeviceMesh &mesh = model.getMesh();
  // The pass prices a source against many targets in a row.
  uint32_t fromId =
      index.lastFrom != ~0u &&
              CostIndex::sameLayout(entry.layouts[index.lastFrom].layout, from)
          ? index.lastFrom
          : index.intern(entry, shape, mesh, from);
  index.lastFrom = fromId;
  uint32_t toId = index.intern(entry, shape, mesh, to);
  return costUs(globalShape, elemBytes, fromId, toId, error);
}

std::optional<double>
ReshardPlanner::costUs(const std::vector<int64_t> &globalShape,
                       int64_t elemBytes, uint32_t fromId, uint32_t toId,
                       std::string &error) {
  CostIndex &index = getCostIndex();
  CostIndex::ShapeEntry &entry = index.entry(model.getMesh(), globalShape);
  const CostIndex::LayoutInfo &fromInfo = entry.layouts[fromId];
  const CostIndex::LayoutInfo &toInfo = entry.layouts[toId];
  if (fromInfo.uneven || toInfo.uneven) {
    auto p =
        plan(globalShape, elemBytes, fromInfo.layout, toInfo.layout, error);
    if (!p)
      return std::nullopt;
    return p->timeUs;
  }
  if (!entry.error.empty()) {
    error = entry.error;
    return std::nullopt;
  }
  if (elemBytes <= 0) {
    error = "cannot plan reshard: element size must be positive";
    return std::nullopt;
  }
  const DeviceMesh &mesh = model.getMesh();
  for (const auto &[info, what] :
       {std::pair<const CostIndex::LayoutInfo *, const char *>{&fromInfo,
                                                               "source"},
        {&toInfo, "target"}}) {
    if (!info->invalid.empty()) {
      error = std::string("cannot plan reshard: invalid ") + what + " layout " +
              info->layout.str(mesh) + ": " + info->invalid;
      return std::nullopt;
    }
  }
  const State &target = toInfo.state;
  // The single-target search settles the source first: no steps.
  if (fromId == toId || fromInfo.state == target)
    return 0.0;

  // MakePartial edges depend on the target's partial axes and kind.
  uint32_t sig = toInfo.partialSig;
  uint32_t searchId = ~0u;
  for (auto [eb, s, id] : fromInfo.searches)
    if (eb == elemBytes && s == sig)
      searchId = id;
  if (searchId == ~0u) {
    searchId = static_cast<uint32_t>(index.searches.size());
    entry.layouts[fromId].searches.emplace_back(elemBytes, sig, searchId);
    index.searches.push_back(std::make_unique<Search>(
        model, index.lastShape->first, elemBytes, options));
    std::unique_ptr<SharedGraph> &graph = entry.graphs[{elemBytes, sig}];
    if (!graph)
      graph = std::make_unique<SharedGraph>();
    index.searches.back()->startMulti(fromInfo.state, target, *graph);
    ++numSearches;
  }
  Search &search = *index.searches[searchId];
  CostIndex::LayoutInfo &targetInfo = entry.layouts[toId];
  if (targetInfo.targetGid < 0 || targetInfo.targetElemBytes != elemBytes) {
    targetInfo.targetGid = search.targetStateId(target);
    targetInfo.targetElemBytes = elemBytes;
  }
  // Not memoised: a repeated target is already settled, and its scan is
  // short (the pass asks for each pair once).
  std::optional<double> c = search.costTo(target, targetInfo.targetGid);
  if (!c)
    error = "no sequence of collectives turns " + fromInfo.layout.str(mesh) +
            " into " + toInfo.layout.str(mesh);
  return c;
}

std::optional<ReshardPlan>
ReshardPlanner::plan(const std::vector<int64_t> &globalShape, int64_t elemBytes,
                     const TensorLayout &from, const TensorLayout &to,
                     std::string &error) {
  // The cache key, built with plain appends (no stream: this runs once per
  // priced layout pair).
  std::string k;
  k.reserve(128);
  auto num = [&](int64_t v) {
    char buf[24];
    char *end = std::to_chars(buf, buf + sizeof(buf), v).ptr;
    k.append(buf, end - buf);
  };
  auto put = [&](const TensorLayout &l) {
    k += '|';
    for (const auto &axes : l.dimAxes) {
      k += '[';
      for (int64_t a : axes) {
        num(a);
        k += ',';
      }
      k += ']';
    }
    LayoutAxes p = l.partialAxes;
    std::sort(p.begin(), p.end());
    k += 'p';
    num(static_cast<int>(l.partialKind));
    for (int64_t a : p) {
      num(a);
      k += ',';
    }
    k += 'u';
    for (const auto &s : l.unevenSizes) {
      k += '(';
      for (int64_t x : s) {
        num(x);
        k += ',';
      }
      k += ')';
    }
  };
  for (int64_t e : globalShape) {
    num(e);
    k += 'x';
  }
  num(elemBytes);
  put(from);
  put(to);
  auto it = cache.find(k);
  if (it != cache.end()) {
    ++hits;
    error = it->second.error;
    return it->second.plan;
  }
  ++numSearches;
  Entry entry;
  entry.plan = planReshard(model, globalShape, elemBytes, from, to, options,
                           entry.error);
  error = entry.error;
  auto res = entry.plan;
  cache.emplace(std::move(k), std::move(entry));
  return res;
}
