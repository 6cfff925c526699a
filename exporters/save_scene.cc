#include "exporters/save_scene.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exporters/bvh_writer.h"
#include "importers/load_scene.h"

namespace rigel {

std::vector<std::string> WritableExtensions() { return {".bvh"}; }

void SaveClip(const Skeleton& skeleton, const Clip& clip, const std::string& path) {
  const std::string ext = LowerExtension(path);
  if (ext == ".bvh") return WriteBvh(skeleton, clip, path);
  throw ExportError(fmt::format("{}: unsupported output format '{}' (expected {})", path, ext,
                                fmt::join(WritableExtensions(), ", ")));
}

void SaveScene(const Scene& scene, const std::string& path) {
  if (!scene.skeleton) throw ExportError(path + ": scene has no skeleton");
  if (scene.clips.size() != 1) {
    throw ExportError(fmt::format("{}: this format holds one clip, the scene has {}", path,
                                  scene.clips.size()));
  }
  SaveClip(*scene.skeleton, scene.clips.front(), path);
}

}  // namespace rigel
