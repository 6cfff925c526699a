// Limit distance: keeps the joint inside, outside or on a sphere about a target (Blender's Limit
// Distance).
#ifndef RIGEL_CORE_CONSTRAINTS_LIMIT_DISTANCE_H_
#define RIGEL_CORE_CONSTRAINTS_LIMIT_DISTANCE_H_

#include <string>

#include "core/constraints/constraint.h"

namespace rigel::constraints {

// Which side of the sphere the joint may be on.
enum class DistanceMode : std::uint8_t {
  kInside,   // distance <= radius
  kOutside,  // distance >= radius
  kSurface,  // distance == radius
};

// With d the world distance from the target to the joint and r the radius (`distance`, or the
// distance on the first Run when `distance` < 0): when the mode's condition fails, the joint
// moves along the target-to-joint direction onto the sphere. A joint exactly on the target stays.
// Blended by `influence`. Rotation is untouched.
struct LimitDistanceConstraint {
  // Validates the job. Returns false (and sets `error`) when:
  // - joint or target is not a joint of the skeleton, or they are the same joint;
  // - influence is outside [0, 1]; distance is NaN;
  // - the joint lacks three position channels.
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // Applies the constraint to `pose` (world transforms up to date).
  bool Run(const Skeleton& skeleton, Pose& pose, int frame, State& state, std::string* error) const;

  int joint = -1;
  int target = -1;
  double influence = 1.0;
  double distance = -1;  // radius (length units); < 0: the distance at the first Run
  DistanceMode mode = DistanceMode::kInside;
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_LIMIT_DISTANCE_H_
