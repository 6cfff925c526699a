// Copy rotation. See copy_rotation.h.
#include "core/constraints/copy_rotation.h"

#include "core/constraints/orient.h"
#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

bool CopyRotationConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  if (!CheckCommon(skeleton, "copy_rotation", joint, target, true, influence, error)) return false;
  if ((axes & kAllAxes) == 0) {
    if (error != nullptr) *error = "copy_rotation: no axis constrained";
    return false;
  }
  return CheckRotationChannels(skeleton, "copy_rotation", joint, error);
}

bool CopyRotationConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State&,
                                 std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const Eigen::Quaterniond own(pose.world[joint].linear());
  const Eigen::Quaterniond goal(pose.world[target].linear());
  Eigen::Isometry3d desired = pose.world[joint];
  if (mix == Mix::kReplace) {
    desired.linear() = MaskRotation(own, goal, axes).toRotationMatrix();
  } else {
    Eigen::Vector3d xyz = WorldEulerXYZ(own);
    const Eigen::Vector3d add = WorldEulerXYZ(goal);
    for (int a = 0; a < 3; ++a) {
      if ((axes >> a & 1) != 0) xyz[a] += add[a];
    }
    desired.linear() = FromWorldEulerXYZ(xyz).toRotationMatrix();
  }
  return ApplyWorld(skeleton, pose, joint, desired, influence, true, false, error);
}

}  // namespace rigel::constraints
