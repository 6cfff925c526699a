// SaveClip: the one entry point for writing an animation file, dispatching on its extension
// through the formats table (io/file_format.h).
#ifndef RIGEL_EXPORTERS_SAVE_SCENE_H_
#define RIGEL_EXPORTERS_SAVE_SCENE_H_

#include <span>
#include <string>
#include <vector>

#include "core/curves/key_reduction.h"
#include "core/scene.h"
#include "exporters/atomic_file.h"
#include "io/file_format.h"  // WritableExtensions, FileFormats: which format writes what

namespace rigel {

struct SaveOptions {
  // Length of one skeleton unit in metres, 0 when unknown. glTF writes metres (lengths are
  // converted when this is known); FBX records it as UnitScaleFactor (centimetres per unit,
  // 1 when unknown). BVH ignores it.
  double metres_per_unit = 0.0;
  // Meshes moved by the skeleton (core/mesh.h), written by glTF and FBX; BVH holds none
  // (DroppedBy names what a format leaves out).
  std::span<const Mesh> meshes;
  // The axes the data are in (Scene::axes). glTF is always written +Y up, +Z forward: the figure
  // is turned into that frame (RotationToGltfFrame); FBX states them in GlobalSettings; BVH keeps
  // the data's own axes.
  SceneAxes axes;
  // Key reduction (core/curves/key_reduction.h; its metres_per_unit is the clip's unit, which the
  // caller knows or estimates): FBX and glTF key each joint's curves at the frames ReduceKeys
  // chooses for their format (FBX: Euler curves; glTF: quaternions); BVH keys every frame by
  // format (ReductionDroppedBy says so). Null: every curve is keyed on every frame.
  const KeyReductionOptions* reduce = nullptr;
  // With `reduce`: receives each written clip's keys (empty for BVH).
  std::vector<ClipKeys>* reduced = nullptr;
};

// The warning for key reduction asked of a format that keys every frame (BVH), "" otherwise.
std::string ReductionDroppedBy(const std::string& path);

// What writing `meshes` meshes (with `blend_shapes` morph targets and `polygons` polygons of more
// than three corners among them, CountPolygons) and `takes` takes to `path` leaves out, one line
// each, "" when nothing ("out.bvh: BVH holds no mesh: 2 meshes not written"; glTF holds
// triangles). Callers print it as a warning and put it in their report: nothing is silent.
std::vector<std::string> DroppedBy(const std::string& path, std::size_t meshes, std::size_t takes,
                                   std::size_t blend_shapes = 0, std::size_t polygons = 0);

// What writing `skeleton` and the bone scale of `clips` to `path` loses, one line each, empty
// when nothing: glTF and FBX hold scale (glTF not FBX's kCompensate inheritance under a
// non-uniform parent scale: those joints are named); BVH folds a static uniform scale into the
// offsets and drops the rest, naming the joints, and its End Sites have no names (the named
// ones are listed). Callers print it as a warning and put it in their report, like DroppedBy.
std::vector<std::string> SkeletonDroppedBy(const std::string& path, const Skeleton& skeleton,
                                           std::span<const Clip> clips);

// What writing data in `axes` to `path` leaves unsaid, one line or "": BVH states no axes and
// keeps the data's own, so data that are not +Y up read turned in every reader that takes BVH as
// +Y up (Blender, MotionBuilder), unless told the axes (rigel: --up). Callers print it as a
// warning and put it in their report, like DroppedBy.
std::string AxesDroppedBy(const std::string& path, const SceneAxes& axes);

// All three for writing `scene`'s meshes with `clips` (as `takes` takes) to `path`: DroppedBy's
// lines, then SkeletonDroppedBy's, then AxesDroppedBy's; what `rigel convert`, Lua's
// scene:save and Python's rigel.save say.
std::vector<std::string> SceneDroppedBy(const std::string& path, const Scene& scene,
                                        std::span<const Clip> clips, std::size_t takes);

// Writes one clip of `skeleton` to `path` (atomically), in the format its extension selects.
// Throws ExportError naming the file.
void SaveClip(const Skeleton& skeleton, const Clip& clip, const std::string& path);

// Writes several clips (takes) of one skeleton: glTF (one animation each) and FBX (one animation
// stack each) hold any number; BVH requires exactly one. Throws ExportError naming the file.
void SaveClips(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
               const SaveOptions& options = {});

// Writes a whole scene, with its unit (Scene::file_unit_metres / length_scale). Formats with one
// take per file (BVH) require exactly one clip.
void SaveScene(const Scene& scene, const std::string& path);

}  // namespace rigel

#endif  // RIGEL_EXPORTERS_SAVE_SCENE_H_
