// Assimp front: FBX, glTF/GLB, DAE (and whatever else Assimp reads) -> Scene, normalised.
//
// - Joints are the bone hierarchy: mesh skin bones, nodes that an animation moves, and their
//   ancestors (not the scene root unless it is itself a bone or animated). Cameras and lights are
//   left out; when several separate trees remain, single-node trees that are not skin bones (an
//   animated camera target, a prop) are dropped with a warning.
// - `$AssimpFbx$` helper chains (PreRotation, Translation, Rotation, ...) collapse into the one
//   joint they belong to. Without a bind pose the joint's rest pose is the chain's static
//   translation and pre-/post-rotation (the rest orientation carries the pre-rotation) and the
//   channels carry the FBX "Lcl Rotation".
// - Rest pose: the bind pose of skin bones (from the mesh's inverse bind matrices); for every
//   other joint the node transform stored in the file (for a skeleton-only FBX that is the pose at
//   the frame the file was saved on).
// - Every joint gets three rotation channels (Zrotation Yrotation Xrotation, i.e. FBX's default
//   "XYZ" order, continuous from frame to frame); roots, and joints whose translation is animated
//   away from the rest, also get Xposition Yposition Zposition.
// - Scale is not a channel: uniform scale on ancestors (Blender's 100x armature) is folded into
//   the translations below it; non-uniform scale is approximated and reported in warnings.
// - One clip per animation (FBX animation stack), named as in the file. Frame rate: FBX key
//   times are in frames (ticks per second = frame rate, rounded when within 0.1%: 30.000029 ->
//   30); other formats (glTF: milliseconds) take the rate from the smallest key spacing (snapped
//   to a whole number within 0.1%; below 12 fps, 30 fps). Keys are resampled to every frame
//   (linear/slerp) from 0 to the animation's duration.
// - A channel that targets a node missing from the scene is an ImportError.
// - Units: FBX UnitScaleFactor (centimetres per unit) and glTF (metres) and DAE (Assimp converts
//   to metres) fill Scene::file_unit_metres; lengths are returned in file units.
#ifndef RIGEL_IMPORTERS_ASSIMP_READER_H_
#define RIGEL_IMPORTERS_ASSIMP_READER_H_

#include <string>
#include <vector>

#include "core/scene.h"
#include "importers/import_error.h"

struct aiScene;

namespace rigel {

// Converts a scene Assimp has read from `path` (used in messages) as ReadWithAssimp does. Throws
// ImportError.
Scene ConvertAssimpScene(const aiScene& scene, const std::string& path);

// Reads `path` through Assimp in this process. Throws ImportError naming the file. Debian's Assimp
// is a debug build that abort()s on some corrupt files: callers should use LoadSceneIsolated.
Scene ReadWithAssimp(const std::string& path);

// Extensions handed to Assimp by LoadScene (lower case, with the dot).
std::vector<std::string> AssimpExtensions();

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_ASSIMP_READER_H_
