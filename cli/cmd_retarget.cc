// rigel retarget --target TARGET [--map MAP.xml] [--out DIR]
//                [--root-motion scale|keep|in-place|extract] [--root-motion-bone NAME]
//                [--pin-feet] [--pin-hands] [--report FILE.json] [-j N] [--shard K/N] [--resume]
//                CLIPS...   (files, folders, @lists: batched like `rigel bake`, cli/batch)
// rigel retarget --suggest-map SRC TARGET
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#ifndef RIGEL_VERSION
#define RIGEL_VERSION "0.0.0"
#endif

#include "cli/batch/batch.h"
#include "cli/batch/takes.h"
#include "cli/checks_output.h"
#include "cli/command.h"
#include "cli/format_help.h"
#include "cli/frames_output.h"
#include "cli/preview/preview_page.h"
#include "cli/read_options.h"
#include "cli/reduce_keys.h"
#include "core/retarget/retarget.h"
#include "exporters/atomic_file.h"
#include "exporters/save_scene.h"
#include "importers/bone_map.h"
#include "importers/load_scene.h"

namespace rigel::cli {

namespace {

struct RetargetArgs {
  std::string target;
  std::string map;
  std::string out = ".";
  std::string root_motion = "scale";
  std::string root_motion_bone;  // --root-motion-bone NAME (with extract)
  std::string format = "bvh";
  std::string report;
  ReduceArgs reduce;  // --reduce-keys (cli/reduce_keys.h)
  std::string preview;
  std::string frames_report;
  bool pin_feet = false;
  bool pin_hands = false;
  bool follow_source = false;
  bool suggest = false;
  bool strict = false;  // --strict: a suspect output (core/check) is a failed clip
  int source_ref = -1;
  int target_ref = -1;
  std::vector<std::string> clips;
  int jobs = 0;
  int memory_mb = 0;  // per worker process; 0: batch::DefaultWorkerMemoryMb
  double timeout = 0;
  std::string shard;
  bool resume = false;
  bool no_progress = false;
  ReadArgs read;
  std::string take;  // --take NAME, or empty: every take
};

double UnitOf(const Scene& scene) { return MetresPerUnit(scene); }

// The retargeter's up axis (1 = Y, 2 = Z) of a scene whose axes are known (RetargetUpAxis).
int UpAxisOf(const Scene& scene) { return RetargetUpAxis(scene.axes.up); }

// The --root-motion extract figures (RetargetMetrics::root_*), added to a report row.
void AddRootMotionJson(const retarget::RetargetMetrics& q, nlohmann::json* row) {
  if (q.root_bone.empty()) return;
  (*row)["root_motion"] = {{"bone", q.root_bone},
                           {"added", q.root_bone_added},
                           {"path_length_m", q.root_path_length_m},
                           {"heading_change_deg", q.root_heading_change_deg},
                           {"heading_turned_deg", q.root_heading_turned_deg}};
}

nlohmann::json MetricsJson(const retarget::RetargetMetrics& q) {
  nlohmann::json segments = nlohmann::json::array();
  for (const auto& s : q.segments) {
    segments.push_back({{"segment", s.name},
                        {"branch", s.branch},
                        {"mean_deg", s.mean_deg},
                        {"max_deg", s.max_deg}});
  }
  return {
      {"frames", q.frames},
      {"mapped_joints", q.mapped_joints},
      {"hip_height_ratio", q.hip_height_ratio},
      {"source_unit_metres", q.source_unit_metres},
      {"source_unit_estimated", q.source_unit_estimated},
      {"target_unit_metres", q.target_unit_metres},
      {"target_unit_estimated", q.target_unit_estimated},
      {"source_up_axis", std::string(1, static_cast<char>('X' + q.source_up_axis))},
      {"target_up_axis", std::string(1, static_cast<char>('X' + q.target_up_axis))},
      {"bone_direction_deg",
       {{"bones", q.bones},
        {"mean", q.bone_direction_mean_deg},
        {"max", q.bone_direction_max_deg},
        {"worst", q.bone_direction_worst}}},
      {"branch_direction_deg",
       {{"mean", q.branch_direction_mean_deg}, {"max", q.branch_direction_max_deg}}},
      {"foot_slide_mm",
       {{"contacts", q.contacts},
        {"contact_frames", q.contact_frames},
        {"mean", q.foot_slide_mean_mm},
        {"max", q.foot_slide_max_mm},
        {"output_contacts", q.output_contacts},
        {"output_mean", q.output_foot_slide_mean_mm},
        {"output_max", q.output_foot_slide_max_mm}}},
      {"foot_error_mm", {{"mean", q.foot_error_mean_mm}, {"max", q.foot_error_max_mm}}},
      {"hand_error_mm", {{"mean", q.hand_error_mean_mm}, {"max", q.hand_error_max_mm}}},
      {"joint_limit_violations", q.joint_limit_violations},
      {"knee_hyperextension_frames", q.knee_hyperextension_frames},
      {"ik", {{"applied", q.ik_applied}, {"unreached", q.ik_unreached}}},
      {"targets",
       {{"foot_slide_below_5mm", q.contact_frames == 0 || q.foot_slide_max_mm < 5.0},
        {"bone_direction_mean_below_2deg", q.bone_direction_mean_deg < 2.0}}},
      {"segments", segments},
  };
}

// The plausibility checks of one retargeted take (core/check): the source take against the
// output, which stands in the target's axes and unit, on the target's floor.
check::CheckReport CheckRetarget(const Scene& source, const Clip& take, const Scene& target,
                                 const retarget::Retargeter& r,
                                 const retarget::RetargetResult& result) {
  check::PlausibilityJob job;
  job.kind = check::OutputKind::kRetarget;
  job.source = CheckSideOf(source, *source.skeleton, take);
  job.output = CheckSideOf(target, r.target(), result.clip);
  switch (r.options().root_motion) {
    case retarget::RootMotion::kKeep:
      job.travel = check::TravelRule::kKept;
      // Units the files do not state: the ones the retarget assumed (RetargetMetrics).
      if (!(job.source.metres_per_unit > 0)) {
        job.source.metres_per_unit = result.metrics.source_unit_metres;
      }
      if (!(job.output.metres_per_unit > 0)) {
        job.output.metres_per_unit = result.metrics.target_unit_metres;
      }
      break;
    case retarget::RootMotion::kInPlace:
      job.travel = check::TravelRule::kNone;
      break;
    default:
      job.travel = check::TravelRule::kScaled;
  }
  if (!target.clips.empty() && target.clips.front().matches(r.target())) {
    job.output_floor_clip = &target.clips.front();
  }
  return job.Run();
}

int SuggestMap(const RetargetArgs& a) {
  std::vector<std::string> files = a.clips;
  if (!a.target.empty()) files.push_back(a.target);
  if (files.size() != 2) {
    fmt::print(stderr,
               "rigel retarget: error: --suggest-map needs SRC and TARGET (got {} file{})\n",
               files.size(), files.size() == 1 ? "" : "s");
    return kExitUsage;
  }
  try {
    const Scene src = LoadScene(files[0], ApplyReadArgs(a.read));
    const Scene tgt = LoadScene(files[1], ApplyReadArgs(a.read));
    std::vector<std::string> notes, left_out;
    retarget::BoneMap map = retarget::AutoMap(*src.skeleton, *tgt.skeleton, &notes, &left_out);
    for (const std::string& n : left_out) notes.push_back("fingers: " + n);
    map.source_name = std::filesystem::path(files[0]).filename().string();
    map.target_name = std::filesystem::path(files[1]).filename().string();
    fmt::print("{}", FormatBoneMap(map, notes));
    return kExitOk;
  } catch (const std::exception& e) {
    fmt::print(stderr, "rigel retarget: error: {}\n", e.what());
    return kExitBadInput;
  }
}

using Clock = std::chrono::steady_clock;

// The inputs named by CLIPS (and --shard), refused before reading or writing anything when an
// output could overwrite an input: inputs are never written. kExitOk, else kExitUsage.
int CollectInputs(const RetargetArgs& a, const std::string& ext, batch::InputList* inputs) {
  try {
    *inputs = batch::CollectInputs(a.clips, ReadableExtensions());
    if (!a.shard.empty()) *inputs = batch::SelectShard(*inputs, batch::ParseShard(a.shard));
    batch::WritePlan plan;  // inputs are never written
    plan.batch = inputs;
    plan.inputs = {a.target, a.map};
    plan.folders = {
        {a.out, "--out"}, {a.frames_report, "--frames-report"}, {a.preview, "--preview"}};
    batch::RunOptions where;
    where.out_dir = a.out;
    where.extension = ext;
    for (std::size_t i = 0; i < inputs->size(); ++i) {
      plan.files.push_back(batch::OutputPath(where, inputs->stem(i)));
    }
    plan.files.push_back(a.report);
    batch::CheckInputsNotOverwritten(plan);
  } catch (const batch::UsageError& e) {
    fmt::print(stderr, "rigel retarget: error: {}\n", e.what());
    return kExitUsage;
  }
  return kExitOk;
}

// Reads the target (its warnings on stderr) and the map, when one is given. kExitOk, else
// kExitBadInput.
int LoadTargetAndMap(const RetargetArgs& a, Scene* target, retarget::BoneMap* map) {
  try {
    *target = LoadScene(a.target, ApplyReadArgs(a.read));
    for (const std::string& w : target->warnings) fmt::print(stderr, "rigel: warning: {}\n", w);
    if (!a.map.empty()) *map = ReadBoneMap(a.map);
  } catch (const std::exception& e) {
    fmt::print(stderr, "rigel retarget: error: {}\n", e.what());
    return kExitBadInput;
  }
  return kExitOk;
}

// The options every clip shares (each adds its source's unit and axes).
retarget::RetargetOptions SharedOptions(const RetargetArgs& a, retarget::RootMotion root,
                                        const Scene& target) {
  retarget::RetargetOptions options;
  options.root_motion = root;
  options.root_motion_bone = a.root_motion_bone;
  options.pin_feet = a.pin_feet;
  options.pin_hands = a.pin_hands;
  options.follow_source_between_contacts = a.follow_source;
  options.source_reference_frame = a.source_ref;
  options.target_reference_frame = a.target_ref;
  options.target_unit_metres = UnitOf(target);
  options.target_up_axis = UpAxisOf(target);
  return options;
}

// How the batch runs (recipe_hash aside: RecipeHash).
batch::RunOptions BatchOptions(const RetargetArgs& a, const std::string& ext) {
  batch::RunOptions run;
  run.out_dir = a.out;
  run.extension = ext;
  run.jobs = a.jobs;
  run.resume = a.resume;
  run.recipe.version = RIGEL_VERSION;
  run.progress = !a.no_progress && isatty(STDERR_FILENO);
  run.command = "retarget";
  // Clips run in worker processes (docs/bake.md, "Workers"): a crash or a runaway clip fails
  // only itself. Retargeting runs no script, so the workers are not Landlocked (the loads are).
  run.processes = true;
  {
    const int workers =
        a.jobs > 0 ? a.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    run.memory_mb =
        a.memory_mb > 0 ? static_cast<size_t>(a.memory_mb) : batch::DefaultWorkerMemoryMb(workers);
  }
  run.timeout = a.timeout;
  return run;
}

// Everything the outputs depend on besides the clip itself (--resume compares it). Throws when
// the target or the map cannot be read.
std::string RecipeHash(const RetargetArgs& a) {
  return batch::HashBytes(
      fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", batch::HashFile(a.target),
                  a.map.empty() ? std::string("auto") : batch::HashFile(a.map), a.format,
                  a.root_motion, a.pin_feet, a.pin_hands, a.follow_source, a.source_ref,
                  a.target_ref, a.read.bvh_translation, a.read.unit_in, a.take) +
      (a.reduce.enabled ? fmt::format("|keys {} {}", a.reduce.error_mm, a.reduce.vertex_mm)
                        : std::string()) +
      (a.root_motion_bone.empty() ? "" : "|" + a.root_motion_bone));
}

// What every input of the batch shares.
struct RetargetJob {
  const RetargetArgs& a;
  const Scene& target;
  const retarget::BoneMap& map;
  const retarget::RetargetOptions& options;
};

// The scene the takes of one input are written in: the target's skeleton, unit and axes (the
// retargeted clip is in them) and meshes (they move with the retargeted clip).
Scene OutputSceneOf(const Scene& target) {
  Scene out;
  out.skeleton = target.skeleton;
  out.file_unit_metres = target.file_unit_metres;
  out.estimated_unit_metres = target.estimated_unit_metres;
  out.length_scale = target.length_scale;
  out.axes = target.axes;      // the retargeted clip is in the target's axes
  out.meshes = target.meshes;  // the target character's meshes move with the retargeted clip
  return out;
}

// The quality of one retargeted take on stderr and in its report row.
void ReportTake(const retarget::RetargetResult& result, const std::string& where,
                batch::ClipReport& row) {
  const retarget::RetargetMetrics& q = result.metrics;
  fmt::print(stderr,
             "rigel retarget: {} -> {}: {} frames, bone direction mean {:.3f} deg (max "
             "{:.2f}), foot slide mean {:.2f} mm (max {:.2f}) over {} contacts; on the "
             "output's own {} contacts mean {:.2f} mm (max {:.2f})\n",
             where, row.output, q.frames, q.bone_direction_mean_deg, q.bone_direction_max_deg,
             q.foot_slide_mean_mm, q.foot_slide_max_mm, q.contacts, q.output_contacts,
             q.output_foot_slide_mean_mm, q.output_foot_slide_max_mm);
  row.frames = q.frames;
  row.solver.frames = q.ik_applied ? q.frames : 0;
  row.solver.unreachable = q.ik_unreached;
  row.extra = MetricsJson(q);
  AddRootMotionJson(q, &row.extra);
  if (!q.root_bone.empty()) {
    fmt::print(stderr,
               "rigel retarget: {}: root motion on '{}'{}: path {:.3f} m, heading change {:.1f} "
               "deg (turned {:.1f})\n",
               where, q.root_bone, q.root_bone_added ? " (added)" : "", q.root_path_length_m,
               q.root_heading_change_deg, q.root_heading_turned_deg);
  }
  row.extra["warnings"] = result.warnings;
}

// Writes the takes (nothing unless every take retargeted; a failed write removes what was
// written), each row getting its keys when --reduce-keys reduced them.
void WriteTakes(const RetargetArgs& a, const std::string& input, const std::string& out_path,
                bool split, Scene& out, std::vector<batch::ClipReport>& rows,
                std::vector<retarget::RetargetResult>& results) {
  batch::WriteTakeOutputs(
      "retarget", input, split, rows,
      [&] {
        for (retarget::RetargetResult& result : results) out.clips.push_back(result.clip);
        const std::vector<ClipKeys> keys = SaveSceneReduced(out, out_path, a.reduce);
        for (std::size_t k = 0; k < keys.size() && k < rows.size(); ++k) {
          rows[k].keys = KeysJson(keys[k], a.reduce);
        }
      },
      [&](std::size_t k) {
        Scene one = out;
        one.clips = {results[k].clip};
        const std::vector<ClipKeys> keys = SaveSceneReduced(one, rows[k].output, a.reduce);
        if (!keys.empty()) rows[k].keys = KeysJson(keys.front(), a.reduce);
      });
  if (a.reduce.enabled) {
    if (std::string w = ReductionDroppedBy(out_path); !w.empty())
      rows.front().warnings.push_back(w);
  }
}

// Nothing silent: the source's own warnings (a guessed unit or convention) and the target's
// meshes a format cannot hold reach the report.
void WarnAboutDropped(const Scene& source, const std::string& input, const std::string& out_path,
                      const Scene& out, const std::vector<retarget::RetargetResult>& results,
                      std::vector<batch::ClipReport>& rows) {
  rows.front().warnings.insert(rows.front().warnings.begin(), source.warnings.begin(),
                               source.warnings.end());
  std::vector<std::string> dropped = DroppedBy(
      out_path, out.meshes.size(), 1, CountMorphTargets(out.meshes), CountPolygons(out.meshes));
  {
    std::vector<Clip> clips;
    if (out.skeleton->has_scale()) {
      for (const retarget::RetargetResult& r : results) clips.push_back(r.clip);
    }
    for (std::string& w : SkeletonDroppedBy(out_path, *out.skeleton, clips)) {
      dropped.push_back(std::move(w));
    }
  }
  if (std::string w = AxesDroppedBy(out_path, out.axes); !w.empty()) {
    dropped.push_back(std::move(w));
  }
  // The source's blend-shape weights drive the source's meshes, not the target's: the target's
  // shapes stay at their rest weights.
  if (const int weights = CountMorphTargets(source.meshes); weights > 0) {
    dropped.push_back(fmt::format(
        "{}: the source's {} blend-shape weight channel{} are not retargeted; the target's "
        "blend shapes stay at their rest weights",
        input, weights, weights == 1 ? "" : "s"));
  }
  for (std::string& w : dropped) {
    fmt::print(stderr, "rigel retarget: warning: {}\n", w);
    rows.front().warnings.push_back(std::move(w));
  }
}

// Retargets every take of one input (or the one --take names) and writes them to `out_path`
// (BVH: a file per take, docs/formats.md); the input's report.
batch::ClipReport RetargetInput(const RetargetJob& job, const batch::Input& input,
                                const std::string& out_path) {
  const RetargetArgs& a = job.a;
  const Scene& target = job.target;
  std::error_code same_ec;
  if (std::filesystem::equivalent(input.path, out_path, same_ec) ||
      std::filesystem::equivalent(a.target, out_path, same_ec)) {
    throw std::runtime_error(out_path + ": output would overwrite an input");
  }
  const auto read_start = Clock::now();
  const Scene source = LoadScene(input.path, ApplyReadArgs(a.read));
  const double read_seconds = batch::SecondsSince(read_start);
  for (const std::string& w : source.warnings) fmt::print(stderr, "rigel: warning: {}\n", w);
  if (source.clips.empty()) throw std::runtime_error(input.path + ": no animation");
  // Every take (or the one --take names); BVH holds one take per file (docs/formats.md).
  const std::vector<std::size_t> picked = batch::SelectTakes(source, a.take, input.path);
  const bool several = picked.size() > 1;
  const bool split = several && !FormatNamed(a.format)->several_takes;
  const std::vector<std::string> safe = batch::FileSafeTakeNames(batch::TakeNames(source, picked));
  retarget::RetargetOptions clip_options = job.options;
  clip_options.source_unit_metres = UnitOf(source);
  clip_options.source_up_axis = UpAxisOf(source);
  clip_options.frame_records = !a.frames_report.empty();
  Scene out = OutputSceneOf(target);
  std::vector<batch::ClipReport> rows;
  std::vector<retarget::RetargetResult> results;
  for (std::size_t k = 0; k < picked.size(); ++k) {
    const auto start = Clock::now();
    const Clip& take = source.clips[picked[k]];
    const std::string where =
        several ? fmt::format("{} (take '{}')", input.path, take.name()) : input.path;
    std::string error;
    auto r = retarget::Retargeter::Create(source.skeleton, target.skeleton, job.map, clip_options,
                                          &error, &take,
                                          target.clips.empty() ? nullptr : &target.clips.front());
    if (!r) throw std::runtime_error(several ? where + ": " + error : error);
    if (r->added_root() && k == 0) {
      // --root-motion extract added a root bone: joint 0, every target joint one index later.
      out.skeleton = r->target_ptr();
      r->MoveMeshesToOutput(&out.meshes);
    }
    retarget::RetargetResult result = r->Run(take);
    result.clip.set_name(take.name());
    batch::ClipReport row;
    row.take = source.clips.size() > 1 ? take.name() : "";
    row.output = split ? batch::TakeOutputPath(out_path, safe[k]) : out_path;
    for (const std::string& w : result.warnings) {
      fmt::print(stderr, "rigel retarget: warning: {}: {}\n", where, w);
      row.warnings.push_back(w);
    }
    const auto check_start = Clock::now();
    ApplyChecks(CheckRetarget(source, take, target, *r, result), "retarget", where, a.strict, &row);
    row.checks["seconds"] = batch::SecondsSince(check_start);
    ReportTake(result, where, row);
    row.phases.script = batch::SecondsSince(start);  // the retarget and its clean-up
    row.seconds = row.phases.script;
    rows.push_back(std::move(row));
    results.push_back(std::move(result));
  }
  WriteTakes(a, input.path, out_path, split, out, rows, results);
  if (!a.frames_report.empty()) {
    for (std::size_t k = 0; k < results.size(); ++k) {
      const auto report_start = Clock::now();
      const retarget::RetargetResult& result = results[k];
      WriteFramesReportFor(a.frames_report, source, input.path, rows[k].output,
                           several && !split ? safe[k] : "", *out.skeleton, result.clip,
                           result.metrics.ik_applied ? &result.records : nullptr, &rows[k]);
      rows[k].phases.report = batch::SecondsSince(report_start);
      rows[k].seconds += rows[k].phases.report;
    }
  }
  WarnAboutDropped(source, input.path, out_path, out, results, rows);
  return batch::InputReport(std::move(rows), read_seconds);
}

// The failures on stderr, the preview pages and the report; the exit code.
int FinishBatch(const RetargetArgs& a, retarget::RootMotion root,
                const std::vector<batch::ClipReport>& reports, const batch::RunOptions& run) {
  int failed = 0;
  for (const batch::ClipReport& r : reports) {
    if (r.status == "failed") {
      ++failed;
      fmt::print(stderr, "rigel retarget: error: {}\n", r.reason);
    }
  }
  if (!a.preview.empty()) failed += preview::WritePreviewPages(a.preview, reports, "retarget");
  if (!a.report.empty()) {
    nlohmann::json report = nlohmann::json::object();  // beside the standard fields (WriteReport)
    report["target"] = a.target;
    report["map"] = a.map.empty() ? "automatic" : a.map;
    report["root_motion"] = std::string(retarget::RootMotionName(root));
    report["pin_feet"] = a.pin_feet;
    report["pin_hands"] = a.pin_hands;
    try {
      batch::WriteReport(a.report, reports, run, report);
    } catch (const std::exception& e) {
      fmt::print(stderr, "rigel retarget: error: {}\n", e.what());
      return kExitBadInput;
    }
  }
  return failed ? kExitBadInput : kExitOk;
}

int Run(const RetargetArgs& a) {
  if (a.suggest) return SuggestMap(a);
  if (a.target.empty()) {
    fmt::print(stderr, "rigel retarget: error: --target is required\n");
    return kExitUsage;
  }
  if (a.clips.empty()) {
    fmt::print(stderr, "rigel retarget: error: no CLIPS given\n");
    return kExitUsage;
  }
  const std::optional<retarget::RootMotion> root = retarget::ParseRootMotion(a.root_motion);
  if (!root) {
    fmt::print(stderr,
               "rigel retarget: error: invalid --root-motion '{}', expected one of: scale, keep, "
               "in-place, extract\n",
               a.root_motion);
    return kExitUsage;
  }
  const std::string ext(FormatNamed(a.format)->extensions.front());
  batch::InputList inputs;
  if (const int code = CollectInputs(a, ext, &inputs); code != kExitOk) return code;
  Scene target;
  retarget::BoneMap map;
  if (const int code = LoadTargetAndMap(a, &target, &map); code != kExitOk) return code;
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (!std::filesystem::is_directory(a.out, ec)) {
    fmt::print(stderr, "rigel retarget: error: {}: cannot create the output folder\n", a.out);
    return kExitBadInput;
  }
  if (!a.root_motion_bone.empty() && *root != retarget::RootMotion::kExtract) {
    fmt::print(stderr, "rigel retarget: error: --root-motion-bone needs --root-motion extract\n");
    return kExitUsage;
  }
  const retarget::RetargetOptions options = SharedOptions(a, *root, target);
  batch::RunOptions run = BatchOptions(a, ext);
  if (!a.frames_report.empty()) {
    std::filesystem::create_directories(a.frames_report, ec);
    if (!std::filesystem::is_directory(a.frames_report, ec)) {
      fmt::print(stderr, "rigel retarget: error: --frames-report {}: cannot create the folder\n",
                 a.frames_report);
      return kExitUsage;
    }
  }
  try {
    run.recipe.recipe_hash = RecipeHash(a);
  } catch (const std::exception& e) {
    fmt::print(stderr, "rigel retarget: error: {}\n", e.what());
    return kExitBadInput;
  }
  const RetargetJob job{a, target, map, options};
  const std::vector<batch::ClipReport> reports =
      batch::Run(inputs, run, [&](const batch::Input& input, const std::string& out_path) {
        return RetargetInput(job, input, out_path);
      });
  return FinishBatch(a, *root, reports, run);
}

}  // namespace

