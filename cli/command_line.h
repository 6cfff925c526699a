// The whole `rigel` command line: every subcommand registered, argv parsed, the chosen one run.
// main() is this function; the Python module runs commands through it in process.
#ifndef RIGEL_CLI_COMMAND_LINE_H_
#define RIGEL_CLI_COMMAND_LINE_H_

namespace rigel::cli {

// Parses `argv` (argv[0] is the program name) and runs the subcommand it names. Returns the exit
// code: 0 success, 1 bad input, 2 usage error (messages on stderr, --help on stdout).
int RunCommandLine(int argc, char** argv);

}  // namespace rigel::cli

#endif  // RIGEL_CLI_COMMAND_LINE_H_
