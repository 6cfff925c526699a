// The rigel command line (cli/command_line.h): every subcommand, parsed and run.
#include "cli/command_line.h"

#include <cstdio>
#include <map>
#include <string>

#include "cli/command.h"
#include "importers/confine.h"

#ifndef RIGEL_VERSION
#define RIGEL_VERSION "0.0.0"
#endif

namespace rigel::cli {

int RunCommandLine(int argc, char** argv) {
  CLI::App app{"rigel: import, rig, solve and bake character animation, headless."};
  // The second line says how scripts and the Assimp loader are confined (docs/security.md).
  app.set_version_flag("--version", std::string("rigel ") + RIGEL_VERSION +
                                        "\nconfinement: " + DescribeConfinement());
  app.require_subcommand(1);
  std::map<CLI::App*, Runner> runners;
  auto add = [&](Runner (*adder)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    Runner run = adder(app);
    runners[app.get_subcommands({})[before]] = std::move(run);
  };
  add(AddInfoCommand);
  add(AddConvertCommand);
  add(AddRunCommand);
  add(AddRetargetCommand);
  add(AddBakeCommand);
  add(AddPreviewCommand);
  add(AddCleanCommand);
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const auto& [sub, run] : runners) {
      found = found || sub->get_name() == argv[1];
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) {
      std::fprintf(stderr, "rigel: unknown command '%s' (expected one of: %s; see rigel --help)\n",
                   argv[1], known.c_str());
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  for (auto& [sub, run] : runners) {
    if (sub->parsed()) return run();
  }
  return kExitUsage;
}

}  // namespace rigel::cli
