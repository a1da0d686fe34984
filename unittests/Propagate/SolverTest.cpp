//===- SolverTest.cpp - Strategy solver: optimality and determinism -------===//

#include "autoshard/Propagate/Solver.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <tuple>

using namespace autoshard;

namespace {

/// Edge costs that look like reshards: every candidate gives the value one of
/// `numLayouts` layouts; equal layouts cost nothing, others a random time.
void addReshardLikeEdge(SolverGraph &g, unsigned src, unsigned dst,
                        unsigned numLayouts, std::mt19937 &rng) {
  std::uniform_int_distribution<unsigned> pick(0, numLayouts - 1);
  std::uniform_real_distribution<double> time(1.0, 10.0);
  std::vector<unsigned> sc(g.getNumCandidates(src)),
      dc(g.getNumCandidates(dst));
  for (auto &c : sc)
    c = pick(rng);
  for (auto &c : dc)
    c = pick(rng);
  std::vector<double> cost(numLayouts * numLayouts, 0.0);
  for (unsigned i = 0; i < numLayouts; ++i)
    for (unsigned j = 0; j < numLayouts; ++j)
      cost[i * numLayouts + j] = i == j ? 0.0 : time(rng);
  g.addEdge(src, dst, sc, dc, numLayouts, numLayouts, cost);
}

/// Reshard-like tree edges on nodes 0 .. n - 1: node i hangs off a random
/// earlier node, the edge pointing either way (both occur in a program:
/// fan-in and fan-out).
void addRandomTree(SolverGraph &g, unsigned n, unsigned numLayouts,
                   std::mt19937 &rng) {
  for (unsigned i = 1; i < n; ++i) {
    std::uniform_int_distribution<unsigned> parent(0, i - 1);
    unsigned p = parent(rng);
    if (rng() % 2)
      addReshardLikeEdge(g, p, i, numLayouts, rng);
    else
      addReshardLikeEdge(g, i, p, numLayouts, rng);
  }
}

/// A side x side grid of reshard-like edges on nodes 0 .. side^2 - 1 (as
/// wide as its side: elimination needs tables of 3^side entries).
void addGrid(SolverGraph &g, unsigned side, std::mt19937 &rng) {
  for (unsigned r = 0; r < side; ++r)
    for (unsigned c = 0; c < side; ++c) {
      unsigned v = r * side + c;
      if (c + 1 < side)
        addReshardLikeEdge(g, v, v + 1, 3, rng);
      if (r + 1 < side)
        addReshardLikeEdge(g, v, v + side, 3, rng);
    }
}

SolverGraph randomNodes(unsigned n, unsigned maxCands, std::mt19937 &rng) {
  SolverGraph g;
  std::uniform_int_distribution<unsigned> k(1, maxCands);
  std::uniform_real_distribution<double> c(0.0, 5.0);
  for (unsigned i = 0; i < n; ++i) {
    std::vector<double> costs(k(rng));
    for (double &x : costs)
      x = c(rng);
    char key[16];
    std::snprintf(key, sizeof(key), "n%03u", i);
    g.addNode(key, costs);
  }
  return g;
}

/// n nodes of up to 8 candidates, each reading two reshard-like edges from
/// the five nodes before it: a program's local structure, with cycles.
SolverGraph localDAG(unsigned n, std::mt19937 &rng) {
  SolverGraph g = randomNodes(n, 8, rng);
  for (unsigned v = 1; v < n; ++v)
    for (unsigned f = 0; f < 2; ++f)
      addReshardLikeEdge(g, v > 5 ? v - 1 - rng() % 5 : rng() % v, v, 4, rng);
  return g;
}

/// Every assignment; the ground truth for small graphs.
double bruteForce(const SolverGraph &g) {
  auto allowed = resolveRestrictions(g);
  std::vector<unsigned> x(g.getNumNodes()), idx(g.getNumNodes(), 0);
  double best = 1e300;
  std::function<void(unsigned)> rec = [&](unsigned v) {
    if (v == g.getNumNodes()) {
      best = std::min(best, g.evaluate(x));
      return;
    }
    for (unsigned c : allowed[v]) {
      x[v] = c;
      rec(v + 1);
    }
  };
  rec(0);
  return best;
}

SolverResult run(const SolverGraph &g, SolverKind kind,
                 SolverOptions opts = {}) {
  opts.kind = kind;
  SolverResult r = solve(g, opts);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.assignment.size(), g.getNumNodes());
  EXPECT_DOUBLE_EQ(r.cost, g.evaluate(r.assignment));
  return r;
}

