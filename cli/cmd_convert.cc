// rigel convert IN OUT: read any supported file, write another format (or the same, exactly).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/batch/batch.h"
#include "cli/batch/takes.h"
#include "cli/checks_output.h"
#include "cli/command.h"
#include "cli/format_help.h"
#include "cli/read_options.h"
#include "cli/reduce_keys.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "io/file_format.h"

namespace rigel::cli {

namespace {

// The plausibility checks of a written file (core/check): `path` read back (with the read options
// the input had, lengths as written) against `clip` of the input. Prints the findings; returns
// whether the output is suspect (a file that does not read back with its clip is).
bool CheckWritten(const Scene& input, const Clip& clip, const std::string& path,
                  LoadOptions options, std::size_t take) {
  if (!input.skeleton || !clip.matches(*input.skeleton)) return false;
  options.unit = LengthUnit::kFile;
  Scene back;
  try {
    back = LoadScene(path, options);
  } catch (const std::exception& e) {
    fmt::print(stderr, "rigel convert: suspect: {}: the written file does not read back: {}\n",
               path, e.what());
    return true;
  }
  if (back.clips.size() <= take || !back.skeleton) {
    fmt::print(stderr, "rigel convert: suspect: {}: the written file reads back without take {}\n",
               path, take + 1);
    return true;
  }
  const Clip& written = back.clips[take];
  check::PlausibilityJob job;
  job.kind = check::OutputKind::kConvert;
  job.source = CheckSideOf(input, *input.skeleton, clip);
  job.output = CheckSideOf(back, *back.skeleton, written);
  // A format that states its unit (glTF, FBX) holds metres or the unit it names; BVH states none
  // and holds the input's numbers.
  const double a = job.source.metres_per_unit, b = MetresPerUnit(back);
  job.scale = a > 0 && b > 0 ? a / b : 1.0;
  const check::CheckReport report = job.Run();
  if (!report.suspect()) return false;
  for (const check::Finding& f : report.findings) {
    fmt::print(stderr, "rigel convert: suspect: {}: {}\n", path, check::DescribeFinding(f));
  }
  return true;
}

// SaveScene with --reduce-keys: the keys of every take, then each take's keys before and after
// and its largest error, measured on the file read back, on stderr.
void WriteReduced(const Scene& scene, const std::string& out, const ReduceArgs& args,
                  const LoadOptions& read) {
  SaveOptions save;
  save.metres_per_unit = MetresPerUnitOrEstimate(scene);
  save.meshes = scene.meshes;
  save.axes = scene.axes;
  const std::optional<KeyReductionOptions> reduction = ReductionOf(args, save.metres_per_unit);
  std::vector<ClipKeys> keys;
  save.reduce = &*reduction;
  save.reduced = &keys;
  SaveClips(*scene.skeleton, scene.clips, out, save);
  for (std::size_t c = 0; c < keys.size() && c < scene.clips.size(); ++c) {
    std::optional<double> back;
    try {
      back = ReadBackError(scene, scene.clips[c], out, read, c, reduction->virtual_vertex);
    } catch (const std::exception& e) {
      fmt::print(stderr, "rigel convert: warning: {}: error not measured: {}\n", out, e.what());
    }
    fmt::print(stderr,
               "rigel convert: {}: take '{}': keys {} -> {}, largest error {:.4f} mm{} "
               "(bound {} mm, virtual vertex {} mm)\n",
               out, scene.clips[c].name(), keys[c].dense_keys, keys[c].keys,
               keys[c].max_error * 1e3,
               back ? fmt::format(", read back {:.4f} mm", *back * 1e3) : std::string(),
               args.error_mm, args.vertex_mm);
  }
}

// --strict: the suspect outputs are removed and the command fails.
int Judged(const std::vector<std::string>& suspects, bool strict) {
  if (suspects.empty() || !strict) return kExitOk;
  for (const std::string& path : suspects) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    fmt::print(stderr, "rigel convert: error: {}: suspect (--strict): removed\n", path);
  }
  return kExitBadInput;
}

}  // namespace

