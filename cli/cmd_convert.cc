// rigel convert IN OUT: read any supported file, write another format (or the same, exactly).
#include <fmt/format.h>

#include <filesystem>

#include "cli/batch/batch.h"
#include "cli/command.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"

namespace rigel::cli {

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
  return [in, out, unit]() {
    try {
      try {  // the same file, a hard link or a symlink to it
        batch::CheckInputsNotOverwritten({*in}, "", {*out});
      } catch (const batch::UsageError& e) {
        fmt::print(stderr, "rigel convert: error: {}\n", e.what());
        return kExitUsage;
      }
      LoadOptions options;
      options.unit = ParseLengthUnit(*unit).value_or(LengthUnit::kFile);
      const Scene scene = LoadScene(*in, options);
      for (const std::string& w : scene.warnings) fmt::print(stderr, "rigel: warning: {}\n", w);
      SaveScene(scene, *out);
      return kExitOk;
    } catch (const std::exception& e) {
      fmt::print(stderr, "rigel convert: error: {}\n", e.what());
      return kExitBadInput;
    }
  };
}

}  // namespace rigel::cli
