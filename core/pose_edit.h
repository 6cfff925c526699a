// Writing a joint's channels from a desired rotation or translation: the inverse of one FK step
// of core/pose.h (local = T(rest_translation + position channels) * R(rest_orientation) *
// R_channels). Used by pose:set_world_rotation (Lua) and by the constraints (core/constraints).
#ifndef RIGEL_CORE_POSE_EDIT_H_
#define RIGEL_CORE_POSE_EDIT_H_

#include <Eigen/Geometry>
#include <span>

namespace rigel {

class Skeleton;

// Sets the three rotation channels of `joint` so that R_channels = `channel_rotation` (parent
// space, without the rest orientation), choosing the Euler angles nearest the current ones (no
// 360 degree jumps). Returns false, changing nothing, unless the joint has three rotation
// channels. `channels` is a whole Clip row.
bool SetJointChannelRotation(const Skeleton& skeleton, int joint,
                             const Eigen::Quaterniond& channel_rotation,
                             std::span<double> channels);

// Sets the rotation channels of `joint` so that its world rotation becomes `world_rotation`, given
// its parent's world rotation `world_from_parent` (identity for a root). Same conditions as
// SetJointChannelRotation.
bool SetJointWorldRotation(const Skeleton& skeleton, int joint,
                           const Eigen::Quaterniond& world_from_parent,
                           const Eigen::Quaterniond& world_rotation, std::span<double> channels);

// Sets the position channels of `joint` so its parent-space translation is `local`. Returns false
// (changing nothing) when an axis the joint has no position channel for would have to move by
// more than `tolerance`.
bool SetJointLocalPosition(const Skeleton& skeleton, int joint, const Eigen::Vector3d& local,
                           std::span<double> channels, double tolerance = 1e-9);

}  // namespace rigel

#endif  // RIGEL_CORE_POSE_EDIT_H_
