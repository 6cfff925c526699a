// Orient constraint: the joint's world rotation follows a target's, with maintain offset,
// per-axis masks and influence (Maya's orient constraint).
#ifndef RIGEL_CORE_CONSTRAINTS_ORIENT_H_
#define RIGEL_CORE_CONSTRAINTS_ORIENT_H_

#include <string>

#include "core/constraints/constraint.h"

namespace rigel::constraints {

// Constrained rotation = target rotation * offset (offset = target_from_joint rotation captured on
// the first Run when maintain_offset, else identity). With a partial `axes` mask, the world Euler
// angles (WorldEulerXYZ) of the masked axes come from the constrained rotation and the others
// from the joint's own. Blended by `influence` (slerp). Position is untouched.
struct OrientConstraint {
  // Validates the job. Returns false (and sets `error`) when:
  // - joint or target is not a joint of the skeleton, or they are the same joint;
  // - influence is outside [0, 1]; axes is empty;
  // - the joint lacks three rotation channels.
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // Applies the constraint to `pose` (world transforms up to date).
  bool Run(const Skeleton& skeleton, Pose& pose, int frame, State& state, std::string* error) const;

  int joint = -1;
  int target = -1;
  bool maintain_offset = false;
  double influence = 1.0;
  std::uint8_t axes = kAllAxes;
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_ORIENT_H_
