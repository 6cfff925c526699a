// Scene: what an importer returns: one skeleton, its clips (takes) and the meshes it moves.
#ifndef RIGEL_CORE_SCENE_H_
#define RIGEL_CORE_SCENE_H_

#include <memory>
#include <string>
#include <vector>

#include "core/axes.h"
#include "core/clip.h"
#include "core/mesh.h"
#include "core/skeleton.h"

namespace rigel {

struct Scene {
  // Shared, immutable: clips, poses, rigs and threads all read the same skeleton.
  std::shared_ptr<const Skeleton> skeleton;
  // One clip per take (BVH: one; FBX: one per animation stack).
  std::vector<Clip> clips;
  // Meshes (FBX, glTF, DAE inputs): skinned to the skeleton, attached to a joint, or static.
  std::vector<Mesh> meshes;
  // Where it came from (the path given to the importer).
  std::string source;
  // Non-fatal findings ("file:line: ..."), already formatted for the user.
  std::vector<std::string> warnings;
  // Length of one unit of the file, in metres (FBX: UnitScaleFactor / 100; glTF: 1); 0 when the
  // file does not say (BVH).
  double file_unit_metres = 0.0;
  // When the file does not state its unit (BVH read without --unit-in): the importer's estimate
  // from the figure's height, in metres per file unit (a warning names it); 0 otherwise. Writers
  // and unit conversion use it when file_unit_metres is 0.
  double estimated_unit_metres = 0.0;
  // Factor the importer multiplied every length by to convert units on request (1 = lengths are
  // in the file's unit). One scene length unit is file_unit_metres / length_scale metres.
  double length_scale = 1.0;
  // The axes the scene's data are in and how they were found: stated by the file (FBX
  // GlobalSettings, glTF's fixed +Y up), inferred from the body (BVH), given by the user (--up,
  // --forward). Lengths and rotations are never changed to match: writers convert (glTF) or state
  // them (FBX GlobalSettings).
  SceneAxes axes;
};

// Length of one scene unit in metres (file_unit_metres / length_scale), or 0 when the file does
// not state its unit. Writers and the retargeter use it to keep lengths in metres.
double MetresPerUnit(const Scene& scene);

// Like MetresPerUnit, but falls back on the unit estimated from the figure's height
// (Scene::estimated_unit_metres, with its warning) when the file states none; 0 when neither is
// known.
double MetresPerUnitOrEstimate(const Scene& scene);

// Multiplies every length of `scene` (rest translations, end sites, position channels) by
// `factor` and records it in scene.length_scale. Returns false and sets `*error` (when given),
// leaving the scene unchanged, when factor is not finite > 0 or the scaled skeleton does not
// build (lengths overflow).
bool ScaleSceneLengths(Scene& scene, double factor, std::string* error = nullptr);

}  // namespace rigel

#endif  // RIGEL_CORE_SCENE_H_
