// rigel run SCRIPT [ARGS...]: runs a Lua rig script with the `rigel` module, sandboxed.
//
// Without --allow-io the script runs in a child process that the kernel confines (Landlock, see
// importers/confine.h and docs/security.md) to reading the script, its folder, rigel's scripts/
// and the ARGS, and to reading and writing --out; the Lua sandbox (bindings/lua/sandbox.h)
// checks the same paths first and gives the clear messages. The parent reports a crash of the
// child by its signal.
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "bindings/lua/rigel_module.h"
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

// Runs the script in a confined child; returns its exit code (0 or 1).
int RunConfined(const lua::RunOptions& options) {
  if (ProbeConfinement().kind == ConfinementKind::kNone) {
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
    try {
      ConfineCurrentThread(ScriptRules(options));
      rc = lua::RunScript(options, stderr);
    } catch (const std::exception& e) {
      fmt::print(stderr, "rigel run: error: {}\n", e.what());
    }
    std::fflush(nullptr);
    _exit(rc);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
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
  sub->add_option("SCRIPT", options->script, "Lua script (.lua)")->required();
  sub->add_option("--out", options->out_dir,
                  "Output folder (created if missing), writable by the script as arg.out");
  sub->add_flag("--allow-io", options->allow_io,
                "Lift the sandbox: full io/os library and file access anywhere");
  // Everything after SCRIPT belongs to the script (ARGS...), even "--flags".
  sub->prefix_command();
  sub->footer("ARGS...: passed to the script in `arg`; options for rigel go before SCRIPT.");
  return [options, sub]() {
    options->args = sub->remaining();
    const char* env = std::getenv("RIGEL_SCRIPTS");
    options->scripts_dir = (env != nullptr && *env != '\0') ? env : RIGEL_SCRIPTS_DIR;
    std::fflush(stdout);
    const int rc = options->allow_io ? lua::RunScript(*options, stderr) : RunConfined(*options);
    std::fflush(stdout);
    return rc == 0 ? kExitOk : kExitBadInput;
  };
}

}  // namespace rigel::cli
