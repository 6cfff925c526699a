// Point constraint. See point.h.
#include "core/constraints/point.h"

#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

bool PointConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  if (!CheckCommon(skeleton, "point", joint, target, true, influence, error)) return false;
  if ((axes & kAllAxes) == 0) {
    if (error != nullptr) *error = "point: no axis constrained";
    return false;
  }
  return CheckPositionChannels(skeleton, "point", joint, axes, error);
}

bool PointConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State& state,
                          std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const Eigen::Vector3d own = pose.world[joint].translation();
  const Eigen::Vector3d goal = pose.world[target].translation();
  if (!state.captured) {
    state.offset = Eigen::Isometry3d::Identity();
    if (maintain_offset) state.offset.translation() = own - goal;
    state.captured = true;
  }
  Eigen::Isometry3d desired = pose.world[joint];
  for (int a = 0; a < 3; ++a) {
    if ((axes >> a & 1) != 0) desired.translation()[a] = goal[a] + state.offset.translation()[a];
  }
  return ApplyWorld(skeleton, pose, joint, desired, influence, false, true, error);
}

}  // namespace rigel::constraints
