// rigel: headless character rigging kernel. Subcommands: info, convert (run, bake, retarget as
// they land).
#include <cstdio>
#include <map>

#include "cli/command.h"

#ifndef RIGEL_VERSION
#define RIGEL_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
  CLI::App app{"rigel: import, rig, solve and bake character animation, headless."};
  app.set_version_flag("--version", std::string("rigel ") + RIGEL_VERSION);
  app.require_subcommand(1);
  std::map<CLI::App*, rigel::cli::Runner> runners;
  auto add = [&](rigel::cli::Runner (*adder)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    rigel::cli::Runner run = adder(app);
    runners[app.get_subcommands({})[before]] = std::move(run);
  };
  add(rigel::cli::AddInfoCommand);
  add(rigel::cli::AddConvertCommand);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? rigel::cli::kExitOk : rigel::cli::kExitUsage;
  }
  for (auto& [sub, run] : runners) {
    if (sub->parsed()) return run();
  }
  return rigel::cli::kExitUsage;
}
