// Binary FBX 7.4 writer, rigel's own (Assimp's FBX exporters write files neither Assimp nor
// Blender read back correctly).
//
// Layout: every joint is a Model of type LimbNode (with a LimbNode NodeAttribute) under the scene
// root, so Blender builds one armature; End Sites are LimbNodes named "<joint>_end". Each joint's
// rest translation is its "Lcl Translation" and its rest orientation its "PreRotation" (with
// RotationActive, so Blender, Assimp, Maya and MotionBuilder all honour it); "Lcl Rotation" is 0 at
// rest, so Blender's armature rest pose is rigel's. A joint without rest orientation and with three
// rotation channels keeps its Euler order ("RotationOrder") and its exact channel values; others
// are written in FBX's default XYZ order (PreRotation is always XYZ in Assimp), re-decomposed with
// continuity. One AnimationStack (with one BaseLayer) per clip, named as the clip, with LINEAR
// keys on every frame: rotation in degrees, translation (joints with position channels) in the
// written unit; curves are float32 as FBX stores them. Lengths are written in metres
// (UnitScaleFactor 100) when the skeleton's unit is known, else as they are (UnitScaleFactor 1):
// Blender builds bones in float32 in file units, and large coordinates (centimetres) lose the
// direction of its minimum-length (0.01) bones. GlobalSettings: Y up, Z front, X right, TimeMode
// from the frame rate. Meshes (FbxOptions::meshes) are written by fbx_mesh.cc (fbx_internal.h).
// Output is deterministic (fixed ids and time stamps).
#ifndef RIGEL_EXPORTERS_FBX_WRITER_H_
#define RIGEL_EXPORTERS_FBX_WRITER_H_

#include <span>
#include <string>

#include "core/axes.h"
#include "core/clip.h"
#include "core/curves/key_reduction.h"
#include "core/mesh.h"
#include "core/skeleton.h"
#include "exporters/atomic_file.h"

namespace rigel {

struct FbxOptions {
  // Length of one skeleton unit in metres (> 0: lengths are written in metres; 0 = unknown: written
  // unchanged, declared as centimetres).
  double metres_per_unit = 0.0;
  // Meshes to write with the skeleton (core/mesh.h): Model + Geometry each, skinned ones with a
  // Skin deformer (a Cluster per joint) and a BindPose, attached ones under their joint's Model.
  std::span<const Mesh> meshes;
  // The axes the data are in: written as GlobalSettings (UpAxis, FrontAxis, CoordAxis with their
  // signs; OriginalUpAxis the source's when it stated one), so readers turn the figure upright.
  // The data are never rotated.
  SceneAxes axes;
  // Reduced keys (core/curves/key_reduction.h), one per clip, from ReduceKeys with
  // FbxEulerCurves: each joint's curves are keyed at its track's frames (LINEAR), a curve whose
  // keyed values are all equal with one key. Empty: every curve is keyed on every frame.
  std::span<const ClipKeys> keys;
};

// How the writer makes each joint's rotation curves (its Euler order, and whether the values are
// the channels' own): the `euler_curves` of KeyReductionOptions for an FBX file.
std::vector<EulerCurveSpec> FbxEulerCurves(const Skeleton& skeleton);

// The FBX file's bytes. Throws ExportError ("<name>: ...") before producing anything, as
// CheckClipsForExport (export_check.h) describes.
std::string FormatFbx(const Skeleton& skeleton, std::span<const Clip> clips,
                      const FbxOptions& options, const std::string& name);

// Writes FormatFbx() to `path` atomically. Throws ExportError.
void WriteFbx(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
              const FbxOptions& options);

}  // namespace rigel

#endif  // RIGEL_EXPORTERS_FBX_WRITER_H_
