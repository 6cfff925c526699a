// rigel bake --rig RIG.lua [--out DIR] [-j N] [--format bvh|...] [--shard K/N] [--resume]
//            [--report FILE.json] INPUTS...
// Bakes every input clip through a Lua rig script, on N threads, each clip in its own Lua state.
//
// The rig script returns a function, called once per clip:
//   return function(scene, clip, ctx) ... return baked_clip [, stats] end
// scene: the input (rigel.Scene); clip: its first clip; ctx: {input=, output=, index=}.
// baked_clip: a rigel.Clip (on the input's skeleton or another); stats: optional solver
// statistics: rig:bake's summary (a rigel.BakeSummary), rigel.bake_summary{...} or a table of
// the same fields. They reach the report as an ik::BakeSummary (lua::ToBakeSummary).
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "bindings/lua/rigel_module.h"
#include "cli/batch/batch.h"
#include "cli/command.h"
#include "cli/frames_output.h"
#include "cli/preview/preview_page.h"
#include "cli/read_options.h"
#include "core/clip_check.h"
#include "exporters/save_scene.h"
#include "importers/confine.h"
#include "importers/load_scene.h"

#ifndef RIGEL_SCRIPTS_DIR
#define RIGEL_SCRIPTS_DIR ""
#endif
#ifndef RIGEL_VERSION
#define RIGEL_VERSION "0.0.0"
#endif

