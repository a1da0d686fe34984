//===- Pipeline.cpp - The named autoshard compile pipeline ----------------===//
//
// autoshard-pipeline = dist-propagate + dist-partition + dist-fuse-gradients +
// canonicalize + cse.
// The propagation pass is added by name through the pass registry, so this
// library does not link the propagation library; its options are forwarded
// textually.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Partition/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
struct AutoshardPipelineOptions
    : public PassPipelineOptions<AutoshardPipelineOptions> {
  Option<std::string> mesh{*this, "mesh",
                           llvm::cl::desc("Mesh for --dist-propagate, e.g. "
                                          "'dp=2,mp=4' (default: the "
                                          "module's dist.mesh)")};
  Option<std::string> solver{*this, "solver",
                             llvm::cl::desc("Propagation solver (dp|exact)")};
  Option<uint64_t> exactBudget{
      *this, "exact-budget",
      llvm::cl::desc("solver=exact: node visits before the search keeps its "
                     "best plan unproven (0: dist-propagate's default)"),
      llvm::cl::init(0)};
  Option<bool> enableAllToAll{
      *this, "enable-alltoall",
      llvm::cl::desc("Let the planner use all_to_all"), llvm::cl::init(false)};
  Option<std::string> report{
      *this, "report",
      llvm::cl::desc("Propagation report JSON file ('-' = stdout)")};
  Option<std::string> partitionReport{
      *this, "partition-report",
      llvm::cl::desc("Report of the emitted collectives ('-' = stdout)")};
  Option<std::string> cluster{*this, "cluster",
                              llvm::cl::desc("ClusterSpec JSON file")};
  Option<double> fusionThresholdMb{
      *this, "fusion-threshold-mb",
      llvm::cl::desc("Training steps: bucket the gradient collectives up to "
                     "this many MB (0: no fusion)"),
      llvm::cl::init(64.0)};
  Option<std::string> fusionReport{
      *this, "fusion-report",
      llvm::cl::desc("Report of the gradient fusion ('-' = one line on "
                     "stdout)")};
};

/// Quotes a pass option value for the textual pipeline syntax.
std::string quoted(StringRef v) { return "\"" + v.str() + "\""; }
} // namespace

void autoshard::registerAutoshardPipeline() {
  PassPipelineRegistration<AutoshardPipelineOptions>(
      "autoshard-pipeline",
      "Propagate layouts, partition to SPMD, fuse gradient collectives, "
      "clean up (dist-propagate, dist-partition, dist-fuse-gradients, "
      "canonicalize, cse)",
      [](OpPassManager &pm, const AutoshardPipelineOptions &opts) {
        std::string propagate = "dist-propagate{";
        llvm::raw_string_ostream os(propagate);
        if (!opts.mesh.empty())
          os << "mesh=" << quoted(opts.mesh) << " ";
        if (!opts.solver.empty())
          os << "solver=" << opts.solver << " ";
        if (opts.exactBudget)
          os << "exact-budget=" << opts.exactBudget << " ";
        if (!opts.report.empty())
          os << "report=" << quoted(opts.report) << " ";
        if (!opts.cluster.empty())
          os << "cluster=" << quoted(opts.cluster) << " ";
        os << "enable-alltoall=" << (opts.enableAllToAll ? "true" : "false")
           << "}";
        // dist-propagate may anchor on functions or on the module: let the
        // pass manager nest it as it needs.
        OpPassManager::Nesting nesting = pm.getNesting();
        pm.setNesting(OpPassManager::Nesting::Implicit);
        if (failed(parsePassPipeline(propagate, pm, llvm::errs())))
          llvm::errs() << "autoshard-pipeline: cannot add '" << propagate
                       << "' (is --dist-propagate registered?)\n";
        pm.setNesting(nesting);

        DistPartitionOptions partition;
        partition.enableAllToAll = opts.enableAllToAll;
        partition.clusterFile = opts.cluster;
        partition.reportFile = opts.partitionReport;
        pm.addPass(createDistPartition(partition));
        // Training steps: bucket the gradient collectives (a program
        // without a backward is left as it is).
        DistFuseGradientsOptions fusion;
        fusion.thresholdMb = opts.fusionThresholdMb;
        fusion.reportFile = opts.fusionReport;
        pm.addPass(createDistFuseGradients(fusion));
        pm.addPass(createCanonicalizerPass());
        pm.addPass(createCSEPass());
      });
}
