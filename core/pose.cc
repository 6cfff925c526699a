#include "core/pose.h"

#include <algorithm>
#include <cassert>

#include "core/skeleton.h"

namespace rigel {

Eigen::Matrix3d LocalRotation(const Skeleton& skeleton, int joint,
                              std::span<const double> channels) {
  Eigen::Matrix3d r = skeleton.rest_orientation(joint).toRotationMatrix();
  const std::span<const ChannelType> layout = skeleton.channels();
  for (const int c : skeleton.rotation_channels(joint)) {
    r = r * Eigen::AngleAxisd(channels[c], Eigen::Vector3d::Unit(ChannelAxis(layout[c])))
                .toRotationMatrix();
  }
  return r;
}

Eigen::Isometry3d LocalTransform(const Skeleton& skeleton, int joint,
                                 std::span<const double> channels) {
  Eigen::Vector3d t = skeleton.rest_translation(joint);
  for (int axis = 0; axis < 3; ++axis) {
    const int c = skeleton.translation_channel(joint, axis);
    if (c >= 0) t[axis] += channels[c];
  }
  Eigen::Isometry3d local;
  local.linear() = LocalRotation(skeleton, joint, channels);
  local.translation() = t;
  local.makeAffine();
  return local;
}

void ForwardKinematics(const Skeleton& skeleton, std::span<const double> channels,
                       std::span<Eigen::Isometry3d> world, int from) {
  assert(static_cast<int>(world.size()) >= skeleton.num_joints() && "world span too small");
  assert(static_cast<int>(channels.size()) >= skeleton.num_channels() && "channel span too small");
  const std::span<const int> parents = skeleton.parents();
  for (int i = std::max(from, 0); i < skeleton.num_joints(); ++i) {
    const Eigen::Isometry3d local = LocalTransform(skeleton, i, channels);
    const int p = parents[i];
    world[i] = p == Skeleton::kNoParent ? local : world[p] * local;
  }
}

Eigen::Vector3d EndSitePosition(const Skeleton& skeleton, std::span<const Eigen::Isometry3d> world,
                                int end_site) {
  const EndSite& e = skeleton.end_sites()[end_site];
  return world[e.parent] * e.offset;
}

Pose::Pose(const Skeleton& skeleton)
    : channels(skeleton.num_channels(), 0.0),
      world(skeleton.num_joints(), Eigen::Isometry3d::Identity()) {
  UpdateWorld(skeleton);
}

void Pose::SetFromRow(const Skeleton& skeleton, std::span<const double> row) {
  assert(static_cast<int>(row.size()) == skeleton.num_channels());
  std::copy(row.begin(), row.end(), channels.begin());
  UpdateWorld(skeleton);
}

void Pose::UpdateWorld(const Skeleton& skeleton, int from) {
  ForwardKinematics(skeleton, channels, world, from);
}

bool Pose::matches(const Skeleton& skeleton) const {
  return static_cast<int>(channels.size()) == skeleton.num_channels() &&
         static_cast<int>(world.size()) == skeleton.num_joints();
}

}  // namespace rigel