TEST(SolverTest, ChainsAreSolvedExactly) {
  std::mt19937 rng(1);
  for (unsigned trial = 0; trial < 20; ++trial) {
    SolverGraph g = randomNodes(30, 6, rng);
    for (unsigned i = 0; i + 1 < 30; ++i)
      addReshardLikeEdge(g, i, i + 1, 4, rng);
    SolverResult dp = run(g, SolverKind::DP);
    SolverResult ex = run(g, SolverKind::Exact);
    EXPECT_TRUE(dp.optimal);
    EXPECT_TRUE(ex.optimal);
    EXPECT_NEAR(dp.cost, ex.cost, 1e-9);
  }
}

TEST(SolverTest, TreesAreSolvedExactly) {
  std::mt19937 rng(2);
  for (unsigned trial = 0; trial < 20; ++trial) {
    SolverGraph g = randomNodes(25, 5, rng);
    addRandomTree(g, 25, 3, rng);
    SolverResult dp = run(g, SolverKind::DP);
    SolverResult ex = run(g, SolverKind::Exact);
    EXPECT_TRUE(dp.optimal);
    EXPECT_NEAR(dp.cost, ex.cost, 1e-9);
    // A tree is its own spanning forest: the local search is exact too.
    SolverResult local = run(g, SolverKind::Local);
    EXPECT_TRUE(local.optimal);
    EXPECT_NEAR(local.cost, ex.cost, 1e-9);
  }
}

// The local search's tree passes with more candidates than its kernels'
// vector widths (a pair stored parent-major is read 16 candidates at a
// time, then a tail): still exact on trees, whichever end of a pair is the
// parent. And on a chain of identical layers sharing one table, where each
// belief is the one before plus a constant and the passes share messages
// computed on beliefs less their least entry.
TEST(SolverTest, LocalSearchIsExactOnTreesWithManyCandidates) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> c(0.0, 5.0);
  for (unsigned trial = 0; trial < 10; ++trial) {
    SolverGraph g;
    std::uniform_int_distribution<unsigned> k(17, 40);
    for (unsigned i = 0; i < 15; ++i) {
      std::vector<double> costs(k(rng));
      for (double &x : costs)
        x = c(rng);
      g.addNode("n" + std::to_string(100 + i), costs);
    }
    addRandomTree(g, 15, 6, rng);
    SolverResult dp = run(g, SolverKind::DP);
    SolverResult local = run(g, SolverKind::Local);
    EXPECT_TRUE(local.optimal);
    EXPECT_NEAR(local.cost, dp.cost, 1e-9);
  }
  const unsigned numCands = 37, numLayouts = 7, length = 40;
  auto table = std::make_shared<SolverGraph::EdgeTable>();
  table->numSrcClasses = table->numDstClasses = numLayouts;
  for (unsigned i = 0; i < numCands; ++i) {
    table->srcClass.push_back(rng() % numLayouts);
    table->dstClass.push_back(rng() % numLayouts);
  }
  for (unsigned i = 0; i < numLayouts * numLayouts; ++i)
    table->cost.push_back(i % (numLayouts + 1) == 0 ? 0.0 : 1.0 + c(rng));
  std::vector<double> costs(numCands);
  for (double &x : costs)
    x = c(rng);
  SolverGraph g;
  for (unsigned i = 0; i < length; ++i)
    g.addNode("n" + std::to_string(100 + i), costs);
  // Both orientations along the chain.
  for (unsigned i = 0; i + 1 < length; ++i)
    g.addEdge(i % 2 ? i + 1 : i, i % 2 ? i : i + 1, table);
  SolverResult dp = run(g, SolverKind::DP);
  SolverResult local = run(g, SolverKind::Local);
  EXPECT_TRUE(local.optimal);
  EXPECT_NEAR(local.cost, dp.cost, 1e-9);
}

TEST(SolverTest, ExactMatchesBruteForce) {
  std::mt19937 rng(3);
  for (unsigned trial = 0; trial < 30; ++trial) {
    SolverGraph g = randomNodes(8, 3, rng);
    for (unsigned e = 0; e < 14; ++e) {
      unsigned a = rng() % 8, b = rng() % 8;
      if (a != b)
        addReshardLikeEdge(g, std::min(a, b), std::max(a, b), 3, rng);
    }
    double truth = bruteForce(g);
    SolverResult ex = run(g, SolverKind::Exact);
    EXPECT_TRUE(ex.optimal);
    EXPECT_NEAR(ex.cost, truth, 1e-9);
    // The default (elimination) proves the same optimum.
    SolverResult dp = run(g, SolverKind::DP);
    EXPECT_TRUE(dp.optimal);
    EXPECT_NEAR(dp.cost, truth, 1e-9);
    // Branch and bound alone (elimination given no room) agrees too.
    SolverOptions noElim;
    noElim.maxEliminationTable = 0;
    SolverResult bb = run(g, SolverKind::Exact, noElim);
    EXPECT_TRUE(bb.optimal);
    EXPECT_NEAR(bb.cost, truth, 1e-9);
  }
}