Runner AddConvertCommand(CLI::App& app) {
  CLI::App* sub =
      app.add_subcommand("convert",
                         "Convert an animation file to another format, chosen by OUT's extension. "
                         "The output is written whole or not at all; the input is never modified.");
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  sub->add_option("IN", *in, "Input file (" + ExtensionsHelp(false) + ")")->required();
  sub->add_option("OUT", *out, "Output file (" + ExtensionsHelp(true) + ")")->required();
  auto unit = std::make_shared<std::string>("file");
  sub->add_option("--unit", *unit, "Convert lengths to: file (unchanged), m or cm")
      ->check(CLI::IsMember({"file", "m", "cm"}));
  auto read = std::make_shared<ReadArgs>();
  AddReadOptions(sub, read.get());
  auto take = std::make_shared<std::string>();
  sub->add_option("--take", *take, "Convert only the take (clip) of this name");
  auto strict = std::make_shared<bool>(false);
  sub->add_flag("--strict", *strict,
                "A suspect output (the written file read back breaks a plausibility check, "
                "docs/checks.md) is removed, exit 1");
  auto reduce = std::make_shared<ReduceArgs>();
  AddReduceOptions(sub, reduce.get());
  return [in, out, unit, read, take, strict, reduce]() {
    try {
      try {  // the same file, a hard link or a symlink to it
        batch::CheckInputsNotOverwritten({*in}, "", {*out});
      } catch (const batch::UsageError& e) {
        fmt::print(stderr, "rigel convert: error: {}\n", e.what());
        return kExitUsage;
      }
      LoadOptions options = ApplyReadArgs(*read);
      options.unit = ParseLengthUnit(*unit).value_or(LengthUnit::kFile);
      Scene scene = LoadScene(*in, options);
      for (const std::string& w : scene.warnings) fmt::print(stderr, "rigel: warning: {}\n", w);
      if (!take->empty()) {
        const std::vector<std::size_t> picked = batch::SelectTakes(scene, *take, *in);
        scene.clips = {std::move(scene.clips[picked.front()])};
      }
      // Nothing silent: meshes a format cannot hold (takes are split below, and said so).
      for (const std::string& w : SceneDroppedBy(*out, scene, scene.clips, 1)) {
        fmt::print(stderr, "rigel: warning: {}\n", w);
      }
      if (reduce->enabled) {
        if (std::string w = ReductionDroppedBy(*out); !w.empty()) {
          fmt::print(stderr, "rigel: warning: {}\n", w);
        }
      }
      if (OneTakePerFile(*out) && scene.clips.size() > 1) {
        // BVH holds one take: one file per take, <OUT stem>.<take>.bvh, named on stderr.
        std::vector<std::string> names;
        for (const Clip& c : scene.clips) names.push_back(c.name());
        const std::vector<std::string> safe = batch::FileSafeTakeNames(names);
        for (std::size_t c = 0; c < scene.clips.size(); ++c) {
          const std::string path = batch::TakeOutputPath(*out, safe[c]);
          Scene one;
          one.skeleton = scene.skeleton;
          one.clips = {scene.clips[c]};
          one.file_unit_metres = scene.file_unit_metres;
          one.estimated_unit_metres = scene.estimated_unit_metres;
          one.length_scale = scene.length_scale;
          SaveScene(one, path);
          fmt::print(stderr, "rigel: warning: {} holds one take: take '{}' written to {}\n",
                     FormatOfPath(*out)->label, scene.clips[c].name(), path);
        }
        std::vector<std::string> suspects;
        for (std::size_t c = 0; c < scene.clips.size(); ++c) {
          const std::string path = batch::TakeOutputPath(*out, safe[c]);
          if (CheckWritten(scene, scene.clips[c], path, options, 0)) suspects.push_back(path);
        }
        return Judged(suspects, *strict);
      }
      if (reduce->enabled && scene.skeleton) {
        WriteReduced(scene, *out, *reduce, options);
      } else {
        SaveScene(scene, *out);
      }
      bool suspect = false;
      for (std::size_t c = 0; c < scene.clips.size(); ++c) {
        suspect = CheckWritten(scene, scene.clips[c], *out, options, c) || suspect;
      }
      return Judged(suspect ? std::vector<std::string>{*out} : std::vector<std::string>{}, *strict);
    } catch (const std::exception& e) {
      fmt::print(stderr, "rigel convert: error: {}\n", e.what());
      return kExitBadInput;
    }
  };
}

}  // namespace rigel::cli
