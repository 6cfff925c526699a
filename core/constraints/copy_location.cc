// Copy location. See copy_location.h.
#include "core/constraints/copy_location.h"

#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

bool CopyLocationConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  return CheckMasked(skeleton, "copy_location", joint, target, influence, axes, Part::kPosition,
                     error);
}

bool CopyLocationConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State&,
                                 std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const Eigen::Vector3d own = pose.world[joint].translation();
  const Eigen::Vector3d goal = pose.world[target].translation();
  const Eigen::Vector3d copied = mix == Mix::kAdd ? Eigen::Vector3d(own + goal) : goal;
  return ApplyWorldPosition(skeleton, pose, joint, MaskAxes(own, copied, axes), influence, error);
}

}  // namespace rigel::constraints