Runner AddRetargetCommand(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "retarget",
      "Retarget mocap clips onto another skeleton (names, proportions, rest poses, up axes and "
      "units may differ), with an optional IK clean-up and a JSON quality report. "
      "'rigel retarget --suggest-map SRC TARGET' prints an editable bone map.");
  auto a = std::make_shared<RetargetArgs>();
  sub->add_option("--target", a->target, "Skeleton to retarget onto (.bvh, .fbx, .glb)");
  AddReadOptions(sub, &a->read);
  sub->add_option("--take", a->take,
                  "Retarget only the take of this name (default: every take; " +
                      TakesPerFileHelp("CLIP") + ")");
  sub->add_option("--map", a->map, "Bone map (XML, see docs/retarget.md); default: automatic");
  sub->add_option("--out", a->out, "Output folder (default: the current folder)");
  sub->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember(WritableFormatNames()));
  sub->add_option("--root-motion", a->root_motion,
                  "Hips translation: scale (by the hip-height ratio), keep (metres), in-place, "
                  "extract (scale, with the ground travel and heading moved onto a root bone)");
  sub->add_option("--root-motion-bone", a->root_motion_bone,
                  "With --root-motion extract: the root bone (default: the target's root above "
                  "the hips); a name the target lacks adds that joint above its hips");
  sub->add_flag("--pin-feet", a->pin_feet,
                "IK clean-up: detect foot contacts and pin them with two-bone IK");
  sub->add_flag("--pin-hands", a->pin_hands,
                "IK clean-up: hands at the proportion-scaled source positions");
  sub->add_flag("--follow-source", a->follow_source,
                "With --pin-feet: feet at the scaled source positions between contacts too");
  sub->add_option("--source-ref-frame", a->source_ref,
                  "Frame of each clip used as the source reference pose (default: rest pose)");
  sub->add_option("--target-ref-frame", a->target_ref,
                  "Frame of the target file used as its reference pose (default: rest pose)");
  sub->add_option("--report", a->report, "Write a JSON quality report here");
  AddReduceOptions(sub, &a->reduce);
  sub->add_flag("--strict", a->strict,
                "A suspect output (a plausibility check broke, docs/checks.md) fails its clip: "
                "nothing written, exit 1");
  sub->add_option("--preview", a->preview, "Also write a page per clip + index.html in DIR");
  sub->add_option("--frames-report", a->frames_report,
                  "Also write DIR/<clip>.frames.jsonl per clip: the IK clean-up's per-frame solve "
                  "(with --pin-feet/--pin-hands) and the pop score and foot slide measured on the "
                  "output (docs/preview.md)");
  sub->add_option("-j,--jobs", a->jobs, "Worker processes (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--memory-mb", a->memory_mb,
                  "Address-space limit per worker process in MB (default min(4096, RAM/(2 x "
                  "workers)))")
      ->check(CLI::PositiveNumber);
  sub->add_option("--timeout", a->timeout, "Seconds a clip may take (0 = no limit)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--shard", a->shard, "Only shard K of N (K/N, 0 <= K < N), for farms");
  sub->add_flag("--resume", a->resume,
                "Skip outputs whose manifest matches the clip, target, map, options and version");
  sub->add_flag("--no-progress", a->no_progress, "No progress bar even on a terminal");
  sub->add_flag("--suggest-map", a->suggest, "Print a bone map for SRC TARGET and exit");
  sub->add_option("CLIPS", a->clips,
                  "Source clips: files, folders or @list.txt (for --suggest-map: SRC TARGET)");
  return [a]() { return Run(*a); };
}

}  // namespace rigel::cli
