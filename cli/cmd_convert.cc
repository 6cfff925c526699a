// rigel convert IN OUT: read any supported file, write another format (or the same, exactly).
#include <fmt/format.h>

#include <filesystem>

#include "cli/batch/batch.h"
#include "cli/batch/takes.h"
#include "cli/command.h"
#include "cli/format_help.h"
#include "cli/read_options.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "io/file_format.h"

namespace rigel::cli {

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
  return [in, out, unit, read, take]() {
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
      for (const std::string& w :
           DroppedBy(*out, scene.meshes.size(), 1, CountMorphTargets(scene.meshes))) {
        fmt::print(stderr, "rigel: warning: {}\n", w);
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
        return kExitOk;
      }
      SaveScene(scene, *out);
      return kExitOk;
    } catch (const std::exception& e) {
      fmt::print(stderr, "rigel convert: error: {}\n", e.what());
      return kExitBadInput;
    }
  };
}

}  // namespace rigel::cli