// Random DAGs shaped like programs: each op reads one to three earlier values.
// The default solver is exact on them (elimination: they are narrow), agreeing
// with an independent branch and bound; the local search, used when
// elimination would need too large tables, stays within 10%.
TEST(SolverTest, DefaultIsOptimalOnRandomDAGs) {
  std::mt19937 rng(4);
  double sumRatio = 0.0, maxRatio = 1.0;
  unsigned count = 0, optimalHits = 0;
  SolverOptions noElim;
  noElim.maxEliminationTable = 0;
  for (unsigned trial = 0; trial < 60; ++trial) {
    unsigned n = 10 + trial % 31; // 10..40 ops
    SolverGraph g = randomNodes(n, 4, rng);
    for (unsigned v = 1; v < n; ++v) {
      unsigned fanIn = 1 + rng() % std::min(3u, v);
      for (unsigned f = 0; f < fanIn; ++f) {
        unsigned lo = v > 6 ? v - 6 : 0; // mostly local, like real programs
        unsigned u = lo + rng() % (v - lo);
        addReshardLikeEdge(g, u, v, 4, rng);
      }
    }
    SolverResult dp = run(g, SolverKind::DP);
    SolverResult local = run(g, SolverKind::Local);
    EXPECT_TRUE(dp.optimal);
    // Branch and bound is slow beyond ~25 nodes; check the smaller half.
    if (n <= 25) {
      SolverResult bb = run(g, SolverKind::Exact, noElim);
      ASSERT_TRUE(bb.optimal)
          << "branch and bound ran out of budget, trial " << trial;
      EXPECT_NEAR(dp.cost, bb.cost, 1e-9);
    }
    EXPECT_LE(dp.cost, local.cost + 1e-9);
    double ratio = dp.cost > 0 ? local.cost / dp.cost : 1.0;
    sumRatio += ratio;
    maxRatio = std::max(maxRatio, ratio);
    optimalHits += local.cost <= dp.cost + 1e-9;
    ++count;
  }
  std::printf("random DAGs (10..40 ops): %u graphs, local/exact cost ratio "
              "mean %.4f max %.4f, optimal on %u\n",
              count, sumRatio / count, maxRatio, optimalHits);
  EXPECT_LE(maxRatio, 1.10);
}

// Branch and bound (elimination given no room) beyond the brute force's
// reach: graphs of 40-80 nodes with cycles, a third of them fixed by a
// restriction (their pairs become unary costs, and the rest falls apart
// into components searched one by one), and a 6 x 6 grid. It proves the
// optimum elimination finds; with too small a budget it stops, not proven,
// at a plan no worse than the local search's, its incumbent.
TEST(SolverTest, BranchAndBoundMatchesEliminationBeyondBruteForce) {
  std::mt19937 rng(11);
  SolverOptions noElim;
  noElim.maxEliminationTable = 0;
  for (unsigned trial = 0; trial < 12; ++trial) {
    unsigned n = 40 + trial * 4;
    SolverGraph g = localDAG(n, rng);
    for (unsigned v = trial % 3; v < n; v += 3)
      g.fix(v, rng() % g.getNumCandidates(v));
    SolverResult dp = run(g, SolverKind::DP);
    ASSERT_TRUE(dp.optimal);
    SolverResult bb = run(g, SolverKind::Exact, noElim);
    EXPECT_TRUE(bb.optimal) << "trial " << trial;
    EXPECT_NEAR(bb.cost, dp.cost, 1e-9) << "trial " << trial;
  }
  SolverGraph grid = randomNodes(36, 3, rng);
  addGrid(grid, 6, rng);
  SolverResult dp = run(grid, SolverKind::DP);
  SolverResult bb = run(grid, SolverKind::Exact, noElim);
  EXPECT_TRUE(bb.optimal);
  EXPECT_NEAR(bb.cost, dp.cost, 1e-9);
  SolverOptions tiny = noElim;
  tiny.maxSearchNodes = 10;
  SolverResult cut = run(grid, SolverKind::Exact, tiny);
  EXPECT_FALSE(cut.optimal);
  EXPECT_LE(cut.cost, run(grid, SolverKind::Local).cost + 1e-9);
}

