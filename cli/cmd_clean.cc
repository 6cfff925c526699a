// rigel clean IN OUT: curve clean-up of every take of a file, in a fixed order: trim, resample,
// low-pass filter, mirror, loop; then the write, with key reduction when asked
// (core/curves/, docs/curves.md).
#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/batch/batch.h"
#include "cli/batch/takes.h"
#include "cli/command.h"
#include "cli/format_help.h"
#include "cli/read_options.h"
#include "cli/reduce_keys.h"
#include "core/clip_ops.h"
#include "core/curves/filter.h"
#include "core/curves/mirror.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "io/file_format.h"

namespace rigel::cli {

namespace {

struct CleanArgs {
  std::string in, out, take;
  std::string trim;       // "F:L" frames (0-based, inclusive)
  std::string trim_time;  // "S:E" seconds
  double resample = 0;
  double filter_hz = 0;
  int filter_order = 2;
  std::vector<std::string> filter_joints;
  bool no_contacts = false;
  bool mirror = false;
  std::vector<std::string> mirror_map;  // "Left=Right"
  int loop = 0;
  ReadArgs read;
  ReduceArgs reduce;
};

// "A:B" as two numbers.
std::pair<double, double> ParseRange(const std::string& text, const char* option) {
  const std::size_t colon = text.find(':');
  try {
    if (colon == std::string::npos) throw std::invalid_argument("");
    std::size_t used_a = 0, used_b = 0;
    const double a = std::stod(text.substr(0, colon), &used_a);
    const double b = std::stod(text.substr(colon + 1), &used_b);
    if (used_a != colon || used_b != text.size() - colon - 1) throw std::invalid_argument("");
    return {a, b};
  } catch (const std::exception&) {
    throw batch::UsageError(fmt::format("{} {}: expected FIRST:LAST", option, text));
  }
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Prints what an operation did and how fast.
void Say(const std::string& what, int frames, double seconds) {
  if (seconds > 0) {
    fmt::print(stderr, "rigel clean: {} ({} frames, {:.0f} frames/s)\n", what, frames,
               frames / seconds);
  } else {
    fmt::print(stderr, "rigel clean: {} ({} frames)\n", what, frames);
  }
}

Clip CleanOne(const Scene& scene, Clip clip, const CleanArgs& a) {
  const Skeleton& skeleton = *scene.skeleton;
  using Clock = std::chrono::steady_clock;
  if (!a.trim.empty()) {
    const auto [first, last] = ParseRange(a.trim, "--trim");
    if (first < 0 || last < first || last >= clip.num_frames() || first != std::floor(first) ||
        last != std::floor(last)) {
      throw batch::UsageError(
          fmt::format("--trim {}: frames 0..{} (first <= last)", a.trim, clip.num_frames() - 1));
    }
    clip = SliceClip(clip, static_cast<int>(first), static_cast<int>(last));
    Say(fmt::format("trimmed to frames {}..{}", first, last), clip.num_frames(), 0);
  }
  if (!a.trim_time.empty()) {
    const auto [start, end] = ParseRange(a.trim_time, "--trim-time");
    try {
      clip = TrimClipSeconds(clip, start, end);
    } catch (const std::invalid_argument& e) {
      throw batch::UsageError(fmt::format("--trim-time {}: {}", a.trim_time, e.what()));
    }
    Say(fmt::format("trimmed to {}..{} s", start, end), clip.num_frames(), 0);
  }
  if (a.resample > 0) {
    const auto start = Clock::now();
    clip = ResampleClip(skeleton, clip, a.resample);
    Say(fmt::format("resampled to {} frames/s", a.resample), clip.num_frames(), Seconds(start));
  }
  if (a.filter_hz > 0) {
    FilterOptions filter;
    filter.cutoff_hz = a.filter_hz;
    filter.order = a.filter_order;
    filter.keep_contacts = !a.no_contacts;
    const int up = scene.axes.up.value.axis;
    filter.up_axis = up >= 0 && up <= 2 ? up : 1;
    for (const std::string& name : a.filter_joints) {
      const int j = skeleton.FindJoint(name);
      if (j < 0) throw batch::UsageError("--filter-joints: no joint '" + name + "'");
      filter.joints.push_back(j);
    }
    FilterReport report;
    const auto start = Clock::now();
    try {
      clip = FilterClip(skeleton, clip, filter, &report);
    } catch (const std::invalid_argument& e) {
      throw batch::UsageError(fmt::format("--filter {}: {}", a.filter_hz, e.what()));
    }
    Say(fmt::format("low-pass {} Hz (Butterworth order {}, zero phase) on {} joints, {} foot "
                    "contacts kept{}",
                    a.filter_hz, a.filter_order, report.joints_filtered, report.contacts,
                    report.unreached ? fmt::format(" ({} frames unreached)", report.unreached)
                                     : std::string()),
        clip.num_frames(), Seconds(start));
  }
  if (a.mirror) {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const std::string& p : a.mirror_map) {
      const std::size_t eq = p.find('=');
      if (eq == std::string::npos) throw batch::UsageError("--mirror-map " + p + ": expected A=B");
      pairs.push_back({p.substr(0, eq), p.substr(eq + 1)});
    }
    const auto start = Clock::now();
    std::vector<int> mates;
    MirrorPlane plane;
    try {
      mates = MirrorCounterparts(skeleton, pairs);
      plane = CharacterPlane(skeleton, mates);
    } catch (const std::invalid_argument& e) {
      throw batch::UsageError(e.what());
    }
    clip = MirrorClip(skeleton, clip, mates, plane);
    int swapped = 0;
    for (std::size_t j = 0; j < mates.size(); ++j) swapped += mates[j] != static_cast<int>(j);
    Say(fmt::format("mirrored across the plane normal to ({:.3f}, {:.3f}, {:.3f}), {} joints "
                    "swapped sides",
                    plane.normal.x(), plane.normal.y(), plane.normal.z(), swapped),
        clip.num_frames(), Seconds(start));
  }
  if (a.loop > 0) {
    LoopOptions loop;
    loop.blend_frames = a.loop;
    const int up = scene.axes.up.value.axis;
    loop.up_axis = up >= 0 && up <= 2 ? up : 1;
    const auto start = Clock::now();
    try {
      clip = LoopClip(skeleton, clip, loop);
    } catch (const std::invalid_argument& e) {
      throw batch::UsageError(fmt::format("--loop {}: {}", a.loop, e.what()));
    }
    Say(fmt::format("looped over the last {} frames", a.loop), clip.num_frames(), Seconds(start));
  }
  return clip;
}

// IN, OUT and the options of `rigel clean`, into *a.
void AddCleanOptions(CLI::App* sub, CleanArgs* a) {
  sub->add_option("IN", a->in, "Input file (" + ExtensionsHelp(false) + ")")->required();
  sub->add_option("OUT", a->out, "Output file (" + ExtensionsHelp(true) + ")")->required();
  sub->add_option("--take", a->take, "Clean only the take (clip) of this name");
  sub->add_option("--trim", a->trim, "Keep frames FIRST:LAST (0-based, inclusive)");
  sub->add_option("--trim-time", a->trim_time, "Keep START:END seconds (nearest frames)");
  sub->add_option("--resample", a->resample,
                  "Resample to FPS frames per second (rotations by slerp)")
      ->check(CLI::Range(1e-3, 10000.0));
  sub->add_option("--filter", a->filter_hz,
                  "Zero-phase Butterworth low-pass at HZ on positions and rotations "
                  "(quaternions), planted feet kept")
      ->check(CLI::Range(1e-6, 1e6));
  sub->add_option("--filter-order", a->filter_order, "Butterworth order of one pass (default 2)")
      ->check(CLI::Range(1, 8));
  sub->add_option("--filter-joints", a->filter_joints, "Filter only these joints (names)")
      ->delimiter(',');
  sub->add_flag("--no-contacts", a->no_contacts,
                "Filter the feet too during their contacts (default: planted feet stay planted)");
  sub->add_flag("--mirror", a->mirror,
                "Mirror left to right across the character's own left-right plane");
  sub->add_option("--mirror-map", a->mirror_map,
                  "Counterparts LEFT=RIGHT besides the names' own sides (comma separated)")
      ->delimiter(',');
  sub->add_option("--loop", a->loop,
                  "Blend the end into the start over N frames so the take loops (root travel "
                  "kept)")
      ->check(CLI::Range(1, 1000000));
  AddReadOptions(sub, &a->read);
  AddReduceOptions(sub, &a->reduce);
}

// Per written take: keys before and after, the largest error and the error read back.
void ReportKeys(const CleanArgs& a, const Scene& scene, const LoadOptions& options,
                const std::vector<ClipKeys>& keys, double seconds) {
  for (std::size_t c = 0; c < keys.size(); ++c) {
    std::optional<double> back;
    try {
      back = ReadBackError(scene, scene.clips[c], a.out, options, c, a.reduce.vertex_mm * 1e-3);
    } catch (const std::exception& e) {
      fmt::print(stderr, "rigel clean: warning: {}: error not measured: {}\n", a.out, e.what());
    }
    fmt::print(
        stderr,
        "rigel clean: {}: take '{}': keys {} -> {}, largest error {:.4f} mm{} (bound "
        "{} mm, virtual vertex {} mm; written at {:.0f} frames/s)\n",
        a.out, scene.clips[c].name(), keys[c].dense_keys, keys[c].keys, keys[c].max_error * 1e3,
        back ? fmt::format(", read back {:.4f} mm", *back * 1e3) : std::string(), a.reduce.error_mm,
        a.reduce.vertex_mm, seconds > 0 ? scene.clips[c].num_frames() / seconds : 0.0);
  }
}

// Reads IN, cleans each take and writes OUT; the exit code. Errors other than usage errors
// propagate.
int CleanFile(const CleanArgs& a) {
  try {
    batch::CheckInputsNotOverwritten({a.in}, "", {a.out});
  } catch (const batch::UsageError& e) {
    fmt::print(stderr, "rigel clean: error: {}\n", e.what());
    return kExitUsage;
  }
  if (!FormatOfPath(a.out) || !FormatOfPath(a.out)->write) {
    fmt::print(stderr, "rigel clean: error: {}: not a format rigel writes ({})\n", a.out,
               ExtensionsHelp(true));
    return kExitUsage;
  }
  const LoadOptions options = ApplyReadArgs(a.read);
  Scene scene = LoadScene(a.in, options);
  for (const std::string& w : scene.warnings) fmt::print(stderr, "rigel: warning: {}\n", w);
  if (!scene.skeleton || scene.clips.empty()) {
    fmt::print(stderr, "rigel clean: error: {}: no animation\n", a.in);
    return kExitBadInput;
  }
  if (!a.take.empty()) {
    const std::vector<std::size_t> picked = batch::SelectTakes(scene, a.take, a.in);
    scene.clips = {std::move(scene.clips[picked.front()])};
  }
  if (OneTakePerFile(a.out) && scene.clips.size() > 1) {
    fmt::print(stderr, "rigel: warning: {} holds one take: only take '{}' written\n",
               FormatOfPath(a.out)->label, scene.clips.front().name());
    scene.clips.resize(1);
  }
  for (const std::string& w :
       DroppedBy(a.out, scene.meshes.size(), 1, CountMorphTargets(scene.meshes),
                 CountPolygons(scene.meshes))) {
    fmt::print(stderr, "rigel: warning: {}\n", w);
  }
  for (Clip& clip : scene.clips) clip = CleanOne(scene, std::move(clip), a);
  if (a.reduce.enabled) {
    if (std::string w = ReductionDroppedBy(a.out); !w.empty()) {
      fmt::print(stderr, "rigel: warning: {}\n", w);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<ClipKeys> keys = SaveSceneReduced(scene, a.out, a.reduce);
  const double seconds = Seconds(start);
  ReportKeys(a, scene, options, keys, seconds);
  return kExitOk;
}

}  // namespace

Runner AddCleanCommand(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "clean",
      "Clean the curves of every take of IN and write OUT: trim, resample, low-pass filter, "
      "mirror and loop (in that order, each when asked), then write with fewer keys "
      "(--reduce-keys). The input is never modified.");
  auto a = std::make_shared<CleanArgs>();
  AddCleanOptions(sub, a.get());
  return [a]() {
    try {
      return CleanFile(*a);
    } catch (const batch::UsageError& e) {
      fmt::print(stderr, "rigel clean: error: {}\n", e.what());
      return kExitUsage;
    } catch (const std::exception& e) {
      fmt::print(stderr, "rigel clean: error: {}\n", e.what());
      return kExitBadInput;
    }
  };
}

}  // namespace rigel::cli
