//===- Launch.cpp - Running programs on MPI ranks for the driver ----------===//

#include "Launch.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace autoshard;
using namespace autoshard::driver;

// Forwarded to every autoshard-run the driver starts (verify, train).
static llvm::cl::opt<std::string> kernelMode(
    "kernels",
    llvm::cl::desc("Loop nests on the ranks: auto (compile the large ones to "
                   "native code), compiled or interpreted (autoshard-run "
                   "--kernels; default auto)"),
    llvm::cl::value_desc("auto|compiled|interpreted"), llvm::cl::init(""),
    llvm::cl::sub(llvm::cl::SubCommand::getAll()));

std::string driver::getKernelsFlag() { return kernelMode; }

static LogicalResult fail(const Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "autoshard") << msg << "\n";
  return failure();
}

FailureOr<RankTools> driver::findRankTools(const char *argv0) {
  RankTools tools;
  tools.runTool = llvm::sys::fs::getMainExecutable(argv0, (void *)&fail);
  SmallString<128> runTool(llvm::sys::path::parent_path(tools.runTool));
  llvm::sys::path::append(runTool, "autoshard-run");
  if (!llvm::sys::fs::can_execute(runTool))
    return fail("autoshard-run not found next to the driver at '" + runTool +
                "'");
  tools.runTool = std::string(runTool);
  auto mpirun = llvm::sys::findProgramByName("mpirun");
  if (!mpirun)
    return fail("mpirun not found on PATH (install openmpi-bin)");
  tools.mpirun = *mpirun;
  return tools;
}

FailureOr<std::string> driver::makeWorkDir(StringRef dir, StringRef prefix) {
  SmallString<128> work(dir);
  if (work.empty()) {
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(prefix, work))
      return fail("cannot create a temporary directory: " + ec.message());
  } else if (std::error_code ec = llvm::sys::fs::create_directories(work)) {
    return fail("cannot create '" + work + "': " + ec.message());
  }
  return std::string(work);
}

LogicalResult driver::writeModule(ModuleOp module, StringRef path) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return failure();
  module.print(os);
  // A full disk shows up when the buffer is flushed.
  os.close();
  if (os.has_error()) {
    os.clear_error();
    return failure();
  }
  return success();
}

int driver::runRanks(const RankTools &tools, StringRef program, int ranks,
                     ArrayRef<std::string> args) {
  std::string np = std::to_string(ranks);
  SmallVector<StringRef> argv = {tools.mpirun,
                                 "--allow-run-as-root",
                                 "--oversubscribe",
                                 "-np",
                                 np,
                                 tools.runTool,
                                 program};
  argv.append(args.begin(), args.end());
  std::string kernels = "--kernels=" + kernelMode;
  if (!kernelMode.empty())
    argv.push_back(kernels);
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(tools.mpirun, argv, std::nullopt, {}, 0, 0,
                                     &err);
  if (rc != 0)
    llvm::errs() << "autoshard: " << ranks << "-rank run of " << program
                 << " failed (exit " << rc << ")" << (err.empty() ? "" : ": ")
                 << err << "\n";
  return rc;
}
