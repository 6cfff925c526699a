// rigel run SCRIPT [ARGS...]: runs a Lua rig script with the `rigel` module, sandboxed.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "bindings/lua/rigel_module.h"
#include "cli/command.h"

#ifndef RIGEL_SCRIPTS_DIR
#define RIGEL_SCRIPTS_DIR ""
#endif

namespace rigel::cli {

Runner AddRunCommand(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "run",
      "Run a Lua rig script. The script gets `arg` (arg[0] = SCRIPT, arg[1..n] = ARGS, arg.out = "
      "--out) and require(\"rigel\"). Sandboxed unless --allow-io: no os.execute, io.popen, C "
      "modules; files only under the paths named on the command line and --out. Errors print "
      "script:line and a traceback and exit 1.");
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
    const int rc = lua::RunScript(*options, stderr);
    std::fflush(stdout);
    return rc == 0 ? kExitOk : kExitBadInput;
  };
}

}  // namespace rigel::cli