// A grid is as wide as its side: with tables capped below 3^side entries
// elimination must give up, and the default then returns the local search's
// answer, not claimed optimal. With the default caps the same grid is solved
// exactly, and no heuristic beats it.
TEST(SolverTest, WideGraphsFallBackToLocalSearch) {
  std::mt19937 rng(6);
  unsigned side = 6;
  SolverGraph g = randomNodes(side * side, 3, rng);
  addGrid(g, side, rng);
  SolverOptions small;
  small.maxEliminationTable = 27;
  SolverResult capped = run(g, SolverKind::DP, small);
  SolverResult local = run(g, SolverKind::Local);
  EXPECT_FALSE(capped.optimal);
  EXPECT_EQ(capped.assignment, local.assignment);
  SolverResult dp = run(g, SolverKind::DP);
  EXPECT_TRUE(dp.optimal);
  EXPECT_LE(dp.cost, local.cost + 1e-9);
  SolverResult ex = run(g, SolverKind::Exact);
  EXPECT_NEAR(ex.cost, dp.cost, 1e-9);
}

// Elimination plans its order before computing any table, so when a table
// would exceed the cap it gives up at once, even where the cap is met only
// after a long run of cheap steps (a chain leading into a grid); and the
// default then returns exactly the local search's answer, as it does when
// the work cap stops the elimination instead.
TEST(SolverTest, CappedEliminationReturnsTheLocalSearch) {
  std::mt19937 rng(7);
  unsigned side = 5, chain = 40;
  SolverGraph g = randomNodes(side * side + chain, 3, rng);
  addGrid(g, side, rng);
  for (unsigned v = side * side - 1; v + 1 < side * side + chain; ++v)
    addReshardLikeEdge(g, v, v + 1, 3, rng);
  SolverResult local = run(g, SolverKind::Local);
  EXPECT_FALSE(local.optimal);
  SolverOptions smallTables, littleWork;
  smallTables.maxEliminationTable = 27;
  littleWork.maxEliminationWork = 100;
  for (const SolverOptions &capped : {smallTables, littleWork}) {
    SolverResult r = run(g, SolverKind::DP, capped);
    EXPECT_FALSE(r.optimal);
    EXPECT_EQ(r.assignment, local.assignment);
    EXPECT_DOUBLE_EQ(r.cost, local.cost);
    EXPECT_EQ(r.work, local.work);
  }
  SolverResult dp = run(g, SolverKind::DP);
  EXPECT_TRUE(dp.optimal);
  EXPECT_LE(dp.cost, local.cost + 1e-9);
}

// The trap of spanning-forest DP + local moves, and why elimination is the
// default: a ladder (two chains joined by rungs, like two branches of a
// program that meet at every step). Chain edges (0 equal / 10 different)
// are heavier than rungs (3 both at 0, 0 both at 1, 6 different), so the
// spanning forest keeps one rung; ignoring the others, all-0 looks best,
// and from there every single-node move pays a chain mismatch, and moving
// a whole chain pays the off-forest rungs as if the other chain stayed.
// The optimum is all-1 (12 node costs against 18 for all-0 rungs).
// `decoys` more candidates per node (unary 5, and an edge to or from one
// costs as much as the edge's worst mismatch, so the spanning forest stays
// the same) leave the optimum as it is.
SolverGraph ladder(unsigned len, unsigned decoys) {
  SolverGraph g;
  std::vector<double> costs = {0.0, 1.0};
  costs.resize(2 + decoys, 5.0);
  unsigned k = costs.size();
  auto table = [&](double same0, double same1, double differ) {
    std::vector<double> m(k * k, differ);
    m[0] = same0;
    m[k + 1] = same1;
    return m;
  };
  std::vector<unsigned> a, b;
  for (unsigned i = 0; i < len; ++i) {
    a.push_back(g.addNode("a" + std::to_string(i), costs));
    b.push_back(g.addNode("b" + std::to_string(i), costs));
  }
  for (unsigned i = 0; i + 1 < len; ++i) {
    g.addEdge(a[i], a[i + 1], table(0.0, 0.0, 10.0));
    g.addEdge(b[i], b[i + 1], table(0.0, 0.0, 10.0));
  }
  for (unsigned i = 0; i < len; ++i)
    g.addEdge(a[i], b[i], table(3.0, 0.0, 6.0));
  return g;
}

