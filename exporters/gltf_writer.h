// glTF 2.0 writer (.glb binary or .gltf with the buffer embedded as a data URI): the skeleton as
// a node hierarchy with a skin (so Blender imports an armature, not empties), End Sites as leaf
// joints named "<joint>_end", one animation per clip with a LINEAR translation sampler per joint
// that has position channels and a LINEAR rotation sampler (quaternions, sign-continuous) per
// joint, keyed on every frame, and the meshes given (skinned, attached or static). Values are
// float32, as glTF stores them.
#ifndef RIGEL_EXPORTERS_GLTF_WRITER_H_
#define RIGEL_EXPORTERS_GLTF_WRITER_H_

#include <Eigen/Geometry>
#include <span>
#include <string>

#include "core/clip.h"
#include "core/curves/key_reduction.h"
#include "core/mesh.h"
#include "core/skeleton.h"
#include "exporters/atomic_file.h"

namespace rigel {

struct GltfOptions {
  // true: binary .glb; false: .gltf JSON with an embedded base64 buffer.
  bool binary = true;
  // Length of one skeleton unit in metres; lengths are multiplied by it because glTF is in
  // metres. 0 (unknown, e.g. BVH) writes lengths unchanged.
  double metres_per_unit = 0.0;
  // Meshes to write with the skeleton (core/mesh.h): a skinned mesh gets a skin of its own (its
  // joints, inverse bind matrices from its bind pose) on a root node, an attached mesh a node
  // under its joint's node, a static mesh a root node. Material names become glTF materials.
  std::span<const Mesh> meshes;
  // Rotation applied to the whole figure so that the file is in glTF's frame (+Y up, +Z forward):
  // core/axes.h RotationToGltfFrame of the data's axes. It turns the root joints (rest and
  // animation), the skinned and static meshes and the inverse bind matrices; joints below the
  // roots keep their local transforms.
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
  // Reduced keys (core/curves/key_reduction.h), one per clip: each joint's rotation and
  // translation samplers are keyed at its track's frames (sparse LINEAR samplers; a track with
  // one key holds its value). Empty: every sampler is keyed on every frame.
  std::span<const ClipKeys> keys;
};

// The file's bytes for `clips` on `skeleton`. Throws ExportError ("<name>: ...") before producing
// anything when CheckClipsForExport (export_check.h) refuses a clip: it does not match the
// skeleton, has no frame, a frame time that is not finite and > 0, or a NaN/infinite value.
std::string FormatGltf(const Skeleton& skeleton, std::span<const Clip> clips,
                       const GltfOptions& options, const std::string& name);

// glTF has no segment scale compensation (FBX inherit type Rrs, ScaleInheritance::kCompensate):
// every node inherits its parent's scale. The writer divides such a joint's scale by its parent's
// scale, which gives it exactly the world transform it has when the parent's world scale is
// uniform (the same on the three axes) on every frame. The joints of `skeleton` that compensate a
// non-uniform parent scale on some frame of `clips`, which glTF's TRS cannot reproduce: they are
// written inheriting their parent's scale (as Blender 3.4 reads such FBX joints); empty when the
// file holds every joint exactly.
std::vector<std::string> UncompensatedJoints(const Skeleton& skeleton, std::span<const Clip> clips);

// Writes FormatGltf() to `path` atomically. Throws ExportError.
void WriteGltf(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
               const GltfOptions& options);

}  // namespace rigel

#endif  // RIGEL_EXPORTERS_GLTF_WRITER_H_
