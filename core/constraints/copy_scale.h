// Copy scale: the joint's world scale takes the target's (replace) or is multiplied by it (add),
// per axis of the joint, with influence (Blender's Copy Scale, with Offset = add).
#ifndef RIGEL_CORE_CONSTRAINTS_COPY_SCALE_H_
#define RIGEL_CORE_CONSTRAINTS_COPY_SCALE_H_

#include <string>

#include "core/constraints/constraint.h"

namespace rigel::constraints {

// World scale: the lengths of a joint's world axes (Pose::linear). On each axis in `axes`:
// kReplace: the joint's world scale = the target's; kAdd: the joint's world scale times the
// target's. The joint's own scale channels take it (what it inherits is divided out); other axes
// keep theirs. Blended by `influence` (a lerp of the scales).
struct CopyScaleConstraint {
  // Validates the job. Returns false (and sets `error`) when:
  // - joint or target is not a joint of the skeleton, or they are the same joint;
  // - influence is outside [0, 1]; axes is empty;
  // - the joint lacks a scale channel on an axis of `axes`.
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // Applies the constraint to `pose` (world transforms up to date; kept up to date).
  bool Run(const Skeleton& skeleton, Pose& pose, int frame, State& state, std::string* error) const;

  int joint = -1;
  int target = -1;
  Mix mix = Mix::kReplace;
  double influence = 1.0;
  std::uint8_t axes = kAllAxes;
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_COPY_SCALE_H_