namespace rigel::cli {
namespace {

namespace fs = std::filesystem;

struct BakeConfig {
  std::string rig;
  std::string rig_dir;
  std::string scripts_dir = RIGEL_SCRIPTS_DIR;
  std::string out_dir;
  std::string frames_report_dir;  // --frames-report DIR, or empty
  bool allow_io = false;
  size_t memory_limit = size_t{2} << 30;  // bytes of Lua heap per clip
  double timeout = 0;                     // seconds per clip, 0 = none
  LoadOptions load;                       // the import child's limits
};

// What a bake worker may touch (docs/security.md): read the inputs, the rig script, its folder
// (modules), rigel's scripts/, its own /proc/self/statm (the isolated loader sizes its child's
// memory limit from it) and the time zone files (os.date); read and write --out.
ConfinementRules BakeRules(const BakeConfig& config, const std::vector<batch::Input>& inputs) {
  ConfinementRules rules;
  for (const batch::Input& input : inputs) rules.read_only.push_back(input.path);
  rules.read_only.push_back(config.rig);
  rules.read_only.push_back(config.rig_dir);
  if (!config.scripts_dir.empty()) rules.read_only.push_back(config.scripts_dir);
  rules.read_only.push_back("/proc/self/statm");
  rules.read_only.push_back("/etc/localtime");
  rules.read_only.push_back("/usr/share/zoneinfo");
  rules.read_write.push_back(config.out_dir);
  if (!config.frames_report_dir.empty()) rules.read_write.push_back(config.frames_report_dir);
  return rules;
}

// First line of a Lua error with a traceback: "rig.lua:12: message".
std::string FirstLine(const char* message) {
  if (message == nullptr) return "error object is not a string";
  std::string s(message);
  const size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

// --frames-report: the report (frames_output.h) and, when the script returned no rig:bake
// summary, a warning that it holds the measured evidence only.
void WriteFrames(const BakeConfig& config, const Scene& scene, const std::string& input,
                 const std::string& output, const Skeleton& skeleton, const Clip& clip,
                 std::shared_ptr<const ik::BakeRecords> records, batch::ClipReport* report) {
  WriteFramesReportFor(config.frames_report_dir, scene, input, output, skeleton, clip,
                       records.get(), report);
  if (!records) {
    std::string w = fmt::format(
        "{}: the rig script returned no rig:bake summary: its frames report holds only what was "
        "measured on the output (pop score, foot slide), no solver records",
        config.rig);
    fmt::print(stderr, "rigel bake: warning: {}\n", w);
    report->warnings.push_back(std::move(w));
  }
}

batch::ClipReport BakeOne(const batch::Input& input, const std::string& output,
                          const BakeConfig& config) {
  batch::ClipReport report;
  auto scene = std::make_shared<Scene>(LoadScene(input.path, config.load));
  if (scene->clips.empty()) throw std::runtime_error(input.path + ": no animation to bake");

  lua::StateOptions state_options;
  state_options.module_folders = {config.rig_dir, config.scripts_dir};
  state_options.default_module_path = false;
  state_options.sandbox = !config.allow_io;
  state_options.allowed_paths = {input.path, config.rig};  // read only
  state_options.writable_paths = {config.out_dir};
  state_options.memory_limit = config.memory_limit;
  state_options.timeout = config.timeout;
  state_options.timeout_message =
      fmt::format("clip timed out after {:g} s (--timeout)", config.timeout);
  struct Closer {
    void operator()(lua_State* L) const { lua_close(L); }
  };
  std::unique_ptr<lua_State, Closer> state(lua::NewState(state_options));
  lua_State* L = state.get();
  if (L == nullptr) throw std::runtime_error("cannot create a Lua state");
  // Open the module now (it registers the metatables the clip and scene below need);
  // require("rigel") in the script returns this same table.
  luaL_requiref(L, "rigel", luaopen_rigel, 0);
  lua_pop(L, 1);

  lua_pushcfunction(L, lua::MessageHandler);
  const int handler = lua_gettop(L);
  if (luaL_loadfilex(L, config.rig.c_str(), "t") != LUA_OK) {
    throw std::runtime_error(FirstLine(lua_tostring(L, -1)));
  }
  if (lua_pcall(L, 0, 1, handler) != LUA_OK)
    throw std::runtime_error(FirstLine(lua_tostring(L, -1)));
  if (lua_istable(L, -1)) lua_getfield(L, -1, "bake");
  if (!lua_isfunction(L, -1)) {
    throw std::runtime_error(fmt::format(
        "{}: the rig script must return a function(scene, clip, ctx) (or a table with a 'bake' "
        "function), returned {}",
        config.rig, luaL_typename(L, -1)));
  }
  const int fn = lua_gettop(L);
  lua_pushvalue(L, fn);
  lua::PushScene(L, scene);
  lua::PushClip(L, scene->skeleton, std::shared_ptr<Clip>(scene, &scene->clips.front()));
  lua_createtable(L, 0, 3);
  lua_pushstring(L, input.path.c_str());
  lua_setfield(L, -2, "input");
  lua_pushstring(L, output.c_str());
  lua_setfield(L, -2, "output");
  if (lua_pcall(L, 3, 2, handler) != LUA_OK)
    throw std::runtime_error(FirstLine(lua_tostring(L, -1)));
  const int result = lua_gettop(L) - 1;
  std::shared_ptr<const Skeleton> skeleton_ptr;
  std::shared_ptr<const Clip> clip_ptr;
  if (!lua::ToClip(L, result, &skeleton_ptr, &clip_ptr)) {
    throw std::runtime_error(fmt::format("{}: the bake function must return a Clip, returned {}",
                                         config.rig, luaL_typename(L, result)));
  }
  const Skeleton& skeleton = *skeleton_ptr;
  const Clip& clip = *clip_ptr;
  // The one clip validator (core/clip_check.h): a clip that does not fit its skeleton, or a
  // solver that produced a non-finite value, never reaches a file.
  std::string error;
  if (const std::optional<ClipFault> fault = CheckClip(skeleton, clip)) {
    throw std::runtime_error("the returned clip: " + DescribeClipFault(*fault, skeleton, clip) +
                             ": nothing written");
  }
  if (!lua_isnil(L, result + 1) && !lua::ToBakeSummary(L, result + 1, &report.solver, &error)) {
    throw std::runtime_error(fmt::format("{}: {}", config.rig, error));
  }
  SaveClip(skeleton, clip, output);
  report.frames = clip.num_frames();
  if (!config.frames_report_dir.empty()) {
    WriteFrames(config, *scene, input.path, output, skeleton, clip,
                lua_isnil(L, result + 1) ? nullptr : lua::ToBakeRecords(L, result + 1), &report);
  }
  if (std::string w = ExtraTakesWarning(*scene, input.path, "baked"); !w.empty()) {
    fmt::print(stderr, "rigel bake: warning: {}\n", w);
    report.warnings.push_back(std::move(w));
  }
  return report;
}

}  // namespace

Runner AddBakeCommand(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "bake",
      "Bake clips through a Lua rig script, in parallel. Inputs are files, folders (searched "
      "recursively by extension) or @list.txt files. Exit 0 when every clip succeeds, 1 when any "
      "failed, 2 on usage errors.");
  struct Options {
    std::string rig, out = "out", format = "bvh", shard, report, timeout, preview, frames_report;
    int jobs = 0;
    bool resume = false, allow_io = false, progress = false, no_progress = false;
    std::vector<std::string> inputs, merge;
    double clip_timeout = 0;
    int lua_memory_mb = 2048;
    int workers = -1;   // -1: -j worker processes; 0: threads of this process
    int memory_mb = 0;  // 0: DefaultWorkerMemoryMb
    int import_memory_mb = 4096;
    double import_timeout = 300;
    ReadArgs read;  // --bvh-translation, --unit-in
  };
  auto o = std::make_shared<Options>();
  sub->add_option("--rig", o->rig, "Rig script (Lua) that bakes one clip");
  sub->add_option("--out", o->out, "Output folder (default: out)");
  sub->add_option("-j,--jobs", o->jobs, "Worker threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"bvh", "glb", "gltf", "fbx"}));
  sub->add_option("--shard", o->shard, "Only shard K of N (K/N, 0 <= K < N), for farms");
  sub->add_flag("--resume", o->resume,
                "Skip outputs whose manifest matches input, rig and version");
  sub->add_option(
      "--report", o->report,
      "Write a JSON report (per clip: status, reason, frames, seconds, solver statistics)");
  sub->add_option("--merge-reports", o->merge, "Merge shard reports into --report and exit")
      ->expected(1, -1);
  sub->add_option("--timeout", o->clip_timeout, "Seconds a clip's script may run (0 = no limit)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--lua-memory-mb", o->lua_memory_mb,
                  "Lua heap limit per clip in MB (default 2048)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--workers", o->workers,
                  "0: run clips on threads of this process (no memory limit, no crash isolation; "
                  "for benchmarks). Default: -j worker processes")
      ->check(CLI::Range(0, 0));
  sub->add_option("--memory-mb", o->memory_mb,
                  "Address-space limit per worker process in MB (default min(4096, RAM/(2 x "
                  "workers)))")
      ->check(CLI::PositiveNumber);
  sub->add_option("--import-memory-mb", o->import_memory_mb,
                  "Memory limit of the import child per FBX/glTF/DAE file in MB (default 4096)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--import-timeout", o->import_timeout,
                  "Seconds the import child may take per FBX/glTF/DAE file (default 300)")
      ->check(CLI::PositiveNumber);
  AddReadOptions(sub, &o->read);
  sub->add_option("--preview", o->preview, "Also write a page per clip + index.html in DIR");
  sub->add_option("--frames-report", o->frames_report,
                  "Also write DIR/<clip>.frames.jsonl per clip: each frame's solve (status, "
                  "iterations, residual and target per effector, limits, swivel jump) and the pop "
                  "score and foot slide measured on the output (docs/preview.md)");
  sub->add_flag("--allow-io", o->allow_io, "Lift the script sandbox");
  sub->add_flag("--no-progress", o->no_progress, "No progress bar even on a terminal");
  sub->add_option("INPUTS", o->inputs, "Clips: files, folders or @list.txt");
  return [o]() {
    try {
      if (!o->merge.empty()) {
        if (o->report.empty()) throw batch::UsageError("--merge-reports needs --report OUT.json");
        const nlohmann::json merged = batch::MergeReports(o->merge);
        WriteFileAtomically(
            o->report, merged.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
        return kExitOk;
      }
      if (o->rig.empty()) throw batch::UsageError("--rig RIG.lua is required");
      if (o->inputs.empty()) throw batch::UsageError("no INPUTS given");
      if (!fs::is_regular_file(o->rig)) throw batch::UsageError(o->rig + ": no such rig script");
      std::vector<batch::Input> inputs = batch::CollectInputs(o->inputs, ReadableExtensions());
      if (!o->shard.empty()) inputs = batch::SelectShard(inputs, batch::ParseShard(o->shard));

      BakeConfig config;
      config.rig = o->rig;
      config.rig_dir = fs::weakly_canonical(fs::absolute(o->rig)).parent_path().string();
      config.out_dir = o->out;
      config.frames_report_dir = o->frames_report;
      if (!o->frames_report.empty()) {
        std::error_code ec;
        fs::create_directories(o->frames_report, ec);
        if (!fs::is_directory(o->frames_report, ec)) {
          throw batch::UsageError("--frames-report " + o->frames_report +
                                  ": cannot create the folder");
        }
      }
      config.allow_io = o->allow_io;
      config.timeout = o->clip_timeout;
      config.memory_limit = static_cast<size_t>(o->lua_memory_mb) << 20;
      config.load.memory_limit_mib = static_cast<size_t>(o->import_memory_mb);
      config.load.time_limit_seconds = o->import_timeout;
      config.load = ApplyReadArgs(o->read, config.load);

      batch::RunOptions run;
      run.out_dir = o->out;
      run.extension = "." + o->format;
      run.jobs = o->jobs;
      run.resume = o->resume;
      run.recipe.version = RIGEL_VERSION;
      run.recipe.recipe_hash = batch::HashBytes(batch::HashFile(o->rig) + "|" + o->format + "|" +
                                                o->read.bvh_translation + "|" + o->read.unit_in);
      run.progress = !o->no_progress && isatty(STDERR_FILENO);
      run.command = "bake";
      run.processes = o->workers != 0;
      if (run.processes) {
        const int workers =
            o->jobs > 0 ? o->jobs
                        : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        run.memory_mb = o->memory_mb > 0
                            ? static_cast<size_t>(o->memory_mb)
                            : batch::DefaultWorkerMemoryMb(std::min<int>(
                                  workers, static_cast<int>(std::max<size_t>(1, inputs.size()))));
        run.timeout = o->clip_timeout;
        if (!o->allow_io) {
          if (ProbeConfinement().kind == ConfinementKind::kNone) {
            fmt::print(stderr, "rigel bake: warning: confinement: {}\n", DescribeConfinement());
          }
          // The workers start after batch::Run has created --out (a rule needs the folder).
          run.worker_setup = [rules = BakeRules(config, inputs)] { ConfineCurrentThread(rules); };
        }
      }
      const std::vector<batch::ClipReport> reports =
          batch::Run(inputs, run, [&config](const batch::Input& input, const std::string& output) {
            return BakeOne(input, output, config);
          });
      int failed = 0;
      for (const batch::ClipReport& r : reports) {
        if (r.status == "failed") {
          ++failed;
          // Reasons from importers already start with the file name.
          if (r.reason.rfind(r.input, 0) == 0) {
            fmt::print(stderr, "rigel bake: failed: {}\n", r.reason);
          } else {
            fmt::print(stderr, "rigel bake: failed: {}: {}\n", r.input, r.reason);
          }
        }
      }
      if (!o->preview.empty()) failed += preview::WritePreviewPages(o->preview, reports, "bake");
      if (!o->report.empty())
        WriteFileAtomically(o->report,
                            batch::ReportJson(reports, run)
                                    .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                                "\n");
      return failed ? kExitBadInput : kExitOk;
    } catch (const batch::UsageError& e) {
      fmt::print(stderr, "rigel bake: error: {}\n", e.what());
      return kExitUsage;
    } catch (const std::exception& e) {
      fmt::print(stderr, "rigel bake: error: {}\n", e.what());
      return kExitBadInput;
    }
  };
}

}  // namespace rigel::cli
