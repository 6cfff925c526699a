// Copy scale. See copy_scale.h.
#include "core/constraints/copy_scale.h"

#include <vector>

#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

namespace {

// World scale of every joint: the lengths of the columns of its world linear part.
std::vector<Eigen::Vector3d> WorldScales(const Skeleton& skeleton, const Pose& pose) {
  std::vector<Eigen::Isometry3d> world(skeleton.num_joints());
  std::vector<Eigen::Matrix3d> linear(skeleton.num_joints());
  ForwardKinematicsScaled(skeleton, pose.channels, world, linear);
  std::vector<Eigen::Vector3d> out(skeleton.num_joints());
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    out[j] =
        Eigen::Vector3d(linear[j].col(0).norm(), linear[j].col(1).norm(), linear[j].col(2).norm());
  }
  return out;
}

}  // namespace

bool CopyScaleConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  if (!CheckCommon(skeleton, "copy_scale", joint, target, true, influence, error)) return false;
  if ((axes & kAllAxes) == 0) {
    if (error != nullptr) *error = "copy_scale: no axis constrained";
    return false;
  }
  for (int a = 0; a < 3; ++a) {
    if ((axes >> a & 1) != 0 && skeleton.scale_channel(joint, a) < 0) {
      if (error != nullptr) {
        *error = "copy_scale: joint '" + skeleton.name(joint) + "' has no " +
                 static_cast<char>('X' + a) + "scale channel";
      }
      return false;
    }
  }
  return true;
}

bool CopyScaleConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State&,
                              std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const std::vector<Eigen::Vector3d> scales = WorldScales(skeleton, pose);
  const Eigen::Vector3d own = LocalScale(skeleton, joint, pose.channels);
  for (int a = 0; a < 3; ++a) {
    if ((axes >> a & 1) == 0) continue;
    const double world = scales[joint][a];
    const double goal = mix == Mix::kAdd ? world * scales[target][a] : scales[target][a];
    // What the joint inherits on this axis: its world scale over its own.
    const double inherited = own[a] != 0 ? world / own[a] : 1.0;
    if (!(inherited > 0)) continue;
    const double wanted = goal / inherited;
    const double next = own[a] + influence * (wanted - own[a]);
    pose.channels[skeleton.scale_channel(joint, a)] = next - 1.0;
  }
  pose.UpdateWorld(skeleton, joint);
  return true;
}

}  // namespace rigel::constraints
