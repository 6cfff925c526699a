#include "exporters/save_scene.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exporters/bvh_writer.h"
#include "exporters/fbx_writer.h"
#include "exporters/gltf_writer.h"
#include "io/file_format.h"

namespace rigel {

std::vector<std::string> WritableExtensions() { return {".bvh", ".glb", ".gltf", ".fbx"}; }

std::vector<std::string> DroppedBy(const std::string& path, std::size_t meshes, std::size_t takes) {
  std::vector<std::string> dropped;
  const std::string ext = LowerExtension(path);
  if (meshes > 0 && ext == ".bvh") {
    dropped.push_back(fmt::format(
        "{}: BVH holds no mesh: {} mesh{} not written (write .glb or .fbx to keep them)", path,
        meshes, meshes == 1 ? "" : "es"));
  }
  if (takes > 1 && ext == ".bvh") {
    dropped.push_back(
        fmt::format("{}: BVH holds one take: {} takes need a file each", path, takes));
  }
  return dropped;
}

void SaveClip(const Skeleton& skeleton, const Clip& clip, const std::string& path) {
  SaveClips(skeleton, std::span<const Clip>(&clip, 1), path);
}

void SaveClips(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
               const SaveOptions& options) {
  const std::string ext = LowerExtension(path);
  if (ext == ".bvh") {
    if (clips.size() != 1) {
      throw ExportError(
          fmt::format("{}: BVH holds one clip, the scene has {} (write .glb or .fbx "
                      "to keep them all)",
                      path, clips.size()));
    }
    return WriteBvh(skeleton, clips.front(), path);
  }
  if (ext == ".glb" || ext == ".gltf") {
    GltfOptions gltf;
    gltf.binary = ext == ".glb";
    gltf.metres_per_unit = options.metres_per_unit;
    gltf.meshes = options.meshes;
    gltf.rotation = RotationToGltfFrame(options.axes);
    return WriteGltf(skeleton, clips, path, gltf);
  }
  if (ext == ".fbx") {
    FbxOptions fbx;
    fbx.metres_per_unit = options.metres_per_unit;
    fbx.meshes = options.meshes;
    fbx.axes = options.axes;
    return WriteFbx(skeleton, clips, path, fbx);
  }
  throw ExportError(fmt::format("{}: unsupported output format '{}' (expected {})", path, ext,
                                fmt::join(WritableExtensions(), ", ")));
}

void SaveScene(const Scene& scene, const std::string& path) {
  if (!scene.skeleton) throw ExportError(path + ": scene has no skeleton");
  SaveOptions options;
  options.metres_per_unit = MetresPerUnitOrEstimate(scene);
  options.meshes = scene.meshes;
  options.axes = scene.axes;
  SaveClips(*scene.skeleton, scene.clips, path, options);
}

}  // namespace rigel
