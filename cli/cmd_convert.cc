// rigel convert IN OUT: read any supported file, write another format (or the same, exactly).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <filesystem>

#include "cli/batch/batch.h"
#include "cli/command.h"
#include "cli/read_options.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "io/file_format.h"

namespace rigel::cli {
namespace {

// A take name usable in a file name: letters, digits, '-' and '_' kept, anything else '_'; the
// take's index when nothing is left.
std::string FileSafe(const std::string& name, std::size_t index) {
  std::string safe;
  for (const char ch : name) {
    const bool keep = std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_';
    safe.push_back(keep ? ch : '_');
  }
  if (safe.find_first_not_of('_') == std::string::npos) safe = fmt::format("take{}", index + 1);
  return safe;
}

}  // namespace

Runner AddConvertCommand(CLI::App& app) {
  CLI::App* sub =
      app.add_subcommand("convert",
                         "Convert an animation file to another format, chosen by OUT's extension. "
                         "The output is written whole or not at all; the input is never modified.");
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  sub->add_option("IN", *in, "Input file (.bvh, .fbx, .glb, .gltf, .dae)")->required();
  sub->add_option("OUT", *out, "Output file (.bvh, .glb, .gltf, .fbx)")->required();
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
        std::vector<Clip> picked;
        std::vector<std::string> names;
        for (Clip& c : scene.clips) {
          names.push_back(fmt::format("'{}'", c.name()));
          if (c.name() == *take) picked.push_back(std::move(c));
        }
        if (picked.empty()) {
          fmt::print(stderr, "rigel convert: error: {}: no take '{}' (takes: {})\n", *in, *take,
                     fmt::join(names, ", "));
          return kExitBadInput;
        }
        scene.clips = std::move(picked);
      }
      if (LowerExtension(*out) == ".bvh" && scene.clips.size() > 1) {
        // BVH holds one take: one file per take, <OUT stem>.<take>.bvh, named on stderr.
        const std::filesystem::path base(*out);
        for (std::size_t c = 0; c < scene.clips.size(); ++c) {
          const std::string path =
              (base.parent_path() /
               fmt::format("{}.{}.bvh", base.stem().string(), FileSafe(scene.clips[c].name(), c)))
                  .string();
          Scene one;
          one.skeleton = scene.skeleton;
          one.clips = {scene.clips[c]};
          one.file_unit_metres = scene.file_unit_metres;
          one.estimated_unit_metres = scene.estimated_unit_metres;
          one.length_scale = scene.length_scale;
          SaveScene(one, path);
          fmt::print(stderr, "rigel: warning: BVH holds one take: take '{}' written to {}\n",
                     scene.clips[c].name(), path);
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
