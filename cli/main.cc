// rigel: headless character rigging kernel. Subcommands: info, convert, run, bake, retarget,
// preview, clean (cli/command_line.cc).
#include "cli/command_line.h"

int main(int argc, char** argv) { return rigel::cli::RunCommandLine(argc, argv); }
