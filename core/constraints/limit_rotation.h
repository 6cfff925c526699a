// Limit rotation: clamps the joint's local rotation angles, per axis, with influence (Blender's
// Limit Rotation in local space, Maya's rotate limits).
#ifndef RIGEL_CORE_CONSTRAINTS_LIMIT_ROTATION_H_
#define RIGEL_CORE_CONSTRAINTS_LIMIT_ROTATION_H_

#include <string>

#include "core/constraints/constraint.h"

namespace rigel::constraints {

// The angles limited are the joint's rotation channels: its local Euler angles after the rest
// orientation, in the joint's own rotation order (core/pose.h). A channel about an axis in `axes`
// whose value, taken within (-pi, pi], lies outside [min, max] of that axis is set to the nearer
// bound; values inside are left as they are (no wrap). Blended by `influence`: a slerp of the
// world rotations for a joint with three rotation channels, a lerp of the channel values
// otherwise (exact for one channel).
struct LimitRotationConstraint {
  // Validates the job. Returns false (and sets `error`) when:
  // - joint is not a joint of the skeleton, or has no rotation channel;
  // - influence is outside [0, 1]; axes is empty;
  // - min > max on a limited axis, or a bound is NaN.
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // Applies the constraint to `pose` (world transforms up to date).
  bool Run(const Skeleton& skeleton, Pose& pose, int frame, State& state, std::string* error) const;

  int joint = -1;
  double influence = 1.0;
  std::uint8_t axes = kAllAxes;                   // limited axes (bit 0 = X)
  Eigen::Vector3d min = Eigen::Vector3d::Zero();  // radians, per axis (x, y, z)
  Eigen::Vector3d max = Eigen::Vector3d::Zero();
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_LIMIT_ROTATION_H_
