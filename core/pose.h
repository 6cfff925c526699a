// Pose and forward kinematics.
//
// A joint's local transform (parent_from_joint) is
//   T(rest_translation + (Xposition, Yposition, Zposition)) * R(rest_orientation) * R_channels
// where R_channels is the product of the joint's rotation channels in the order it lists them.
// Position channels are added to the rest offset (BVH semantics: a root OFFSET is added to the
// root's position channels). World (model-space) transforms follow the parent chain:
//   world_from_joint[i] = world_from_joint[parent(i)] * parent_from_joint[i].
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

// Computes world_from_joint of one joint from its parent's (which must be up to date in
// `world`) and the joint's channels: the step ForwardKinematics takes per joint, bit for bit.
void UpdateJointWorld(const Skeleton& skeleton, std::span<const double> channels,
                      std::span<Eigen::Isometry3d> world, int joint);

// Computes world_from_joint for joints [from, num_joints) from a whole Clip row. Joints before
// `from` must already be up to date in `world` (use from = 0 for a full update). `world` must
// hold num_joints transforms; `channels` num_channels values.
void ForwardKinematics(const Skeleton& skeleton, std::span<const double> channels,
                       std::span<Eigen::Isometry3d> world, int from = 0);

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
  // world_from_joint per joint, valid after UpdateWorld().
  std::vector<Eigen::Isometry3d> world;
  // Blend-shape weights of the frame (a clip's weights row, Clip::weights) and the channels they
  // are (Clip::weight_channels); empty when the clip animates none. FK does not read them.
  std::vector<double> weights;
  std::vector<WeightChannel> weight_channels;

  // Copies a clip row into `channels` and updates `world`.
  void SetFromRow(const Skeleton& skeleton, std::span<const double> row);
  // Recomputes world transforms from `channels` (joints >= from).
  void UpdateWorld(const Skeleton& skeleton, int from = 0);

  bool matches(const Skeleton& skeleton) const;
};

}  // namespace rigel

#endif  // RIGEL_CORE_POSE_H_
