// CLI plumbing: each subcommand registers itself on the app and returns the function that runs
// it once the command line has been parsed. Exit codes: 0 success, 1 bad input, 2 usage error.
#ifndef RIGEL_CLI_COMMAND_H_
#define RIGEL_CLI_COMMAND_H_

#include <CLI/CLI.hpp>
#include <functional>

namespace rigel::cli {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;

using Runner = std::function<int()>;

Runner AddInfoCommand(CLI::App& app);
Runner AddConvertCommand(CLI::App& app);
Runner AddRunCommand(CLI::App& app);
Runner AddRetargetCommand(CLI::App& app);
Runner AddBakeCommand(CLI::App& app);
Runner AddPreviewCommand(CLI::App& app);
Runner AddCleanCommand(CLI::App& app);

}  // namespace rigel::cli

#endif  // RIGEL_CLI_COMMAND_H_
