#include "importers/load_scene.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "importers/assimp_reader.h"
#include "importers/bvh_reader.h"
#include "importers/isolated_load.h"
#include "importers/scene_codec.h"
#include "io/file_format.h"

namespace rigel {

std::optional<LengthUnit> ParseLengthUnit(std::string_view text) {
  if (text == "file") return LengthUnit::kFile;
  if (text == "m") return LengthUnit::kMetre;
  if (text == "cm") return LengthUnit::kCentimetre;
  return std::nullopt;
}

void ConvertSceneUnit(Scene& scene, LengthUnit unit) {
  if (unit == LengthUnit::kFile) return;
  const double target = unit == LengthUnit::kMetre ? 1.0 : 0.01;
  const double file_unit =
      scene.file_unit_metres > 0 ? scene.file_unit_metres : scene.estimated_unit_metres;
  if (!(file_unit > 0)) {
    throw ImportError(fmt::format(
        "{}: the file does not state its length unit, so it cannot be converted to {} (use "
        "--unit file)",
        scene.source, unit == LengthUnit::kMetre ? "metres" : "centimetres"));
  }
  std::string error;
  if (!ScaleSceneLengths(scene, MetresPerUnitOrEstimate(scene) / target, &error)) {
    throw ImportError(fmt::format("{}: {}", scene.source, error));
  }
}

Scene LoadScene(const std::string& path) { return LoadScene(path, LoadOptions()); }

// The readers' rows in io/file_format.cc point here.
Scene ReadBvhFormat(const std::string& path, const LoadOptions& options) {
  Scene scene = ReadBvh(path, options.bvh);
  ResolveSceneFacts(scene, options.axes);
  ConvertSceneUnit(scene, options.unit);
  return scene;
}

Scene ReadAssimpFormat(const std::string& path, const LoadOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw ImportError(fmt::format("{}: no such file", path));
  }
  Scene scene = options.isolate ? LoadSceneIsolated(path, options) : ReadWithAssimp(path);
  ResolveSceneFacts(scene, options.axes);
  if (!options.isolate) ConvertSceneUnit(scene, options.unit);
  return scene;
}

Scene LoadScene(const std::string& path, const LoadOptions& options) {
  const FileFormat* format = FormatOfPath(path);
  if (format != nullptr && format->read != nullptr) return format->read(path, options);
  throw ImportError(fmt::format("{}: unsupported format '{}' (expected {})", path,
                                LowerExtension(path), fmt::join(ReadableExtensions(), ", ")));
}

}  // namespace rigel
