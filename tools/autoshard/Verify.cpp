//===- Verify.cpp - autoshard verify: partitioned vs single device --------===//

#include "Verify.h"
#include "Launch.h"

#include "autoshard/Dialect/Dist/IR/DistDialect.h"
#include "autoshard/Runtime/HostIO.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace autoshard;
using namespace autoshard::driver;

static int fail(const Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "autoshard") << msg << "\n";
  return 1;
}

/// One `autoshard-run PROGRAM` on `ranks` ranks, writing outputs to outDir.
static int runProgram(const RankTools &tools, StringRef program, int ranks,
                      StringRef outDir, const VerifyOptions &o) {
  SmallVector<std::string> args = {"--seed", std::to_string(o.seed),
                                   "--output-dir", outDir.str()};
  if (o.backend != "cpu")
    args.push_back("--backend=" + o.backend);
  return runRanks(tools, program, ranks, args);
}

int driver::runVerify(MLIRContext &ctx, const VerifyOptions &o) {
  if (o.backend != "cpu" && o.backend != "cuda")
    return fail("--backend must be cpu or cuda, got '" + o.backend + "'");
  if (!(o.rtol >= 0) || !(o.atol >= 0))
    return fail("--rtol and --atol must be non-negative");
  // Where programs, weights and outputs go.
  FailureOr<std::string> work = makeWorkDir(o.workDir, "autoshard-verify");
  if (failed(work))
    return 1;
  auto path = [&](StringRef name) {
    SmallString<128> p(*work);
    llvm::sys::path::append(p, name);
    return std::string(p);
  };
  CompileOptions compileOptions = o.compile;
  if (compileOptions.weightsDir.empty())
    compileOptions.weightsDir = path("weights");
  OwningOpRef<ModuleOp> original = loadInput(ctx, compileOptions);
  if (!original)
    return 1;
  auto meshAttr =
      (*original)->getAttrOfType<dist::MeshAttr>(dist::DistDialect::kMeshAttrName);
  OwningOpRef<ModuleOp> partitioned = original->clone();
  if (failed(compile(*partitioned, o.compile)))
    return 1;
  if (!meshAttr)
    meshAttr = (*partitioned)->getAttrOfType<dist::MeshAttr>(
        dist::DistDialect::kMeshAttrName);
  if (!meshAttr)
    return fail("no mesh: give --mesh or a dist.mesh module attribute");
  int ranks = o.ranks ? o.ranks : meshAttr.getNumDevices();
  if (ranks != meshAttr.getNumDevices())
    return fail("--ranks " + Twine(ranks) + " does not match the mesh's " +
                Twine(meshAttr.getNumDevices()) + " devices");

  std::string originalPath = path("original.mlir");
  std::string partitionedPath = path("partitioned.mlir");
  if (failed(writeModule(*original, originalPath)) ||
      failed(writeModule(*partitioned, partitionedPath)))
    return fail("cannot write programs into '" + *work + "'");
  FailureOr<RankTools> tools = findRankTools(o.argv0);
  if (failed(tools))
    return 1;

  std::string refDir = path("reference"), distDir = path("partitioned");
  llvm::outs() << "autoshard verify: " << o.compile.input << " on "
               << meshAttr.toDeviceMesh().str() << ", " << ranks
               << " ranks, backend " << o.backend << "\n";
  llvm::outs().flush();
  if (runProgram(*tools, originalPath, 1, refDir, o) ||
      runProgram(*tools, partitionedPath, ranks, distDir, o))
    return 1;

  // Compare every output the reference run wrote.
  int numOutputs = 0;
  bool ok = true;
  for (int i = 0;; ++i) {
    std::string name = "output_" + std::to_string(i) + ".npy";
    std::string ref = refDir + "/" + name, got = distDir + "/" + name;
    if (!llvm::sys::fs::exists(ref))
      break;
    ++numOutputs;
    try {
      rt::Tensor a = rt::readNpy(got), b = rt::readNpy(ref);
      double maxAbs = 0;
      std::string mismatch = rt::compareTensors(a, b, o.rtol, o.atol, maxAbs);
      double maxRef = 0;
      if (mismatch.empty() || a.getNumElements() == b.getNumElements())
        for (int64_t k = 0; k < b.getNumElements(); ++k)
          maxRef = std::max(maxRef, std::fabs(b.getAsDouble(k)));
      double rel = maxRef > 0 ? maxAbs / maxRef : maxAbs;
      llvm::outs() << llvm::formatv(
          "  output {0} {1}: max abs err {2:e3}, max rel err {3:e3}  {4}\n", i,
          b.getTypeString(), maxAbs, rel, mismatch.empty() ? "ok" : "MISMATCH");
      if (!mismatch.empty()) {
        llvm::outs() << "    " << mismatch << "\n";
        ok = false;
      }
    } catch (const rt::Error &e) {
      llvm::outs() << "  output " << i << ": " << e.what() << "\n";
      ok = false;
    }
  }
  if (numOutputs == 0)
    return fail("the reference run wrote no outputs into '" + refDir + "'");
  llvm::outs() << "autoshard verify: " << (ok ? "PASS" : "FAIL") << " ("
               << numOutputs << " output" << (numOutputs == 1 ? "" : "s")
               << ", rtol " << o.rtol << ", atol " << o.atol << ")\n";
  return ok ? 0 : 1;
}
