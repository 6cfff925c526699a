// rigel bake --rig RIG.lua [--out DIR] [-j N] [--format bvh|...] [--shard K/N] [--resume]
//            [--report FILE.json] INPUTS...
// Bakes every input clip through a Lua rig script, in -j N worker processes (or threads with
// --workers 0), each clip in its own Lua state.
//
// The rig script returns a function, called once per take of each input (each call in a fresh Lua
// state):
//   return function(scene, clip, ctx) ... return baked_clip [, stats] end
// scene: the input (rigel.Scene); clip: the take; ctx: {input=, output= (the file the take goes
// to), take= (its name), take_index= (1-based), takes= (how many are baked)}.
// baked_clip: a rigel.Clip (on the input's skeleton or another); stats: optional solver
// statistics: rig:bake's summary (a rigel.BakeSummary), rigel.bake_summary{...} or a table of
// the same fields. They reach the report as an ik::BakeSummary (lua::ToBakeSummary).
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>

#include "bindings/lua/rigel_module.h"
#include "cli/batch/batch.h"
#include "cli/batch/takes.h"
#include "cli/checks_output.h"
#include "cli/command.h"
#include "cli/format_help.h"
#include "cli/frames_output.h"
#include "cli/preview/preview_page.h"
#include "cli/read_options.h"
#include "cli/reduce_keys.h"
#include "core/clip_check.h"
#include "core/pose.h"
#include "core/skeleton_edit.h"
#include "core/skeleton_utils.h"
#include "exporters/save_scene.h"
#include "importers/bvh_reader.h"
#include "importers/confine.h"
#include "importers/load_scene.h"
#include "io/file_format.h"

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
  std::string take;                       // --take NAME, or empty: every take
  bool strict = false;                    // --strict: a suspect output is a failed clip
  ReduceArgs reduce;                      // --reduce-keys (cli/reduce_keys.h)
  // The file id (FileIdentity) of each of `inputs` (sorted by path) when the batch started: a
  // worker's Landlock rule is bound to that file, so one replaced since (a new inode) is named as
  // changed, not "Permission denied". 8 bytes an input (a map by path took about 150).
  const batch::InputList* inputs = nullptr;
  std::vector<std::uint64_t> input_ids;
};

// The input's file id (st_dev, st_ino) as one number (a hash of the two), or 0 when it cannot be
// stat'ed. Two files of one number (odds 2^-64) would only lose the "replaced" message.
std::uint64_t FileIdentity(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return 0;
  const std::pair<std::uint64_t, std::uint64_t> id{st.st_dev, st.st_ino};
  return std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(&id), sizeof id));
}

// LoadScene, and when it fails on an input that was replaced since the batch started, says so.
Scene LoadInput(const batch::Input& input, const BakeConfig& config) {
  try {
    return LoadScene(input.path, config.load);
  } catch (const std::exception&) {
    const batch::InputList& all = *config.inputs;
    std::size_t k = 0;  // the first input whose path is not before input.path
    for (std::size_t n = all.size(); n > 0;) {
      const std::size_t half = n / 2;
      if (all.path(k + half) < input.path) {
        k += half + 1;
        n -= half + 1;
      } else {
        n = half;
      }
    }
    if (k < all.size() && all.path(k) == input.path && k < config.input_ids.size() &&
        config.input_ids[k] != FileIdentity(input.path)) {
      throw std::runtime_error(input.path +
                               ": the file was replaced during the batch (it is another file "
                               "now); bake it again to read its new content");
    }
    throw;
  }
}