TEST(SolverTest, EliminationSolvesLaddersExactly) {
  unsigned len = 6;
  SolverGraph g = ladder(len, 0);
  double truth = bruteForce(g);
  EXPECT_DOUBLE_EQ(truth, 12.0);
  SolverResult dp = run(g, SolverKind::DP);
  EXPECT_TRUE(dp.optimal);
  EXPECT_DOUBLE_EQ(dp.cost, truth);
  for (unsigned v = 0; v < 2 * len; ++v)
    EXPECT_EQ(dp.assignment[v], 1u);
  // The local search leaves the trap by its neighbourhood move, which
  // eliminates over every node's best few candidates at once, but it does
  // not claim optimality.
  SolverResult local = run(g, SolverKind::Local);
  EXPECT_FALSE(local.optimal);
  EXPECT_DOUBLE_EQ(local.cost, truth);
}

// The neighbourhood move keeps a node's current candidate and the cheapest
// others with its neighbours held: with more candidates than it keeps (the
// decoys) it still moves the whole ladder, as the default does when
// elimination is capped.
TEST(SolverTest, LocalSearchMovesCyclesJointly) {
  unsigned len = 6;
  SolverGraph g = ladder(len, 3);
  SolverResult dp = run(g, SolverKind::DP);
  EXPECT_TRUE(dp.optimal);
  EXPECT_DOUBLE_EQ(dp.cost, 12.0);
  SolverOptions capped;
  capped.maxEliminationTable = 2;
  for (SolverResult r :
       {run(g, SolverKind::Local), run(g, SolverKind::DP, capped)}) {
    EXPECT_FALSE(r.optimal);
    EXPECT_DOUBLE_EQ(r.cost, dp.cost);
    EXPECT_EQ(r.assignment, dp.assignment);
  }
}

/// L residual blocks x_i -> p_i -> q_i -> x_{i+1} plus x_i -> x_{i+1}, every
/// block with the same node costs and edge tables (shared, or equal copies
/// when `copies`); `perturb` changes one entry of the last block's p -> q
/// table.
SolverGraph residualBlocks(unsigned numBlocks, bool copies, bool perturb) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> c(0.0, 5.0);
  auto costs = [&] { return std::vector<double>{c(rng), c(rng), c(rng)}; };
  std::vector<double> xc = costs(), pc = costs(), qc = costs();
  std::vector<std::vector<double>> t(4);
  for (auto &m : t)
    for (unsigned i = 0; i < 9; ++i)
      m.push_back(i % 4 == 0 ? 0.0 : c(rng));
  auto table = [&](const std::vector<double> &m) {
    auto e = std::make_shared<SolverGraph::EdgeTable>();
    e->srcClass = e->dstClass = {0, 1, 2};
    e->numSrcClasses = e->numDstClasses = 3;
    e->cost = m;
    return e;
  };
  std::vector<std::shared_ptr<const SolverGraph::EdgeTable>> shared;
  for (auto &m : t)
    shared.push_back(table(m));
  SolverGraph g;
  unsigned x = g.addNode("x0", xc);
  for (unsigned i = 0; i < numBlocks; ++i) {
    std::string n = std::to_string(i);
    unsigned p = g.addNode("p" + n, pc), q = g.addNode("q" + n, qc);
    unsigned next = g.addNode("x" + std::to_string(i + 1), xc);
    for (auto [k, src, dst] :
         {std::tuple<unsigned, unsigned, unsigned>{0, x, p},
          {1, p, q},
          {2, q, next},
          {3, x, next}}) {
      std::vector<double> m = t[k];
      if (perturb && k == 1 && i + 1 == numBlocks)
        m[1] += 0.5;
      g.addEdge(src, dst, copies || m != t[k] ? table(m) : shared[k]);
    }
    x = next;
  }
  return g;
}

TEST(SolverTest, RepeatedBlocksReuseEliminationSteps) {
  for (bool copies : {false, true}) {
    for (bool perturb : {false, true}) {
      SolverGraph g = residualBlocks(4, copies, perturb);
      SolverResult dp = run(g, SolverKind::DP);
      EXPECT_TRUE(dp.optimal);
      EXPECT_NEAR(dp.cost, bruteForce(g), 1e-9);
      // Blocks repeat: some steps are shared, whether the tables are the
      // same objects or equal copies.
      EXPECT_GT(dp.reusedSteps, 0u);
      EXPECT_LT(dp.reusedSteps, g.getNumNodes());
    }
  }
  // Equal inputs give the same result as with distinct (copied) tables.
  EXPECT_EQ(run(residualBlocks(6, false, false), SolverKind::DP).assignment,
            run(residualBlocks(6, true, false), SolverKind::DP).assignment);
}

