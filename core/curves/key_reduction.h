// Key reduction with a world-space error bound (ACL-style): the fewest keys per joint track such
// that, on every frame, every joint, every end site and every point a stated distance from every
// joint (a "virtual vertex") stays within a stated distance of where the dense clip puts it.
//
// A joint has two tracks: its channel rotation (the product of its rotation channels, without
// the rest orientation) and its channel translation (its position channels). A track's keys are
// frames of the clip; between two keys a reader interpolates. Which interpolation depends on the
// reader, and the keys chosen here hold for all of them at once:
//   - rotation: quaternion slerp (glTF LINEAR, Assimp), normalised component-wise lerp (Blender's
//     glTF import), and, when `euler_curves` is given, linear interpolation of the Euler angles of
//     each curve in that order (FBX curves, as Blender and MotionBuilder evaluate them);
//   - translation: linear.
// A file writer keys each curve at its track's frames (a track with one key holds that value).
#ifndef RIGEL_CORE_CURVES_KEY_REDUCTION_H_
#define RIGEL_CORE_CURVES_KEY_REDUCTION_H_

#include <Eigen/Geometry>
#include <vector>

#include "core/clip.h"
#include "core/euler.h"
#include "core/mesh.h"
#include "core/skeleton.h"

namespace rigel {

// How a file writes a joint's rotation as three Euler curves: in `order`, the channel values
// themselves (`channel_values`: the joint's own order of three channels) or its channel rotation
// decomposed in `order`. See EulerCurve.
struct EulerCurveSpec {
  EulerOrder order = EulerOrder::kZYX;
  bool channel_values = false;
};

struct KeyReductionOptions {
  // Largest distance, in metres, between a point of the reduced clip and the same point of the
  // dense clip on any frame (> 0). Default 0.1 mm.
  double max_error = 1e-4;
  // Distance, in metres, of the virtual vertices from their joint (>= 0). Default 2 cm. Every
  // point at that distance from a joint, whatever its direction, is within max_error.
  double virtual_vertex = 0.02;
  // Metres per length unit of the clip (> 0).
  double metres_per_unit = 1.0;
  // Per joint, how the target file's Euler curves are made (the FBX writer's FbxEulerCurves);
  // empty for formats that store quaternions.
  std::vector<EulerCurveSpec> euler_curves;
};

// The key frames of one joint: sorted, the first is 0; one key means the track holds frame 0's
// value on every frame, else the last key is the last frame. Empty: the joint has no such
// channels.
struct JointKeyFrames {
  std::vector<int> rotation;
  std::vector<int> translation;
};

// The result of ReduceKeys for one clip.
struct ClipKeys {
  // One per joint of the skeleton.
  std::vector<JointKeyFrames> joints;
  // Tracks x frames, and the keys kept (a rotation or translation key of a joint counts one).
  long long dense_keys = 0;
  long long keys = 0;
  // The largest world-space error, in metres, of the reduced clip against the dense one over
  // every interpolation above, measured by forward kinematics on every frame (and, with
  // ReduceWeightKeys, the largest vertex error its weights allow).
  double max_error = 0.0;
  // With ReduceWeightKeys: per blend-shape weight column, its key frames (as a track's above);
  // empty: every frame.
  std::vector<std::vector<int>> weights;
};

// The keys of `clip` (which matches `skeleton` and has at least one frame) for `options`.
// Throws std::invalid_argument when an option is out of range.
ClipKeys ReduceKeys(const Skeleton& skeleton, const Clip& clip, const KeyReductionOptions& options);

// The keys of `clip`'s blend-shape weight columns (core/mesh.h MorphWeightChannels of `meshes`:
// the column order), interpolated linearly between keys (glTF LINEAR samplers, linear FBX
// DeformPercent curves), such that no vertex a target moves lands farther than
// options.max_error from where the dense weights put it, on any frame: a column's weight error
// times its target's largest vertex offset (options.metres_per_unit) is held to max_error over the
// largest number of targets of the mesh that move one vertex (their errors add). Skinning moves
// the offsets rigidly (a scaled bone scales them: the bound is then in bind-pose lengths). Fills
// keys->weights, adds the columns' dense and kept keys to keys->dense_keys and keys->keys, and
// raises keys->max_error to the largest vertex error the kept weights give. No-op when the clip
// animates no weight or `meshes` does not hold its columns' targets.
void ReduceWeightKeys(const Clip& clip, std::span<const Mesh> meshes,
                      const KeyReductionOptions& options, ClipKeys* keys);

// The Euler angles (x, y, z radians) of joint `joint`'s channel rotation on every frame of `clip`
// as `spec` makes them, continuous from frame to frame: the channel values themselves, each frame
// turned into the equivalent nearest the previous frame's (EulerNearest), or the rotation
// decomposed in spec.order nearest the previous frame's angles (MatrixToEulerNear, from zero).
std::vector<Eigen::Vector3d> EulerCurve(const Skeleton& skeleton, const Clip& clip, int joint,
                                        const EulerCurveSpec& spec);

// The world-space error, in metres, of `approximation` against `reference` (both match
// `skeleton`, same frame count): the largest, over frames and joints, of the joint's distance
// plus `virtual_vertex` (metres) times the chord of the angle between the joint's world
// rotations, and of the end sites' distances. Lengths are scaled by `metres_per_unit`.
double WorldError(const Skeleton& skeleton, const Clip& reference, const Clip& approximation,
                  double metres_per_unit, double virtual_vertex);

}  // namespace rigel

#endif  // RIGEL_CORE_CURVES_KEY_REDUCTION_H_
