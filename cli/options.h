// The options every batch command (rigel bake, rigel retarget) shares: where and in which format
// the results go, worker threads, the shard, resuming, the JSON report, the preview pages and the
// progress bar; and what they make of them (the inputs of the shard, batch::RunOptions).
#ifndef RIGEL_CLI_OPTIONS_H_
#define RIGEL_CLI_OPTIONS_H_

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/batch/batch.h"
#include "importers/load_scene.h"

#ifndef RIGEL_VERSION
#define RIGEL_VERSION "0.0.0"
#endif

namespace rigel::cli {

// Values of the shared batch options, as parsed.
struct BatchArgs {
  std::string out;  // output folder; each command gives its default
  std::string format = "bvh";
  int jobs = 0;  // 0: one worker per core
  std::string shard;
  bool resume = false;
  std::string report;
  std::string preview;
  bool no_progress = false;
};

// The help texts that differ between the batch commands.
struct BatchHelp {
  const char* out;     // --out, with its default
  const char* resume;  // --resume: what a manifest must match
  const char* report;  // --report: what the report holds
};

// Registers --out, --format, -j/--jobs, --shard, --resume, --report, --preview and --no-progress
// on `sub`, storing into `args` (which must outlive the parse).
inline void AddBatchOptions(CLI::App* sub, BatchArgs* args, const BatchHelp& help) {
  sub->add_option("--out", args->out, help.out);
  sub->add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"bvh", "glb", "gltf", "fbx"}));
  sub->add_option("-j,--jobs", args->jobs, "Worker threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--shard", args->shard, "Only shard K of N (K/N, 0 <= K < N), for farms");
  sub->add_flag("--resume", args->resume, help.resume);
  sub->add_option("--report", args->report, help.report);
  sub->add_option("--preview", args->preview, "Also write a page per clip + index.html in DIR");
  sub->add_flag("--no-progress", args->no_progress, "No progress bar even on a terminal");
}

// The readable clips named by `paths` (files, folders, @lists), only those of --shard when given.
// Throws batch::UsageError.
inline std::vector<batch::Input> CollectShardInputs(const BatchArgs& args,
                                                    const std::vector<std::string>& paths) {
  std::vector<batch::Input> inputs = batch::CollectInputs(paths, ReadableExtensions());
  if (!args.shard.empty()) inputs = batch::SelectShard(inputs, batch::ParseShard(args.shard));
  return inputs;
}

// The batch run `args` ask for, for `command` (named in messages and reports): the output folder
// and extension, workers, resume, this version, and a progress bar on a terminal unless
// --no-progress. The recipe hash is the command's to fill.
inline batch::RunOptions MakeRunOptions(const BatchArgs& args, const char* command) {
  batch::RunOptions run;
  run.out_dir = args.out;
  run.extension = "." + args.format;
  run.jobs = args.jobs;
  run.resume = args.resume;
  run.recipe.version = RIGEL_VERSION;
  run.progress = !args.no_progress && isatty(STDERR_FILENO);
  run.command = command;
  return run;
}

}  // namespace rigel::cli

#endif  // RIGEL_CLI_OPTIONS_H_