// A chain of identical links eliminated from one end: every message carries
// the cost of all the links before it, but tables are kept up to a constant,
// so once the messages settle into the same shape the memo shares the
// steps. The result is still the optimum (a Viterbi pass in the test).
TEST(SolverTest, MessagesMatchUpToAConstant) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> c(0.0, 5.0);
  const unsigned n = 40, k = 6;
  std::vector<double> unary(k), link(k * k);
  for (double &x : unary)
    x = c(rng);
  for (double &x : link)
    x = c(rng);
  SolverGraph g;
  for (unsigned i = 0; i < n; ++i) {
    char key[16];
    std::snprintf(key, sizeof(key), "n%03u", i);
    g.addNode(key, unary);
  }
  for (unsigned i = 0; i + 1 < n; ++i)
    g.addEdge(i, i + 1, link);
  std::vector<double> best = unary;
  for (unsigned i = 1; i < n; ++i) {
    std::vector<double> next(k);
    for (unsigned y = 0; y < k; ++y) {
      double m = best[0] + link[y];
      for (unsigned x = 1; x < k; ++x)
        m = std::min(m, best[x] + link[x * k + y]);
      next[y] = unary[y] + m;
    }
    best = next;
  }
  SolverResult dp = run(g, SolverKind::DP);
  EXPECT_TRUE(dp.optimal);
  EXPECT_NEAR(dp.cost, *std::min_element(best.begin(), best.end()), 1e-9);
  EXPECT_GE(dp.reusedSteps, n / 2) << "steps computed: " << n - dp.reusedSteps;
}

// The local search shares a tree pass's messages between identical inputs
// (the repeated blocks of a model); sharing changes nothing, so tables that
// are the same objects (shared messages) or equal copies (none shared
// between blocks) give the same answer.
TEST(SolverTest, LocalSearchSharesMessagesExactly) {
  for (bool perturb : {false, true}) {
    SolverResult shared =
        run(residualBlocks(12, false, perturb), SolverKind::Local);
    SolverResult copied =
        run(residualBlocks(12, true, perturb), SolverKind::Local);
    EXPECT_EQ(shared.assignment, copied.assignment);
    EXPECT_DOUBLE_EQ(shared.cost, copied.cost);
    EXPECT_EQ(shared.work, copied.work);
  }
}

