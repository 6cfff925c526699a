// Orient constraint. See orient.h.
#include "core/constraints/orient.h"

#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

Eigen::Quaterniond MaskRotation(const Eigen::Quaterniond& own,
                                const Eigen::Quaterniond& replacement, std::uint8_t axes) {
  if ((axes & kAllAxes) == kAllAxes) return replacement;
  Eigen::Vector3d xyz = WorldEulerXYZ(own);
  const Eigen::Vector3d other = WorldEulerXYZ(replacement);
  for (int a = 0; a < 3; ++a) {
    if ((axes >> a & 1) != 0) xyz[a] = other[a];
  }
  return FromWorldEulerXYZ(xyz);
}

bool OrientConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  if (!CheckCommon(skeleton, "orient", joint, target, true, influence, error)) return false;
  if ((axes & kAllAxes) == 0) {
    if (error != nullptr) *error = "orient: no axis constrained";
    return false;
  }
  return CheckRotationChannels(skeleton, "orient", joint, error);
}

bool OrientConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State& state,
                           std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const Eigen::Quaterniond own(pose.world[joint].linear());
  const Eigen::Quaterniond goal(pose.world[target].linear());
  if (!state.captured) {
    state.offset = Eigen::Isometry3d::Identity();
    if (maintain_offset) state.offset.linear() = (goal.conjugate() * own).toRotationMatrix();
    state.captured = true;
  }
  const Eigen::Quaterniond constrained = goal * Eigen::Quaterniond(state.offset.linear());
  Eigen::Isometry3d desired = pose.world[joint];
  desired.linear() = MaskRotation(own, constrained, axes).toRotationMatrix();
  return ApplyWorld(skeleton, pose, joint, desired, influence, true, false, error);
}

}  // namespace rigel::constraints
