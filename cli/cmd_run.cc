// rigel run SCRIPT [ARGS...]: runs a Lua rig script with the `rigel` module, sandboxed.
//
// The script runs in a child process with an address-space limit (--memory-mb) and a wall-clock
// limit (--timeout, then SIGKILL). Without --allow-io the kernel also confines that child
// (Landlock, see importers/confine.h and docs/security.md) to reading the script, its folder,
// rigel's scripts/ and the ARGS, and to reading and writing --out; the Lua sandbox
// (bindings/lua/sandbox.h) checks the same paths first and gives the clear messages. The parent
// reports a crash of the child by its signal.
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "bindings/lua/rigel_module.h"
#include "cli/batch/batch.h"
#include "cli/command.h"
#include "importers/confine.h"

#ifndef RIGEL_SCRIPTS_DIR
#define RIGEL_SCRIPTS_DIR ""
#endif

namespace rigel::cli {

namespace {

// What the script's process may touch: read the script, its folder (modules), rigel's scripts/,
// every ARG that names a file or folder, its own /proc/self/statm (the isolated loader sizes its
// child's memory limit from it) and the time zone files (os.date); read and write --out.
ConfinementRules ScriptRules(const lua::RunOptions& options) {
  ConfinementRules rules;
  rules.read_only = options.args;
  rules.read_only.push_back(options.script);
  rules.read_only.push_back(lua::ScriptFolder(options));
  rules.read_only.push_back(options.scripts_dir);
  rules.read_only.push_back("/proc/self/statm");
  rules.read_only.push_back("/etc/localtime");
  rules.read_only.push_back("/usr/share/zoneinfo");
  if (!options.out_dir.empty()) rules.read_write.push_back(options.out_dir);
  return rules;
}

// Limits of the script's process.
struct RunLimits {
  std::size_t memory_mb = 0;  // RLIMIT_AS above the child's mappings at start; 0 = none
  double timeout = 0;         // wall-clock seconds, then SIGKILL; 0 = none
};

// Bytes this process maps now (/proc/self/statm), 0 when unknown.
std::size_t MappedBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long pages = 0;
  if (std::fscanf(f, "%lu", &pages) != 1) pages = 0;
  std::fclose(f);
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// Runs the script in a child process with `limits`, confined unless --allow-io; returns its
// exit code (0 or 1).
int RunConfined(const lua::RunOptions& options, const RunLimits& limits) {
  if (!options.allow_io && ProbeConfinement().kind == ConfinementKind::kNone) {
    fmt::print(stderr, "rigel run: warning: confinement: {}\n", DescribeConfinement());
  }
  std::error_code ec;
  if (!options.out_dir.empty()) std::filesystem::create_directories(options.out_dir, ec);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    fmt::print(stderr, "rigel run: error: cannot start the script process (fork: {})\n",
               std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    int rc = 1;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (limits.memory_mb > 0) {
      const rlim_t limit = MappedBytes() + (static_cast<rlim_t>(limits.memory_mb) << 20);
      const rlimit as{limit, limit};
      setrlimit(RLIMIT_AS, &as);
    }
    try {
      if (!options.allow_io) ConfineCurrentThread(ScriptRules(options));
      rc = lua::RunScript(options, stderr);
    } catch (const std::exception& e) {
      fmt::print(stderr, "rigel run: error: {}\n", e.what());
    }
    std::fflush(nullptr);
    _exit(rc);
  }
  int status = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(limits.timeout);
  for (;;) {
    const pid_t got = waitpid(pid, &status, limits.timeout > 0 ? WNOHANG : 0);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) break;
    if (limits.timeout > 0 && std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      fmt::print(stderr, "rigel run: error: {}: timed out after {:g} s (--timeout)\n",
                 options.script, limits.timeout);
      return 1;
    }
    if (got == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    fmt::print(stderr, "rigel run: error: {}: the script's process was killed by signal {} ({})\n",
               options.script, sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
    return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

Runner AddRunCommand(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "run",
      "Run a Lua rig script. The script gets `arg` (arg[0] = SCRIPT, arg[1..n] = ARGS, arg.out = "
      "--out) and require(\"rigel\"). Sandboxed unless --allow-io: no os.execute, io.popen, C "
      "modules; files readable only under the paths named on the command line, writable only "
      "under --out, enforced by the kernel where it has Landlock (see rigel --version). Errors "
      "print script:line and a traceback and exit 1.");
  auto options = std::make_shared<lua::RunOptions>();
  auto limits = std::make_shared<RunLimits>();
  auto memory_mb = std::make_shared<int>(0);
  sub->add_option("SCRIPT", options->script, "Lua script (.lua)")->required();
  sub->add_option("--out", options->out_dir,
                  "Output folder (created if missing), writable by the script as arg.out");
  sub->add_flag("--allow-io", options->allow_io,
                "Lift the sandbox: full io/os library and file access anywhere");
  sub->add_option("--memory-mb", *memory_mb,
                  "Address-space limit of the script's process in MB (default min(4096, RAM/2))")
      ->check(CLI::PositiveNumber);
  sub->add_option("--timeout", limits->timeout,
                  "Wall-clock seconds the script may run, then it is killed (default 0: none)")
      ->check(CLI::NonNegativeNumber);
  // Everything after SCRIPT belongs to the script (ARGS...), even "--flags".
  sub->prefix_command();
  sub->footer("ARGS...: passed to the script in `arg`; options for rigel go before SCRIPT.");
  return [options, sub, limits, memory_mb]() {
    limits->memory_mb =
        *memory_mb > 0 ? static_cast<std::size_t>(*memory_mb) : batch::DefaultWorkerMemoryMb(1);
    options->args = sub->remaining();
    const char* env = std::getenv("RIGEL_SCRIPTS");
    options->scripts_dir = (env != nullptr && *env != '\0') ? env : RIGEL_SCRIPTS_DIR;
    std::fflush(stdout);
    const int rc = RunConfined(*options, *limits);
    std::fflush(stdout);
    return rc == 0 ? kExitOk : kExitBadInput;
  };
}

}  // namespace rigel::cli
