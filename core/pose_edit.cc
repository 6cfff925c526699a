// Writing a joint's channels from a desired transform. See pose_edit.h.
#include "core/pose_edit.h"

#include <cmath>
#include <optional>

#include "core/channel.h"
#include "core/euler.h"
#include "core/skeleton.h"

namespace rigel {

bool SetJointChannelRotation(const Skeleton& skeleton, int joint,
                             const Eigen::Quaterniond& channel_rotation,
                             std::span<double> channels) {
  const std::optional<EulerOrder> order = skeleton.rotation_order(joint);
  if (!order) return false;
  const std::span<const int> rot = skeleton.rotation_channels(joint);
  Eigen::Vector3d previous;
  for (int i = 0; i < 3; ++i) previous[ChannelAxis(skeleton.channels()[rot[i]])] = channels[rot[i]];
  const Eigen::Vector3d xyz = QuaternionToEulerNear(channel_rotation, *order, previous);
  for (int i = 0; i < 3; ++i) channels[rot[i]] = xyz[ChannelAxis(skeleton.channels()[rot[i]])];
  return true;
}

bool SetJointWorldRotation(const Skeleton& skeleton, int joint,
                           const Eigen::Quaterniond& world_from_parent,
                           const Eigen::Quaterniond& world_rotation, std::span<double> channels) {
  return SetJointChannelRotation(
      skeleton, joint,
      skeleton.rest_orientation(joint).conjugate() * world_from_parent.conjugate() * world_rotation,
      channels);
}

bool SetJointLocalPosition(const Skeleton& skeleton, int joint, const Eigen::Vector3d& local,
                           std::span<double> channels, double tolerance) {
  const Eigen::Vector3d delta = local - skeleton.rest_translation(joint);
  for (int a = 0; a < 3; ++a) {
    if (skeleton.translation_channel(joint, a) < 0 && std::abs(delta[a]) > tolerance) return false;
  }
  for (int a = 0; a < 3; ++a) {
    const int c = skeleton.translation_channel(joint, a);
    if (c >= 0) channels[c] = delta[a];
  }
  return true;
}

}  // namespace rigel
