#include "exporters/save_scene.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "exporters/bvh_writer.h"
#include "exporters/export_check.h"
#include "exporters/fbx_writer.h"
#include "exporters/gltf_writer.h"
#include "io/file_format.h"

namespace rigel {

// The writers' rows in io/file_format.cc point here: each turns SaveOptions into its writer's.
void WriteBvhFormat(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
                    const SaveOptions& options /*BVH holds no unit, no mesh, no sparse keys*/) {
  if (options.reduced) options.reduced->clear();
  WriteBvh(skeleton, clips.front(), path);
}

namespace {

// The keys of every clip (joints, and the blend-shape weights of options.meshes) for the format
// whose Euler curves are `euler_curves` (empty: quaternion samplers), or nothing when no
// reduction is asked.
std::vector<ClipKeys> ReduceFor(const Skeleton& skeleton, std::span<const Clip> clips,
                                const std::string& path, const SaveOptions& options,
                                std::vector<EulerCurveSpec> euler_curves) {
  std::vector<ClipKeys> keys;
  if (options.reduce == nullptr) return keys;
  KeyReductionOptions reduce = *options.reduce;
  reduce.euler_curves = std::move(euler_curves);
  try {
    for (const Clip& clip : clips) {
      keys.push_back(ReduceKeys(skeleton, clip, reduce));
      ReduceWeightKeys(clip, options.meshes, reduce, &keys.back());
    }
  } catch (const std::invalid_argument& e) {
    throw ExportError(path + ": " + e.what());
  }
  if (options.reduced) *options.reduced = keys;
  return keys;
}

void WriteGltfAs(bool binary, const Skeleton& skeleton, std::span<const Clip> clips,
                 const std::string& path, const SaveOptions& options) {
  GltfOptions gltf;
  gltf.binary = binary;
  gltf.metres_per_unit = options.metres_per_unit;
  gltf.meshes = options.meshes;
  gltf.rotation = RotationToGltfFrame(options.axes);
  CheckClipsForExport(skeleton, clips, path, options.meshes);
  const std::vector<ClipKeys> keys = ReduceFor(skeleton, clips, path, options, {});
  gltf.keys = keys;
  WriteGltf(skeleton, clips, path, gltf);
}

}  // namespace

void WriteGlbFormat(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
                    const SaveOptions& options) {
  WriteGltfAs(true, skeleton, clips, path, options);
}

void WriteGltfFormat(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
                     const SaveOptions& options) {
  WriteGltfAs(false, skeleton, clips, path, options);
}

void WriteFbxFormat(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
                    const SaveOptions& options) {
  FbxOptions fbx;
  fbx.metres_per_unit = options.metres_per_unit;
  fbx.meshes = options.meshes;
  fbx.axes = options.axes;
  CheckClipsForExport(skeleton, clips, path, options.meshes);
  const std::vector<ClipKeys> keys =
      ReduceFor(skeleton, clips, path, options, FbxEulerCurves(skeleton));
  fbx.keys = keys;
  WriteFbx(skeleton, clips, path, fbx);
}

std::string ReductionDroppedBy(const std::string& path) {
  const FileFormat* format = FormatOfPath(path);
  if (format == nullptr || format->write == nullptr || format->sparse_keys) return "";
  return fmt::format("{}: {} keys every channel on every frame by format: keys not reduced", path,
                     format->label);
}

std::vector<std::string> DroppedBy(const std::string& path, std::size_t meshes, std::size_t takes,
                                   std::size_t blend_shapes, std::size_t polygons) {
  std::vector<std::string> dropped;
  const FileFormat* format = FormatOfPath(path);
  if (format == nullptr) return dropped;
  if (meshes > 0 && !format->meshes) {
    dropped.push_back(
        fmt::format("{}: {} holds no mesh: {} mesh{} not written (write .glb or .fbx to keep them)",
                    path, format->label, meshes, meshes == 1 ? "" : "es"));
  }
  if (blend_shapes > 0 && !format->blend_shapes) {
    dropped.push_back(fmt::format(
        "{}: {} holds no blend shape: {} blend shape{} and their weights not written (write .glb "
        "or .fbx to keep them)",
        path, format->label, blend_shapes, blend_shapes == 1 ? "" : "s"));
  }
  if (polygons > 0 && format->meshes && !format->polygons) {
    dropped.push_back(fmt::format(
        "{}: {} holds triangles: {} polygon{} of more than 3 corners written as triangle fans "
        "(write .fbx to keep {})",
        path, format->label, polygons, polygons == 1 ? "" : "s", polygons == 1 ? "it" : "them"));
  }
  if (takes > 1 && !format->several_takes) {
    dropped.push_back(fmt::format("{}: {} holds one take: {} takes need a file each", path,
                                  format->label, takes));
  }
  return dropped;
}

std::vector<std::string> SkeletonDroppedBy(const std::string& path, const Skeleton& skeleton,
                                           std::span<const Clip> clips) {
  std::vector<std::string> dropped;
  const FileFormat* format = FormatOfPath(path);
  if (format == nullptr) return dropped;
  if (format->name == "bvh") {
    std::vector<std::string> named;
    for (const EndSite& e : skeleton.end_sites()) {
      if (!e.name.empty()) named.push_back(e.name);
    }
    if (!named.empty()) {
      dropped.push_back(fmt::format(
          "{}: BVH End Sites have no names: {} leaf joint{} written as {} without {} ({}) "
          "(write .glb or .fbx to keep {})",
          path, named.size(), named.size() == 1 ? "" : "s",
          named.size() == 1 ? "an End Site" : "End Sites",
          named.size() == 1 ? "its name" : "their names", fmt::join(named, ", "),
          named.size() == 1 ? "it" : "them"));
    }
  }
  if (!skeleton.has_scale()) return dropped;
  if (format->name == "bvh") {
    for (const Clip& clip : clips) {
      const std::vector<std::string> joints = UnfoldableScaleJoints(skeleton, clip);
      if (joints.empty()) continue;
      dropped.push_back(fmt::format(
          "{}: BVH holds no scale: the animated or non-uniform scale of {} joint{} ({}){} not "
          "written; every joint keeps its world position (the joints below get position "
          "channels), End Sites keep the rest pose's, and a skin loses the scale (write .glb or "
          ".fbx to keep it)",
          path, joints.size(), joints.size() == 1 ? "" : "s", fmt::join(joints, ", "),
          clip.name().empty() ? "" : fmt::format(" in take '{}'", clip.name())));
    }
    return dropped;
  }
  if (format->name == "glb" || format->name == "gltf") {
    const std::vector<std::string> joints = UncompensatedJoints(skeleton, clips);
    if (!joints.empty()) {
      dropped.push_back(fmt::format(
          "{}: glTF has no segment scale compensation (FBX inherit type Rrs): {} joint{} ({}) "
          "under a non-uniform parent scale written inheriting it (write .fbx to keep it)",
          path, joints.size(), joints.size() == 1 ? "" : "s", fmt::join(joints, ", ")));
    }
  }
  return dropped;
}

std::string AxesDroppedBy(const std::string& path, const SceneAxes& axes) {
  const FileFormat* format = FormatOfPath(path);
  if (format == nullptr || format->name != "bvh") return "";
  const SignedAxis up = axes.up.value;
  if (up.axis == 1 && up.sign > 0) return "";
  return fmt::format(
      "{}: BVH states no axes: the data stay {}{} up as the source's, and readers that take BVH as "
      "+Y up (Blender, MotionBuilder) show the figure turned; read it back with --up {}{} (write "
      ".glb, always +Y up, or .fbx, which states its axes, to keep them)",
      path, up.sign > 0 ? '+' : '-', "XYZ"[std::clamp(up.axis, 0, 2)], up.sign > 0 ? '+' : '-',
      "XYZ"[std::clamp(up.axis, 0, 2)]);
}

std::vector<std::string> SceneDroppedBy(const std::string& path, const Scene& scene,
                                        std::span<const Clip> clips, std::size_t takes) {
  std::vector<std::string> dropped =
      DroppedBy(path, scene.meshes.size(), takes, CountMorphTargets(scene.meshes),
                CountPolygons(scene.meshes));
  if (scene.skeleton) {
    for (std::string& line : SkeletonDroppedBy(path, *scene.skeleton, clips)) {
      dropped.push_back(std::move(line));
    }
  }
  if (std::string axes = AxesDroppedBy(path, scene.axes); !axes.empty()) {
    dropped.push_back(std::move(axes));
  }
  return dropped;
}

void SaveClip(const Skeleton& skeleton, const Clip& clip, const std::string& path) {
  SaveClips(skeleton, std::span<const Clip>(&clip, 1), path);
}

void SaveClips(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
               const SaveOptions& options) {
  const FileFormat* format = FormatOfPath(path);
  if (format == nullptr || format->write == nullptr) {
    throw ExportError(fmt::format("{}: unsupported output format '{}' (expected {})", path,
                                  LowerExtension(path), fmt::join(WritableExtensions(), ", ")));
  }
  if (!format->several_takes && clips.size() != 1) {
    throw ExportError(
        fmt::format("{}: {} holds one clip, the scene has {} (write .glb or .fbx "
                    "to keep them all)",
                    path, format->label, clips.size()));
  }
  format->write(skeleton, clips, path, options);
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
