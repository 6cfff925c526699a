// Copy rotation. See copy_rotation.h.
#include "core/constraints/copy_rotation.h"

#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

bool CopyRotationConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  return CheckMasked(skeleton, "copy_rotation", joint, target, influence, axes, Part::kRotation,
                     error);
}

bool CopyRotationConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State&,
                                 std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const Eigen::Quaterniond own(pose.world[joint].linear());
  const Eigen::Quaterniond goal(pose.world[target].linear());
  Eigen::Quaterniond copied;
  if (mix == Mix::kReplace) {
    copied = MaskRotation(own, goal, axes);
  } else {  // the target's world Euler angles added to the joint's own on the masked axes
    const Eigen::Vector3d xyz = WorldEulerXYZ(own);
    copied = FromWorldEulerXYZ(MaskAxes(xyz, xyz + WorldEulerXYZ(goal), axes));
  }
  return ApplyWorldRotation(skeleton, pose, joint, copied.toRotationMatrix(), influence, error);
}

}  // namespace rigel::constraints
