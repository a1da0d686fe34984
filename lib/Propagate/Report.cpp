//===- Report.cpp - What propagation decided, as JSON ---------------------===//

#include "Report.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace autoshard;

void PropagationReport::addReshard(const ReshardPlan &plan,
                                   const DeviceMesh &mesh) {
  ++numReshards;
  for (const CollectiveStep &step : plan.steps)
    ++collectives[std::string(stringifyCollectiveKind(step.kind))];
  commBytesPerDevice += plan.bytesPerDevice;
  commTimeUs += plan.timeUs;
}

void PropagationReport::addStrategy(mlir::Operation *op,
                                    llvm::ArrayRef<llvm::StringRef> operands,
                                    llvm::ArrayRef<llvm::StringRef> results) {
  std::string loc;
  llvm::raw_string_ostream os(loc);
  op->getLoc().print(os);
  llvm::json::Array ins, outs;
  for (llvm::StringRef l : operands)
    ins.push_back(l.str());
  for (llvm::StringRef l : results)
    outs.push_back(l.str());
  strategies.push_back(
      llvm::json::Object{{"op", op->getName().getStringRef().str()},
                         {"loc", os.str()},
                         {"operands", std::move(ins)},
                         {"results", std::move(outs)}});
}

llvm::json::Object PropagationReport::toJSON() const {
  return toJSON(llvm::json::Array(strategies));
}

llvm::json::Object
PropagationReport::toJSON(llvm::json::Array strategyList) const {
  llvm::json::Object coll;
  for (const auto &[kind, count] : collectives)
    coll[kind] = count;
  llvm::json::Object json{
      {"solver", solver},
      {"optimal", optimal},
      {"ops", numOps},
      {"reshards", numReshards},
      {"collectives", std::move(coll)},
      {"comm_bytes_per_device", commBytesPerDevice},
      {"comm_time_us", commTimeUs},
      {"compute_time_us", computeTimeUs},
      {"memory_bytes_per_device", memoryBytesPerDevice},
      {"parameter_bytes_per_device", parameterBytesPerDevice},
      {"optimizer_state_bytes_per_device", optimizerStateBytesPerDevice},
      {"gradient_bytes_per_device", gradientBytesPerDevice},
      {"activation_bytes_per_device", activationBytesPerDevice},
      {"total_cost_us", computeTimeUs + commTimeUs},
      {"solver_cost_us", solverCostUs},
      {"candidates", numCandidates},
      {"priced_reshards", numPricedReshards},
      {"strategies", std::move(strategyList)},
      {"memory_bound_bytes_per_device", memoryBoundBytesPerDevice},
      {"memory_fits", memoryFits}};
  if (solverBudgetExhausted)
    json["solver_budget_exhausted"] = true;
  if (memoryBounded) {
    json["unbounded_cost_us"] = unboundedCostUs;
    json["unbounded_memory_bytes_per_device"] = unboundedMemoryBytesPerDevice;
    json["unrepaired_cost_us"] = unrepairedCostUs;
    json["unrepaired_memory_bytes_per_device"] = unrepairedMemoryBytesPerDevice;
  }
  if (memoryBounded || !memoryFits) {
    llvm::json::Array largest;
    for (const auto &[value, bytes] : largestValues)
      largest.push_back(llvm::json::Object{{"value", value}, {"bytes", bytes}});
    json["largest_values_per_device"] = std::move(largest);
  }
  return json;
}

bool PropagationReport::write(const std::string &path, std::string &error) {
  if (path == "-") {
    llvm::raw_ostream &os = llvm::outs();
    os << "dist-propagate report (solver " << solver
       << (optimal ? ", optimal" : "")
       << (solverBudgetExhausted ? ", budget exhausted" : "") << ")\n";
    os << "  ops: " << numOps << "\n  reshards: " << numReshards << "\n";
    os << "  collectives:";
    if (collectives.empty())
      os << " none";
    for (const auto &[kind, count] : collectives)
      os << " " << kind << "=" << count;
    os << "\n"
       << llvm::format("  comm bytes per device: %.0f\n", commBytesPerDevice)
       << llvm::format("  comm time: %.3f us\n", commTimeUs)
       << llvm::format("  compute time: %.3f us\n", computeTimeUs)
       << llvm::format("  memory per device: %.0f bytes (bound %.0f, %s)\n",
                       memoryBytesPerDevice, memoryBoundBytesPerDevice,
                       memoryFits ? "fits" : "does not fit");
    if (memoryBounded)
      os << llvm::format("    fastest plan: %.0f bytes, %.3f us\n",
                         unboundedMemoryBytesPerDevice, unboundedCostUs)
         << llvm::format("    before repair: %.0f bytes, %.3f us\n",
                         unrepairedMemoryBytesPerDevice, unrepairedCostUs);
    if (memoryBounded || !memoryFits)
      for (const auto &[value, bytes] : largestValues)
        os << llvm::format("    %12.0f bytes  ", bytes) << value << "\n";
    if (optimizerStateBytesPerDevice + activationBytesPerDevice > 0)
      os << llvm::format("    parameters %.0f, gradients %.0f, optimizer "
                         "state %.0f, activations %.0f\n",
                         parameterBytesPerDevice, gradientBytesPerDevice,
                         optimizerStateBytesPerDevice,
                         activationBytesPerDevice);
    os << llvm::format("  total cost: %.3f us\n", computeTimeUs + commTimeUs)
       << llvm::format("  solver: %lld nodes, %lld candidates, %.2f ms\n",
                       static_cast<long long>(solverNodes),
                       static_cast<long long>(numCandidates), solverTimeMs)
       << llvm::format("  pricing: %lld reshards on %u thread%s\n",
                       static_cast<long long>(numPricedReshards),
                       pricingThreads, pricingThreads == 1 ? "" : "s");
    os.flush();
    return true;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    error = "cannot write report '" + path + "': " + ec.message();
    return false;
  }
  // The strategies move into the JSON (a model lists thousands).
  os << llvm::formatv("{0:2}", llvm::json::Value(toJSON(std::move(strategies))))
     << "\n";
  strategies = llvm::json::Array();
  return true;
}
