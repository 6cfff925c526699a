// Pose and forward kinematics.
//
// A joint's local transform (parent_from_joint) is
//   T(rest_translation + (Xposition, Yposition, Zposition)) * R(rest_orientation) * R_channels
// where R_channels is the product of the joint's rotation channels in the order it lists them.
// Position channels are added to the rest offset (BVH semantics: a root OFFSET is added to the
// root's position channels). World (model-space) transforms follow the parent chain:
//   world_from_joint[i] = world_from_joint[parent(i)] * parent_from_joint[i].
//
// Scale (skeletons with scale channels, Skeleton::has_scale): the local transform is
//   T(rest_translation + position channels) * R(rest_orientation) * R_channels * S
// with S = diag(1 + scale channels). World transforms then stay rigid: `world` holds each
// joint's exact world position and its rotation frame (the product of the rotations alone), and a
// second array (Pose::linear) the full world linear part, rotation frame times scale:
//   linear[i]   = linear[parent] * R_i * S_i   (kCompensate: rotation frame of parent * R_i * S_i)
//   position[i] = position[parent] + linear[parent] * t_i
// Skinning and the writers read `linear`; solvers, checks and constraints the rigid `world`.
// Without scale channels nothing of this runs (FK is the rigid product above, bit for bit).
#ifndef RIGEL_CORE_POSE_H_
#define RIGEL_CORE_POSE_H_

#include <Eigen/Geometry>
#include <span>
#include <vector>

#include "core/clip.h"

namespace rigel {

class Skeleton;

// Local transform of `joint` from its channel values (`channels` is a whole Clip row).
Eigen::Isometry3d LocalTransform(const Skeleton& skeleton, int joint,
                                 std::span<const double> channels);

// Rotation part of LocalTransform, without the translation.
Eigen::Matrix3d LocalRotation(const Skeleton& skeleton, int joint,
                              std::span<const double> channels);

// The same rotation as a quaternion, the product of one angle-axis quaternion per rotation channel
// in product order (curve tools that compare and interpolate rotations use it).
Eigen::Quaterniond LocalQuaternion(const Skeleton& skeleton, int joint,
                                   std::span<const double> channels);

// The joint's own scale per axis: 1 + its scale channels (1 on axes without one).
Eigen::Vector3d LocalScale(const Skeleton& skeleton, int joint, std::span<const double> channels);

// Computes world_from_joint of one joint from its parent's (which must be up to date in
// `world`) and the joint's channels: the step ForwardKinematics takes per joint, bit for bit.
void UpdateJointWorld(const Skeleton& skeleton, std::span<const double> channels,
                      std::span<Eigen::Isometry3d> world, int joint);

// Computes world_from_joint for joints [from, num_joints) from a whole Clip row. Joints before
// `from` must already be up to date in `world` (use from = 0 for a full update). `world` must
// hold num_joints transforms; `channels` num_channels values.
void ForwardKinematics(const Skeleton& skeleton, std::span<const double> channels,
                       std::span<Eigen::Isometry3d> world, int from = 0);

// ForwardKinematics of every joint that also fills `linear` (num_joints world linear parts, see
// above); for any skeleton (without scale, linear == world's rotation).
void ForwardKinematicsScaled(const Skeleton& skeleton, std::span<const double> channels,
                             std::span<Eigen::Isometry3d> world, std::span<Eigen::Matrix3d> linear);

// World position of an End Site given the world transforms.
Eigen::Vector3d EndSitePosition(const Skeleton& skeleton, std::span<const Eigen::Isometry3d> world,
                                int end_site);

// Writes the rotation channels of `joint` in `row` so that its channel rotation (R_channels
// above) is `rotation`, as close as its 1, 2 or 3 rotation channels allow, continuous with the
// values in `near` (a whole row; may alias `row`). A joint without rotation channels is left
// alone.
void SetRotationChannels(const Skeleton& skeleton, int joint, const Eigen::Matrix3d& rotation,
                         std::span<double> row, std::span<const double> near);

// One frame's state for one character: its channel values and the world transforms of its
// joints. Per-thread, never shared; sized from a Skeleton.
class Pose {
 public:
  Pose() = default;
  // Rest pose: all channels zero, world transforms computed.
  explicit Pose(const Skeleton& skeleton);

  // Channel values, in the skeleton's layout (radians / file units).
  std::vector<double> channels;
  // world_from_joint per joint, valid after UpdateWorld(): exact positions and rotation frames.
  std::vector<Eigen::Isometry3d> world;
  // World linear parts (rotation frame times scale) per joint, filled by UpdateWorld() only when
  // the skeleton has scale channels; empty otherwise (then the linear part is world's rotation).
  std::vector<Eigen::Matrix3d> linear;
  // Blend-shape weights of the frame (a clip's weights row, Clip::weights) and the channels they
  // are (Clip::weight_channels); empty when the clip animates none. FK does not read them.
  std::vector<double> weights;
  std::vector<WeightChannel> weight_channels;

  // Copies a clip row into `channels` and updates `world`.
  void SetFromRow(const Skeleton& skeleton, std::span<const double> row);
  // Recomputes world transforms from `channels` (joints >= from).
  void UpdateWorld(const Skeleton& skeleton, int from = 0);

  bool matches(const Skeleton& skeleton) const;

  // The world transform of `joint` with its scale (world[joint] when the skeleton has none).
  Eigen::Affine3d ScaledWorld(int joint) const;
};

}  // namespace rigel

#endif  // RIGEL_CORE_POSE_H_
