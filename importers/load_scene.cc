#include "importers/load_scene.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "core/skeleton_builder.h"
#include "importers/assimp_reader.h"
#include "importers/bvh_reader.h"
#include "importers/isolated_load.h"
#include "importers/scene_codec.h"

namespace rigel {

std::string LowerExtension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

std::optional<LengthUnit> ParseLengthUnit(std::string_view text) {
  if (text == "file") return LengthUnit::kFile;
  if (text == "m") return LengthUnit::kMetre;
  if (text == "cm") return LengthUnit::kCentimetre;
  return std::nullopt;
}

std::vector<std::string> ReadableExtensions() {
  std::vector<std::string> exts{".bvh"};
  for (const std::string& e : AssimpExtensions()) exts.push_back(e);
  return exts;
}

void ScaleSceneLengths(Scene& scene, double factor) {
  if (!std::isfinite(factor) || factor <= 0) {
    throw ImportError(fmt::format("{}: invalid length scale {}", scene.source, factor));
  }
  if (factor == 1.0) return;
  RawSkeleton raw = ToRawSkeleton(*scene.skeleton);
  std::vector<RawSkeleton::Joint*> stack;
  for (auto& r : raw.roots) stack.push_back(&r);
  while (!stack.empty()) {
    RawSkeleton::Joint* j = stack.back();
    stack.pop_back();
    j->rest_translation *= factor;
    for (auto& e : j->end_sites) e *= factor;
    for (auto& c : j->children) stack.push_back(&c);
  }
  std::string error;
  auto skeleton = SkeletonBuilder().Build(raw, &error);
  if (!skeleton) throw ImportError(fmt::format("{}: {}", scene.source, error));
  const auto channels = skeleton->channels();
  for (Clip& clip : scene.clips) {
    for (int f = 0; f < clip.num_frames(); ++f) {
      auto row = clip.frame(f);
      for (std::size_t c = 0; c < channels.size(); ++c) {
        if (IsTranslation(channels[c])) row[c] *= factor;
      }
    }
  }
  scene.skeleton = std::move(skeleton);
  scene.length_scale *= factor;
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
  const double current = file_unit / scene.length_scale;
  ScaleSceneLengths(scene, current / target);
}

Scene LoadScene(const std::string& path) { return LoadScene(path, LoadOptions()); }

Scene LoadScene(const std::string& path, const LoadOptions& options) {
  const std::string ext = LowerExtension(path);
  if (ext == ".bvh") {
    Scene scene = ReadBvh(path, options.bvh);
    ConvertSceneUnit(scene, options.unit);
    return scene;
  }
  const std::vector<std::string> assimp = AssimpExtensions();
  if (std::find(assimp.begin(), assimp.end(), ext) != assimp.end()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      throw ImportError(fmt::format("{}: no such file", path));
    }
    if (options.isolate) return LoadSceneIsolated(path, options);
    Scene scene = ReadWithAssimp(path);
    ConvertSceneUnit(scene, options.unit);
    return scene;
  }
  throw ImportError(fmt::format("{}: unsupported format '{}' (expected {})", path, ext,
                                fmt::join(ReadableExtensions(), ", ")));
}

}  // namespace rigel
