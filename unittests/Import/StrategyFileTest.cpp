//===- StrategyFileTest.cpp - Strategy files and .npy weights -------------===//

#include "autoshard/Import/StrategyFile.h"
#include "autoshard/Import/Npy.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

using namespace autoshard;

namespace {

/// Parses `text`, collecting diagnostics instead of printing them.
struct Parsed {
  mlir::MLIRContext ctx;
  std::string errors;
  mlir::FailureOr<StrategySpec> spec = mlir::failure();
  explicit Parsed(llvm::StringRef text) {
    mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
      errors += d.str() + "\n";
      return mlir::success();
    });
    spec = parseStrategy(text, "s.yaml", &ctx);
  }
};

TEST(StrategyFile, YamlAndJsonAgree) {
  Parsed yaml("mesh: {dp: 2, mp: 4}\n"
              "strategies:\n"
              "  - match: \"/fc1/*\"\n"
              "    splits: [[2, 1], [1, 4]]\n"
              "    priority: 3\n"
              "  - match: w\n"
              "    layout: [[mp], []]\n"
              "stages:\n"
              "  - {match: \"/fc1/*\", stage: 1}\n");
  Parsed json(R"({"mesh": {"dp": 2, "mp": 4},
                  "strategies": [
                    {"match": "/fc1/*", "splits": [[2, 1], [1, 4]], "priority": 3},
                    {"match": "w", "layout": [["mp"], []]}],
                  "stages": [{"match": "/fc1/*", "stage": 1}]})");
  for (Parsed *p : {&yaml, &json}) {
    ASSERT_TRUE(succeeded(p->spec)) << p->errors;
    const StrategySpec &s = *p->spec;
    ASSERT_EQ(s.mesh.getNumAxes(), 2);
    EXPECT_EQ(s.mesh.getAxis(0).name, "dp");
    EXPECT_EQ(s.mesh.getAxisSize(1), 4);
    ASSERT_EQ(s.strategies.size(), 2u);
    ASSERT_EQ(s.strategies[0].inputs.size(), 2u);
    EXPECT_EQ(s.strategies[0].inputs[1].splits, (std::vector<int64_t>{1, 4}));
    EXPECT_EQ(s.strategies[0].priority, 3);
    ASSERT_TRUE(s.strategies[1].tensor.has_value());
    EXPECT_FALSE(s.strategies[1].tensor->isSplits);
    ASSERT_EQ(s.stages.size(), 1u);
    EXPECT_EQ(s.stages[0].stage, 1);
  }
}

TEST(StrategyFile, ResolvesSplitsAndNames) {
  Parsed p("mesh: {dp: 2, mp: 4}\n"
           "strategies:\n"
           "  - {match: a, splits: [8, 1]}\n"
           "  - {match: b, layout: [mp, [dp]]}\n");
  ASSERT_TRUE(succeeded(p.spec)) << p.errors;
  const DeviceMesh &mesh = p.spec->mesh;
  std::string err;
  TensorLayout a = p.spec->strategies[0].tensor->resolve(mesh, {16, 4}, err);
  EXPECT_EQ(err, "");
  EXPECT_EQ(a.dimAxes[0], (std::vector<int64_t>{0, 1}));
  TensorLayout b = p.spec->strategies[1].tensor->resolve(mesh, {8, 8}, err);
  EXPECT_EQ(err, "");
  EXPECT_EQ(b.dimAxes[0], (std::vector<int64_t>{1}));
  EXPECT_EQ(b.dimAxes[1], (std::vector<int64_t>{0}));
  // 4 does not divide 6; a rank mismatch; an unknown axis.
  p.spec->strategies[1].tensor->resolve(mesh, {6, 8}, err);
  EXPECT_NE(err.find("not divisible"), std::string::npos) << err;
  p.spec->strategies[1].tensor->resolve(mesh, {8}, err);
  EXPECT_NE(err.find("rank"), std::string::npos) << err;
}

TEST(StrategyFile, LocatedErrors) {
  Parsed bad("mesh: {dp: 2}\nstrategies:\n  - {match: x, layout: [[dp], 3]}\n");
  EXPECT_TRUE(failed(bad.spec));
  EXPECT_NE(bad.errors.find("mixes split counts and mesh axis names"),
            std::string::npos)
      << bad.errors;
  Parsed noMesh("strategies: []\n");
  EXPECT_TRUE(failed(noMesh.spec));
  EXPECT_NE(noMesh.errors.find("no 'mesh'"), std::string::npos);
  Parsed zero("mesh: {dp: 0}\n");
  EXPECT_TRUE(failed(zero.spec));
  Parsed syntax("mesh: {dp: 2\n");
  EXPECT_TRUE(failed(syntax.spec));
  EXPECT_NE(syntax.errors, "");
}

TEST(Npy, RoundTrip) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("w", "npy", path));
  std::vector<float> data = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{2, 3}, std::vector<int64_t>{6},
        std::vector<int64_t>{1, 2, 3}}) {
    ASSERT_EQ(writeNpyF32(path, shape, data), "");
    std::vector<int64_t> s;
    std::vector<float> d;
    ASSERT_EQ(readNpyF32(path, s, d), "");
    EXPECT_EQ(s, shape);
    EXPECT_EQ(d, data);
  }
  std::vector<int64_t> s;
  std::vector<float> d;
  EXPECT_NE(readNpyF32(path.str().str() + ".missing", s, d), "");
  llvm::sys::fs::remove(path);
}

// Issue 22: a full disk was noticed only by the destructor (an abort), or
// not at all for small files.
TEST(Npy, ReportsAFullDisk) {
  if (!llvm::sys::fs::exists("/dev/full"))
    GTEST_SKIP() << "no /dev/full";
  std::vector<float> data = {1.0f, 2.0f};
  std::string err = writeNpyF32("/dev/full", {2}, data);
  EXPECT_NE(err.find("cannot write '/dev/full'"), std::string::npos) << err;
}

} // namespace
