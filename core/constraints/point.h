// Point constraint: the joint's world position follows a target's, per axis, with maintain
// offset and influence (Maya's point constraint).
#ifndef RIGEL_CORE_CONSTRAINTS_POINT_H_
#define RIGEL_CORE_CONSTRAINTS_POINT_H_

#include <string>

#include "core/constraints/constraint.h"

namespace rigel::constraints {

// On each world axis in `axes`, position = target position + offset (offset = joint - target,
// captured on the first Run when maintain_offset, else zero); other axes keep the joint's own.
// Blended with the joint's own position by `influence`. Rotation is untouched.
struct PointConstraint {
  // Validates the job. Returns false (and sets `error`) when:
  // - joint or target is not a joint of the skeleton, or they are the same joint;
  // - influence is outside [0, 1]; axes is empty;
  // - the joint lacks a position channel on an axis of `axes`.
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // Applies the constraint to `pose` (world transforms up to date).
  bool Run(const Skeleton& skeleton, Pose& pose, int frame, State& state, std::string* error) const;

  int joint = -1;
  int target = -1;
  bool maintain_offset = false;
  double influence = 1.0;
  std::uint8_t axes = kAllAxes;  // world axes constrained (bit 0 = X)
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_POINT_H_