// What a bake worker may touch (docs/security.md): read the inputs, the rig script, its folder
// (modules), rigel's scripts/, its own /proc/self/statm (the isolated loader sizes its child's
// memory limit from it) and the time zone files (os.date); read and write --out.
ConfinementRules BakeRules(const BakeConfig& config, const batch::InputList& inputs) {
  ConfinementRules rules;
  for (std::size_t i = 0; i < inputs.size(); ++i) rules.read_only.push_back(inputs.path(i));
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
                 const std::string& output, const std::string& take_suffix,
                 const Skeleton& skeleton, const Clip& clip,
                 std::shared_ptr<const ik::BakeRecords> records, batch::ClipReport* report) {
  WriteFramesReportFor(config.frames_report_dir, scene, input, output, take_suffix, skeleton, clip,
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

// What the rig script made of one take.
struct TakeResult {
  std::shared_ptr<const Skeleton> skeleton;
  std::shared_ptr<const Clip> clip;
  bool has_summary = false;
  ik::BakeSummary solver;
  std::shared_ptr<const ik::BakeRecords> records;
};

// What CallRig needs, as plain pointers (no C++ object is made inside it: a Lua error longjmps).
struct RigCall {
  const char* rig;
  const std::shared_ptr<Scene>* scene;
  const std::shared_ptr<Clip>* clip;
  const char* input;
  const char* output;
  const char* take;
  lua_Integer take_number, takes;
};

// The text of the error value at `idx` (a string, or what __tostring makes of it).
const char* ErrorText(lua_State* L, int idx) {
  if (const char* text = lua_tostring(L, idx)) return text;
  return "error object is not a string";
}

// Runs in protected mode (lua_pcall): loads and runs the rig script, finds its bake function
// (a table's 'bake' field may run an __index that raises) and calls it with scene, clip, ctx;
// returns its two results. Every Lua error, the script's or an allocation's, is the clip's error.
int CallRig(lua_State* L) {
  const auto* c = static_cast<const RigCall*>(lua_touserdata(L, 1));
  // Open the module now (it registers the metatables the clip and scene below need);
  // require("rigel") in the script returns this same table.
  luaL_requiref(L, "rigel", luaopen_rigel, 0);
  lua_pop(L, 1);
  lua_pushcfunction(L, lua::MessageHandler);
  const int handler = lua_gettop(L);
  if (luaL_loadfilex(L, c->rig, "t") != LUA_OK) return lua_error(L);
  if (lua_pcall(L, 0, 1, handler) != LUA_OK) return lua_error(L);
  if (lua_istable(L, -1)) lua_getfield(L, -1, "bake");
  if (!lua_isfunction(L, -1)) {
    return luaL_error(L,
                      "%s: the rig script must return a function(scene, clip, ctx) (or a table "
                      "with a 'bake' function), returned %s",
                      c->rig, luaL_typename(L, -1));
  }
  lua::PushScene(L, *c->scene);
  lua::PushClip(L, (*c->scene)->skeleton, *c->clip);
  lua_createtable(L, 0, 5);
  lua_pushstring(L, c->input);
  lua_setfield(L, -2, "input");
  lua_pushstring(L, c->output);
  lua_setfield(L, -2, "output");
  lua_pushstring(L, c->take);
  lua_setfield(L, -2, "take");
  lua_pushinteger(L, c->take_number);
  lua_setfield(L, -2, "take_index");
  lua_pushinteger(L, c->takes);
  lua_setfield(L, -2, "takes");
  if (lua_pcall(L, 3, 2, handler) != LUA_OK) return lua_error(L);
  return 2;
}

// Runs the rig script on take `take` of `scene`, in a Lua state of its own (limits per take).
// `output` is the file the take goes to (ctx.output). Throws with the script's error.
TakeResult RunRig(const batch::Input& input, const std::shared_ptr<Scene>& scene, std::size_t take,
                  std::size_t take_number, std::size_t takes, const std::string& output,
                  const BakeConfig& config) {
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
  std::shared_ptr<Clip> take_clip(scene, &scene->clips[take]);
  RigCall call{config.rig.c_str(),
               &scene,
               &take_clip,
               input.path.c_str(),
               output.c_str(),
               scene->clips[take].name().c_str(),
               static_cast<lua_Integer>(take_number),
               static_cast<lua_Integer>(takes)};
  lua_pushcfunction(L, CallRig);
  lua_pushlightuserdata(L, &call);
  if (lua_pcall(L, 1, 2, 0) != LUA_OK) throw std::runtime_error(FirstLine(ErrorText(L, -1)));
  const int result = lua_gettop(L) - 1;
  TakeResult out;
  if (!lua::ToClip(L, result, &out.skeleton, &out.clip)) {
    throw std::runtime_error(fmt::format("{}: the bake function must return a Clip, returned {}",
                                         config.rig, luaL_typename(L, result)));
  }
  // The one clip validator (core/clip_check.h): a clip that does not fit its skeleton, or a
  // solver that produced a non-finite value, never reaches a file.
  if (const std::optional<ClipFault> fault = CheckClip(*out.skeleton, *out.clip)) {
    throw std::runtime_error(
        "the returned clip: " + DescribeClipFault(*fault, *out.skeleton, *out.clip) +
        ": nothing written");
  }
  if (!lua_isnil(L, result + 1)) {
    std::string error;
    if (!lua::ToBakeSummary(L, result + 1, &out.solver, &error)) {
      throw std::runtime_error(fmt::format("{}: {}", config.rig, error));
    }
    out.has_summary = true;
    out.records = lua::ToBakeRecords(L, result + 1);
  }
  return out;
}

// Metres per unit of a baked clip's skeleton: the input's unit (stated, or estimated with the
// input's own warning) when the clip is on the input's skeleton; otherwise (a skeleton the script
// loaded or built) estimated from the figure's height at frame 1, with a warning in `warnings`.
// glTF is written in metres and FBX states its unit from it (exporters/save_scene.h).
double OutputUnit(const Scene& input, const TakeResult& result, const std::string& rig,
                  std::vector<std::string>* warnings) {
  // A skeleton the script edited (core/skeleton_edit.h) keeps the input's lengths.
  if (EditedFrom(result.skeleton, *input.skeleton)) return MetresPerUnitOrEstimate(input);
  const Skeleton& skeleton = *result.skeleton;
  if (result.clip->num_frames() == 0) return 0.0;
  double height = 0.0;
  const double unit = EstimateUnitFromFrame(skeleton, result.clip->frame(0), &height);
  warnings->push_back(
      unit > 0 ? fmt::format("{}: the baked clip is on another skeleton than the input's; its "
                             "length unit is estimated {} from the figure's height ({:.4g} units)",
                             rig, UnitLabel(unit), height)
               : fmt::format("{}: the baked clip is on another skeleton than the input's and its "
                             "length unit cannot be estimated: written in its own units",
                             rig));
  return unit;
}

// Whether two skeletons are the same rig: joints, parents, channels and rest transforms.
bool SameRig(const Skeleton& a, const Skeleton& b) {
  if (&a == &b) return true;
  if (a.num_joints() != b.num_joints() || a.num_channels() != b.num_channels()) return false;
  for (int j = 0; j < a.num_joints(); ++j) {
    if (a.name(j) != b.name(j) || a.parent(j) != b.parent(j) ||
        a.rest_translation(j) != b.rest_translation(j) ||
        a.rest_orientation(j).coeffs() != b.rest_orientation(j).coeffs() ||
        a.channel_count(j) != b.channel_count(j)) {
      return false;
    }
  }
  for (int c = 0; c < a.num_channels(); ++c) {
    if (a.channels()[c] != b.channels()[c]) return false;
  }
  return true;
}

// The plausibility checks of a baked take (core/check): the input's take against the baked clip,
// which is in the input's axes and in `metres_per_unit` (the unit it is written in).
check::CheckReport CheckBake(const Scene& input, const Clip& take, const TakeResult& result,
                             double metres_per_unit) {
  check::PlausibilityJob job;
  job.kind = check::OutputKind::kBake;
  job.source = CheckSideOf(input, *input.skeleton, take);
  // A clip on a skeleton the script edited (joints added or renamed) is checked on the input's
  // joints, paired with the source joint for joint; the added joints are the script's own.
  Clip on_source;
  const bool projected = ClipOnSource(result.skeleton, *result.clip, *input.skeleton, &on_source);
  job.output = projected ? CheckSideOf(input, *input.skeleton, on_source)
                         : CheckSideOf(input, *result.skeleton, *result.clip);
  job.output.metres_per_unit = metres_per_unit;
  const double a = job.source.metres_per_unit;
  job.scale = a > 0 && metres_per_unit > 0 ? a / metres_per_unit : 1.0;
  return job.Run();
}

// The checks of every baked take, recorded in its row (ApplyChecks; with `strict` a suspect
// throws), with the seconds they took.
void CheckTakes(const std::string& path, const Scene& scene, const std::vector<std::size_t>& picked,
                const std::vector<TakeResult>& results, double metres_per_unit, bool strict,
                std::vector<batch::ClipReport>* rows) {
  for (std::size_t k = 0; k < results.size(); ++k) {
    const auto start = std::chrono::steady_clock::now();
    batch::ClipReport& row = (*rows)[k];
    const std::string where =
        results.size() > 1 ? fmt::format("{} (take '{}')", path, row.take) : path;
    ApplyChecks(CheckBake(scene, scene.clips[picked[k]], results[k], metres_per_unit), "bake",
                where, strict, &row);
    row.checks["seconds"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
}

// Runs the rig on each picked take, a report row per take (take name, output, frames, solver
// statistics, script seconds). With several takes an error names the take.
std::vector<TakeResult> RunTakes(const batch::Input& input, const std::shared_ptr<Scene>& scene,
                                 const std::vector<std::size_t>& picked, bool split,
                                 const std::vector<std::string>& safe, const std::string& output,
                                 const BakeConfig& config, std::vector<batch::ClipReport>& rows) {
  const bool several = picked.size() > 1;
  std::vector<TakeResult> results;
  for (std::size_t k = 0; k < picked.size(); ++k) {
    const auto start = std::chrono::steady_clock::now();
    const std::string& name = scene->clips[picked[k]].name();
    batch::ClipReport row;
    row.take = scene->clips.size() > 1 ? name : "";
    row.output = split ? batch::TakeOutputPath(output, safe[k]) : output;
    try {
      results.push_back(RunRig(input, scene, picked[k], k + 1, picked.size(), row.output, config));
    } catch (const std::exception& e) {
      if (!several) throw;
      throw std::runtime_error(fmt::format("take '{}': {}", name, e.what()));
    }
    row.frames = results.back().clip->num_frames();
    row.solver = results.back().solver;
    row.phases.script = batch::SecondsSince(start);
    row.seconds = row.phases.script;
    rows.push_back(std::move(row));
  }
  return results;
}

// The input's meshes move with the baked clip when it is on the input's skeleton or an edit of
// it (joint indices mapped into *meshes, which save points at; a mesh on a removed joint is not
// written); else a note says they are not written.
void CarryMeshes(const std::string& path, const Scene& scene, bool edited, const TakeResult& first,
                 const std::string& output, std::vector<Mesh>& meshes, SaveOptions& save,
                 std::vector<std::string>& notes) {
  std::string mesh_error;
  if (scene.meshes.empty()) return;
  if (edited && MeshesOnEdit(scene.meshes, *scene.skeleton, first.skeleton, &meshes, &mesh_error)) {
    save.meshes = meshes;
    for (std::string& w : DroppedBy(output, scene.meshes.size(), 1, CountMorphTargets(scene.meshes),
                                    CountPolygons(scene.meshes))) {
      notes.push_back(std::move(w));
    }
  } else {
    notes.push_back(
        fmt::format("{}: {} mesh{} of the input not written: {}", path, scene.meshes.size(),
                    scene.meshes.size() == 1 ? "" : "es",
                    mesh_error.empty() ? "the baked clip is on another skeleton" : mesh_error));
  }
}

// Writes the baked takes (nothing unless every take baked; a failed write removes what this
// input wrote): one file, or a BVH file per take.
void WriteBakeOutputs(const std::string& path, const std::string& output, bool split,
                      const Scene& scene, const std::vector<std::size_t>& picked,
                      const std::vector<TakeResult>& results, std::vector<batch::ClipReport>& rows,
                      const SaveOptions& save) {
  const bool several = picked.size() > 1;
  batch::WriteTakeOutputs(
      "bake", path, split, rows,
      [&] {
        const Skeleton& skeleton = *results.front().skeleton;
        if (!several) {  // the clip as the script returned it, not a copy
          SaveClips(skeleton, std::span<const Clip>(results.front().clip.get(), 1), output, save);
          return;
        }
        std::vector<Clip> clips;
        for (std::size_t k = 0; k < results.size(); ++k) {
          if (!SameRig(skeleton, *results[k].skeleton)) {
            throw std::runtime_error(fmt::format(
                "take '{}' was baked onto another skeleton than take '{}': one {} file holds one "
                "skeleton (bake to .bvh, a file per take, or pick a take with --take)",
                rows[k].take, rows.front().take, LowerExtension(output)));
          }
          clips.push_back(*results[k].clip);
          clips.back().set_name(scene.clips[picked[k]].name());  // each take keeps its name
        }
        SaveClips(skeleton, clips, output, save);
      },
      [&](std::size_t k) {
        SaveClip(*results[k].skeleton, *results[k].clip, rows[k].output);  // BVH: no unit, mesh
      });
}

// Bakes every take of one input (or the one --take names). One take: one output, one report row.
// Several: BVH writes a file per take (OUTPUT stem + "." + take), glTF and FBX one file holding
// every take; the report has a row per take. Nothing is written unless every take baked.
batch::ClipReport BakeOne(const batch::Input& input, const std::string& output,
                          const BakeConfig& config) {
  using Clock = std::chrono::steady_clock;
  const auto read_start = Clock::now();
  auto scene = std::make_shared<Scene>(LoadInput(input, config));
  const double read_seconds = batch::SecondsSince(read_start);
  if (scene->clips.empty()) throw std::runtime_error(input.path + ": no animation to bake");
  const std::vector<std::size_t> picked = batch::SelectTakes(*scene, config.take, input.path);
  const bool several = picked.size() > 1;
  const bool split = several && OneTakePerFile(output);  // BVH: one take per file
  const std::vector<std::string> safe = batch::FileSafeTakeNames(batch::TakeNames(*scene, picked));
  std::vector<batch::ClipReport> rows;
  const std::vector<TakeResult> results =
      RunTakes(input, scene, picked, split, safe, output, config, rows);
  // Units: glTF in metres, FBX stating its unit (the input's, or estimated for another skeleton).
  // Nothing silent: the input's own warnings (a guessed unit or convention) come first.
  std::vector<std::string> notes = scene->warnings;
  SaveOptions save;
  save.metres_per_unit = OutputUnit(*scene, results.front(), config.rig, &notes);
  // --reduce-keys: in the output's unit (as written), or the input's estimate when unknown.
  const std::optional<KeyReductionOptions> reduction =
      ReductionOf(config.reduce, save.metres_per_unit > 0 ? save.metres_per_unit
                                                          : MetresPerUnitOrEstimate(*scene));
  std::vector<ClipKeys> keys;
  if (reduction) {
    save.reduce = &*reduction;
    save.reduced = &keys;
    if (std::string w = ReductionDroppedBy(output); !w.empty()) notes.push_back(std::move(w));
  }
  // A clip on the input's skeleton is in the input's axes (glTF is turned +Y up, FBX states them).
  // So is a clip on a skeleton the script edited from it (core/skeleton_edit.h).
  const bool edited = EditedFrom(results.front().skeleton, *scene->skeleton);
  if (edited) save.axes = scene->axes;
  std::vector<Mesh> meshes;
  CarryMeshes(input.path, *scene, edited, results.front(), output, meshes, save, notes);
  // Bone scale a format cannot hold (BVH: animated or non-uniform scale), named per joint.
  {
    std::vector<Clip> clips;
    if (results.front().skeleton->has_scale()) {
      for (const TakeResult& r : results) clips.push_back(*r.clip);
    }
    for (std::string& w : SkeletonDroppedBy(output, *results.front().skeleton, clips)) {
      notes.push_back(std::move(w));
    }
  }
  if (std::string w = AxesDroppedBy(output, scene->axes); !w.empty()) notes.push_back(std::move(w));
  for (const std::string& w : notes) {
    fmt::print(stderr, "rigel bake: warning: {}\n", w);
    rows.front().warnings.push_back(w);
  }
  // Judged before anything is written (--strict writes nothing for a suspect).
  CheckTakes(input.path, *scene, picked, results, save.metres_per_unit, config.strict, &rows);
  WriteBakeOutputs(input.path, output, split, *scene, picked, results, rows, save);
  for (std::size_t k = 0; k < keys.size() && k < rows.size(); ++k) {
    rows[k].keys = KeysJson(keys[k], config.reduce);
  }
  for (std::size_t k = 0; k < results.size(); ++k) {
    if (config.frames_report_dir.empty()) continue;
    const auto report_start = Clock::now();
    WriteFrames(config, *scene, input.path, rows[k].output, several && !split ? safe[k] : "",
                *results[k].skeleton, *results[k].clip, results[k].records, &rows[k]);
    rows[k].phases.report = batch::SecondsSince(report_start);
    rows[k].seconds += rows[k].phases.report;
  }
  return batch::InputReport(std::move(rows), read_seconds);
}

// What `rigel bake` is told.
struct BakeArgs {
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
  ReadArgs read;  // --bvh-translation, --unit-in, --up, --forward
  std::string take;
  bool strict = false;
  ReduceArgs reduce;
};

void AddBakeOptions(CLI::App* sub, BakeArgs* o) {
  sub->add_option("--rig", o->rig, "Rig script (Lua) that bakes one clip");
  sub->add_option("--out", o->out, "Output folder (default: out)");
  sub->add_option("-j,--jobs", o->jobs, "Worker processes (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember(WritableFormatNames()));
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
  sub->add_option(
      "--take", o->take,
      "Bake only the take of this name (default: every take; " + TakesPerFileHelp("INPUT") + ")");
  sub->add_option("--preview", o->preview, "Also write a page per clip + index.html in DIR");
  sub->add_option("--frames-report", o->frames_report,
                  "Also write DIR/<clip>.frames.jsonl per clip: each frame's solve (status, "
                  "iterations, residual and target per effector, limits, swivel jump) and the pop "
                  "score and foot slide measured on the output (docs/preview.md)");
  sub->add_flag("--strict", o->strict,
                "A suspect output (a plausibility check broke, docs/checks.md) fails its clip: "
                "nothing written, exit 1");
  AddReduceOptions(sub, &o->reduce);
  sub->add_flag("--allow-io", o->allow_io, "Lift the script sandbox");
  sub->add_flag("--no-progress", o->no_progress, "No progress bar even on a terminal");
  sub->add_option("INPUTS", o->inputs, "Clips: files, folders or @list.txt");
}

// --merge-reports: the shard reports merged into --report.
int MergeShardReports(const BakeArgs& o) {
  if (o.report.empty()) throw batch::UsageError("--merge-reports needs --report OUT.json");
  batch::CheckInputsNotOverwritten({o.merge, {}, {o.report}});
  const nlohmann::json merged = batch::MergeReports(o.merge);
  WriteFileAtomically(o.report,
                      merged.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return kExitOk;
}

// The inputs to bake (INPUTS, --shard), refused when an output could overwrite one.
batch::InputList BakeInputs(const BakeArgs& o) {
  if (o.rig.empty()) throw batch::UsageError("--rig RIG.lua is required");
  if (o.inputs.empty()) throw batch::UsageError("no INPUTS given");
  if (!fs::is_regular_file(o.rig)) throw batch::UsageError(o.rig + ": no such rig script");
  batch::InputList inputs = batch::CollectInputs(o.inputs, ReadableExtensions());
  if (!o.shard.empty()) inputs = batch::SelectShard(inputs, batch::ParseShard(o.shard));
  // Inputs are never written: no output folder or file may be an input or the rig script
  // (checked again with every output by batch::Run).
  batch::WritePlan plan;
  plan.batch = &inputs;  // read in place
  plan.inputs = {o.rig};
  plan.folders = {{o.out, "--out"}, {o.frames_report, "--frames-report"}, {o.preview, "--preview"}};
  plan.files = {o.report};
  batch::CheckInputsNotOverwritten(plan);
  return inputs;
}

// What every clip's bake is given (BakeOne); creates the --frames-report folder.
void FillBakeConfig(const BakeArgs& o, const batch::InputList& inputs, BakeConfig* config) {
  config->rig = o.rig;
  config->rig_dir = fs::weakly_canonical(fs::absolute(o.rig)).parent_path().string();
  config->out_dir = o.out;
  config->frames_report_dir = o.frames_report;
  if (!o.frames_report.empty()) {
    std::error_code ec;
    fs::create_directories(o.frames_report, ec);
    if (!fs::is_directory(o.frames_report, ec)) {
      throw batch::UsageError("--frames-report " + o.frames_report + ": cannot create the folder");
    }
  }
  config->allow_io = o.allow_io;
  config->timeout = o.clip_timeout;
  config->memory_limit = static_cast<size_t>(o.lua_memory_mb) << 20;
  config->load.memory_limit_mib = static_cast<size_t>(o.import_memory_mb);
  config->load.time_limit_seconds = o.import_timeout;
  config->load = ApplyReadArgs(o.read, config->load);
  config->take = o.take;
  config->strict = o.strict;
  config->reduce = o.reduce;
  config->inputs = &inputs;
  config->input_ids.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    config->input_ids.push_back(FileIdentity(inputs.path(i)));
  }
}

// How the batch runs: the recipe --resume compares, the worker processes, their limits and
// confinement (`config` and `inputs` must outlive the batch: the workers' setup reads them).
batch::RunOptions BakeRunOptions(const BakeArgs& o, const BakeConfig& config,
                                 const batch::InputList& inputs) {
  batch::RunOptions run;
  run.out_dir = o.out;
  run.extension = std::string(FormatNamed(o.format)->extensions.front());
  run.jobs = o.jobs;
  run.resume = o.resume;
  run.recipe.version = RIGEL_VERSION;
  run.recipe.recipe_hash = batch::HashBytes(
      batch::HashFile(o.rig) + "|" + o.format + "|" + o.read.bvh_translation + "|" +
      o.read.unit_in + "|" + o.take +
      (o.read.up.empty() && o.read.forward.empty() ? std::string()
                                                   : "|" + o.read.up + "|" + o.read.forward) +
      (o.reduce.enabled ? fmt::format("|keys {} {}", o.reduce.error_mm, o.reduce.vertex_mm)
                        : std::string()));
  run.progress = !o.no_progress && isatty(STDERR_FILENO);
  run.command = "bake";
  run.processes = o.workers != 0;
  if (run.processes) {
    const int workers =
        o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    run.memory_mb = o.memory_mb > 0
                        ? static_cast<size_t>(o.memory_mb)
                        : batch::DefaultWorkerMemoryMb(std::min<int>(
                              workers, static_cast<int>(std::max<size_t>(1, inputs.size()))));
    run.timeout = o.clip_timeout;
    if (!o.allow_io) {
      if (ProbeConfinement().kind == ConfinementKind::kNone) {
        fmt::print(stderr, "rigel bake: warning: confinement: {}\n", DescribeConfinement());
      }
      // The workers start after batch::Run has created --out (a rule needs the folder).
      // The rules (a path per input) are made in the worker, not kept by the coordinator.
      run.worker_setup = [&config, &inputs] { ConfineCurrentThread(BakeRules(config, inputs)); };
    }
  }
  return run;
}

int RunBake(const BakeArgs& o) {
  try {
    if (!o.merge.empty()) return MergeShardReports(o);
    const batch::InputList inputs = BakeInputs(o);
    BakeConfig config;
    FillBakeConfig(o, inputs, &config);
    const batch::RunOptions run = BakeRunOptions(o, config, inputs);
    // The rows go to a temporary file as clips finish (batch::ReportSpill): the coordinator's
    // memory does not grow with the batch.
    batch::ReportSpill spill(inputs.size());
    batch::Run(
        inputs, run,
        [&config](const batch::Input& input, const std::string& output) {
          return BakeOne(input, output, config);
        },
        &spill);
    int failed = spill.failed();
    spill.ForEachRow(
        [](const batch::ClipReport& r) {
          // Reasons from importers already start with the file name.
          if (r.reason.rfind(r.input, 0) == 0) {
            fmt::print(stderr, "rigel bake: failed: {}\n", r.reason);
          } else {
            fmt::print(stderr, "rigel bake: failed: {}: {}\n", r.input, r.reason);
          }
        },
        /*failed_only=*/true);
    if (!o.preview.empty()) failed += preview::WritePreviewPages(o.preview, spill, "bake");
    if (!o.report.empty()) spill.Write(o.report, run);
    return failed ? kExitBadInput : kExitOk;
  } catch (const batch::UsageError& e) {
    fmt::print(stderr, "rigel bake: error: {}\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "rigel bake: error: {}\n", e.what());
    return kExitBadInput;
  }
}

}  // namespace

Runner AddBakeCommand(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "bake",
      "Bake clips through a Lua rig script, in parallel. Inputs are files, folders (searched "
      "recursively by extension) or @list.txt files. Exit 0 when every clip succeeds, 1 when any "
      "failed, 2 on usage errors.");
  auto o = std::make_shared<BakeArgs>();
  AddBakeOptions(sub, o.get());
  return [o]() { return RunBake(*o); };
}

}  // namespace rigel::cli
