// Copy location. See copy_location.h.
#include "core/constraints/copy_location.h"

#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

bool CopyLocationConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  if (!CheckCommon(skeleton, "copy_location", joint, target, true, influence, error)) return false;
  if ((axes & kAllAxes) == 0) {
    if (error != nullptr) *error = "copy_location: no axis constrained";
    return false;
  }
  return CheckPositionChannels(skeleton, "copy_location", joint, axes, error);
}

bool CopyLocationConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State&,
                                 std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const Eigen::Vector3d goal = pose.world[target].translation();
  Eigen::Isometry3d desired = pose.world[joint];
  for (int a = 0; a < 3; ++a) {
    if ((axes >> a & 1) == 0) continue;
    desired.translation()[a] = mix == Mix::kAdd ? desired.translation()[a] + goal[a] : goal[a];
  }
  return ApplyWorld(skeleton, pose, joint, desired, influence, false, true, error);
}

}  // namespace rigel::constraints