// The same with more candidates, infeasible pairs and side branches held
// by the block moves: a tree pass replays a message by its recipe (the
// child's unary costs, held pairs and children's messages) only when the
// tables are the same objects, and otherwise computes it from the belief.
TEST(SolverTest, LocalSearchRecipesMatchComputedMessages) {
  for (unsigned seed = 0; seed < 6; ++seed) {
    auto build = [&](bool copies) {
      std::mt19937 rng(100 + seed);
      std::uniform_int_distribution<int> c(0, 40);
      const unsigned k = 7 + seed % 3, blocks = 10;
      auto costs = [&] {
        std::vector<double> v(k);
        for (double &x : v)
          x = c(rng);
        return v;
      };
      // Side nodes take one of two unary vectors, so that the candidates
      // a block move holds differ from block to block.
      std::vector<std::vector<double>> unary(4), tables(5);
      for (auto &u : unary)
        u = costs();
      for (auto &m : tables)
        for (unsigned i = 0; i < k * k; ++i)
          m.push_back(i % (k + 1) == 0 ? 0.0
                      : c(rng) < 4     ? kInfeasibleCost
                                       : c(rng));
      auto table = [&](unsigned t) {
        auto e = std::make_shared<SolverGraph::EdgeTable>();
        e->srcClass.resize(k);
        std::iota(e->srcClass.begin(), e->srcClass.end(), 0u);
        e->dstClass = e->srcClass;
        e->numSrcClasses = e->numDstClasses = k;
        e->cost = tables[t];
        return e;
      };
      std::vector<std::shared_ptr<const SolverGraph::EdgeTable>> shared;
      for (unsigned t = 0; t < tables.size(); ++t)
        shared.push_back(table(t));
      auto edge = [&](unsigned t) { return copies ? table(t) : shared[t]; };
      SolverGraph g;
      unsigned x = g.addNode("x00", unary[0]);
      for (unsigned i = 0; i < blocks; ++i) {
        char name[16];
        std::snprintf(name, sizeof(name), "%02u", i);
        unsigned p = g.addNode(std::string("p") + name, unary[1]);
        unsigned q = g.addNode(std::string("q") + name, unary[2]);
        unsigned side =
            g.addNode(std::string("s") + name, unary[1 + 2 * (rng() % 2)]);
        std::snprintf(name, sizeof(name), "%02u", i + 1);
        unsigned next = g.addNode(std::string("x") + name, unary[0]);
        g.addEdge(x, p, edge(0));
        g.addEdge(p, q, edge(1));
        g.addEdge(q, next, edge(2));
        g.addEdge(x, next, edge(3));
        g.addEdge(p, side, edge(4));
        g.addEdge(side, next, edge(4));
        x = next;
      }
      return g;
    };
    SolverResult shared = run(build(false), SolverKind::Local);
    SolverResult copied = run(build(true), SolverKind::Local);
    EXPECT_EQ(shared.assignment, copied.assignment) << "seed " << seed;
    EXPECT_DOUBLE_EQ(shared.cost, copied.cost) << "seed " << seed;
    EXPECT_EQ(shared.work, copied.work) << "seed " << seed;
    EXPECT_LT(shared.cost, kInfeasibleCost / 2) << "seed " << seed;
    // The local search only takes moves that improve, so a wrong replay
    // can leave the answer unchanged: check each replay against the
    // message computed from the built belief.
    SolverOptions verify;
    verify.verifyRecipes = true;
    SolverResult checked = run(build(false), SolverKind::Local, verify);
    EXPECT_GT(checked.reusedSteps, 0u) << "seed " << seed;
    EXPECT_EQ(checked.memoMismatches, 0u) << "seed " << seed;
    EXPECT_EQ(checked.assignment, shared.assignment) << "seed " << seed;
  }
}

/// `g` with its nodes in a random order (node v of g is node inv[v] of the
/// result) and its edges added in reverse: the same problem.
SolverGraph shuffled(const SolverGraph &g, std::mt19937 &rng,
                     std::vector<unsigned> &inv) {
  unsigned n = g.getNumNodes();
  std::vector<unsigned> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  std::shuffle(perm.begin(), perm.end(), rng);
  inv.assign(n, 0);
  SolverGraph h;
  for (unsigned i = 0; i < n; ++i) {
    inv[perm[i]] = i;
    h.addNode(g.getNode(perm[i]).key, *g.getNode(perm[i]).costs);
  }
  const auto &edges = g.getEdges();
  for (auto it = edges.rbegin(); it != edges.rend(); ++it)
    h.addEdge(inv[it->src], inv[it->dst], it->table);
  return h;
}

TEST(SolverTest, ResultDoesNotDependOnInsertionOrder) {
  std::mt19937 rng(5);
  unsigned n = 30;
  SolverGraph g = randomNodes(n, 4, rng);
  for (unsigned v = 1; v < n; ++v)
    for (unsigned f = 0; f < 2; ++f)
      addReshardLikeEdge(g, rng() % v, v, 3, rng);
  SolverResult base = run(g, SolverKind::DP);
  SolverResult baseLocal = run(g, SolverKind::Local);

  for (unsigned trial = 0; trial < 5; ++trial) {
    std::vector<unsigned> inv;
    SolverGraph h = shuffled(g, rng, inv);
    SolverResult r = run(h, SolverKind::DP);
    SolverResult local = run(h, SolverKind::Local);
    for (unsigned v = 0; v < n; ++v) {
      EXPECT_EQ(r.assignment[inv[v]], base.assignment[v]);
      EXPECT_EQ(local.assignment[inv[v]], baseLocal.assignment[v]);
    }
  }
}

// The local search's neighbourhood move ranks candidates by their costs
// with the neighbours held, ties by candidate index: with more candidates
// than it keeps, and the many ties of reshard-like costs, its result does
// not depend on the order nodes and edges were added either.
TEST(SolverTest, LocalSearchDoesNotDependOnInsertionOrder) {
  std::mt19937 rng(12);
  for (unsigned trial = 0; trial < 5; ++trial) {
    unsigned n = 40;
    SolverGraph g = localDAG(n, rng);
    SolverResult base = run(g, SolverKind::Local);
    std::vector<unsigned> inv;
    SolverResult local = run(shuffled(g, rng, inv), SolverKind::Local);
    EXPECT_DOUBLE_EQ(local.cost, base.cost);
    for (unsigned v = 0; v < n; ++v)
      EXPECT_EQ(local.assignment[inv[v]], base.assignment[v]);
  }
}

