//===- PlanSource.cpp - Where autoshard-run's plan comes from -------------===//

#include "PlanSource.h"

#include "autoshard/Runtime/PlanFile.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace autoshard;
namespace fs = std::filesystem;

bool run::isPlanPath(const std::string &path) {
  return fs::path(path).extension() == ".asplan";
}

namespace {
/// The `autoshard` driver in this executable's directory.
std::string findDriver() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  fs::path driver = self.parent_path() / "autoshard";
  if (ec || !fs::exists(driver))
    throw rt::Error("running MLIR needs the autoshard compiler next to "
                    "autoshard-run (" + driver.string() +
                    " is missing); compile the program elsewhere with "
                    "`autoshard compile PROGRAM.mlir --lower-only -o "
                    "PROGRAM.asplan` and run the plan");
  return driver.string();
}

/// A fresh private directory for the temporary plan, removed on scope exit.
struct TempDir {
  TempDir() {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/autoshard-run-XXXXXX";
    if (!mkdtemp(pattern.data()))
      throw rt::Error("cannot create a temporary directory: " +
                      std::string(std::strerror(errno)));
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  fs::path path;
};

/// Runs `argv` with stderr into `errFile`; returns its exit status.
int spawn(const std::vector<std::string> &args, const std::string &errFile) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, errFile.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char *> argv;
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(),
                          environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error)
    throw rt::Error("cannot run '" + args[0] + "': " + std::strerror(error));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

std::string readText(const fs::path &path) {
  try {
    return rt::readFileBytes(path.string());
  } catch (const rt::Error &) {
    return "";
  }
}
} // namespace

std::string run::compileToPlanBytes(const std::string &program,
                                    const std::vector<std::string> &flags) {
  std::string driver = findDriver();
  TempDir dir;
  fs::path plan = dir.path / "program.asplan", log = dir.path / "compile.log";
  std::vector<std::string> args = {driver, "compile", program, "--lower-only",
                                   "-o", plan.string()};
  args.insert(args.end(), flags.begin(), flags.end());
  int status = spawn(args, log.string());
  std::string messages = readText(log);
  if (status != 0) {
    const std::string prefix = "autoshard: error: ";
    if (messages.compare(0, prefix.size(), prefix) == 0)
      messages.erase(0, prefix.size());
    while (!messages.empty() && messages.back() == '\n')
      messages.pop_back();
    if (messages.empty())
      messages = "cannot compile '" + program + "' (autoshard exited with " +
                 std::to_string(status) + ")";
    throw rt::Error(messages);
  }
  std::cerr << messages << std::flush;
  return rt::readFileBytes(plan.string());
}
