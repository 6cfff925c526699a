// Copy rotation: the joint's world rotation takes the target's (replace) or adds its Euler angles
// (add), per axis, with influence (Blender's Copy Rotation, mix Replace / Add).
#ifndef RIGEL_CORE_CONSTRAINTS_COPY_ROTATION_H_
#define RIGEL_CORE_CONSTRAINTS_COPY_ROTATION_H_

#include <string>

#include "core/constraints/constraint.h"

namespace rigel::constraints {

// kReplace: the world Euler angles (WorldEulerXYZ) of the axes in `axes` become the target's (all
// axes: the target's rotation exactly). kAdd: the target's angles on those axes are added to the
// joint's own. Blended by `influence` (slerp). Position is untouched.
struct CopyRotationConstraint {
  // Validates the job. Returns false (and sets `error`) when:
  // - joint or target is not a joint of the skeleton, or they are the same joint;
  // - influence is outside [0, 1]; axes is empty;
  // - the joint lacks three rotation channels.
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

#endif  // RIGEL_CORE_CONSTRAINTS_COPY_ROTATION_H_