// SolverOptions::parallelFor may run the solver's independent pieces of
// work (building its pair matrices) in any order and on any threads: the
// result is the same as on one thread, for every solver kind. The executor
// here runs the indices in reverse, split over two threads, and counts the
// pieces, so a solver that stopped using it would fail too.
TEST(SolverTest, ResultDoesNotDependOnTheExecutor) {
  std::mt19937 rng(13);
  size_t pieces = 0;
  SolverOptions threaded;
  threaded.parallelFor = [&](size_t n, const std::function<void(size_t)> &fn) {
    pieces += n;
    std::thread other([&] {
      for (size_t i = n; i-- > n / 2;)
        fn(i);
    });
    for (size_t i = n / 2; i-- > 0;)
      fn(i);
    other.join();
  };
  for (unsigned trial = 0; trial < 6; ++trial) {
    unsigned n = 30;
    SolverGraph g = localDAG(n, rng);
    for (SolverKind kind : {SolverKind::DP, SolverKind::Local}) {
      SolverResult serial = run(g, kind);
      SolverResult parallel = run(g, kind, threaded);
      EXPECT_EQ(parallel.assignment, serial.assignment);
      EXPECT_EQ(parallel.cost, serial.cost);
      EXPECT_EQ(parallel.optimal, serial.optimal);
      EXPECT_EQ(parallel.work, serial.work);
    }
  }
  EXPECT_GT(pieces, 0u);
}

TEST(SolverTest, HigherPriorityRestrictionWins) {
  SolverGraph g;
  unsigned a = g.addNode("a", {0.0, 0.0, 0.0});
  unsigned b = g.addNode("b", {0.0, 0.0});
  // b prefers matching a's candidate 0.
  g.addEdge(a, b, {0, 1, 1, 0, 1, 1});
  g.restrict(a, {2}, /*priority=*/0);
  g.restrict(a, {1}, /*priority=*/3);
  SolverResult r = run(g, SolverKind::DP);
  EXPECT_EQ(r.assignment[a], 1u);
  EXPECT_EQ(r.assignment[b], 1u);
  // Compatible restrictions intersect.
  SolverGraph h;
  unsigned c = h.addNode("c", {5.0, 1.0, 0.0});
  h.restrict(c, {0, 1});
  h.restrict(c, {1, 2});
  EXPECT_EQ(run(h, SolverKind::DP).assignment[c], 1u);
}

TEST(SolverTest, ParallelEdgesAddUp) {
  SolverGraph g;
  unsigned a = g.addNode("a", {0.0, 1.0});
  unsigned b = g.addNode("b", {0.0, 0.0});
  g.addEdge(a, b, {0, 2, 2, 0});
  g.addEdge(b, a, {0, 2, 2, 0});
  g.addEdge(a, b, {3, 0, 0, 0});
  SolverResult r = run(g, SolverKind::DP);
  // (0,0)=3, (0,1)=4, (1,0)=5, (1,1)=1.
  EXPECT_EQ(r.assignment[a], 1u);
  EXPECT_EQ(r.assignment[b], 1u);
  EXPECT_DOUBLE_EQ(r.cost, 1.0);
}

TEST(SolverTest, MalformedGraphsAreRejected) {
  SolverGraph g;
  g.addNode("a", std::vector<double>{});
  EXPECT_NE(solve(g).error, "");
  SolverGraph h;
  unsigned a = h.addNode("a", {0.0});
  unsigned b = h.addNode("b", {0.0, 1.0});
  h.addEdge(a, b, {0.0}); // wrong size
  EXPECT_NE(solve(h).error, "");
  SolverGraph k;
  k.addNode("a", {0.0});
  k.restrict(0, {4});
  EXPECT_NE(solve(k).error, "");
}

TEST(SolverTest, SolverKindNames) {
  EXPECT_EQ(symbolizeSolverKind("dp"), SolverKind::DP);
  EXPECT_EQ(symbolizeSolverKind("exact"), SolverKind::Exact);
  EXPECT_EQ(symbolizeSolverKind("local"), SolverKind::Local);
  EXPECT_EQ(stringifySolverKind(SolverKind::Local), "local");
  EXPECT_FALSE(symbolizeSolverKind("ilp").has_value());
  EXPECT_EQ(stringifySolverKind(SolverKind::Exact), "exact");
}

} // namespace
