// Copy location: the joint's world position takes the target's (replace) or adds it (add), per
// axis, with influence (Blender's Copy Location, with Offset = add).
#ifndef RIGEL_CORE_CONSTRAINTS_COPY_LOCATION_H_
#define RIGEL_CORE_CONSTRAINTS_COPY_LOCATION_H_

#include <string>

#include "core/constraints/constraint.h"

namespace rigel::constraints {

// On each world axis in `axes`: kReplace: position = target position; kAdd: position = own +
// target position. Other axes keep the joint's own. Blended by `influence`.
struct CopyLocationConstraint {
  // Validates the job. Returns false (and sets `error`) when:
  // - joint or target is not a joint of the skeleton, or they are the same joint;
  // - influence is outside [0, 1]; axes is empty;
  // - the joint lacks a position channel on an axis of `axes`.
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // Applies the constraint to `pose` (world transforms up to date).
  bool Run(const Skeleton& skeleton, Pose& pose, int frame, State& state, std::string* error) const;

  int joint = -1;
  int target = -1;
  Mix mix = Mix::kReplace;
  double influence = 1.0;
  std::uint8_t axes = kAllAxes;
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_COPY_LOCATION_H_
