// Aim constraint: the joint's aim axis points at a target and its up axis turns towards an up
// vector (Maya's aim constraint, Blender's Track To), which fixes the roll.
#ifndef RIGEL_CORE_CONSTRAINTS_AIM_H_
#define RIGEL_CORE_CONSTRAINTS_AIM_H_

#include <string>

#include "core/constraints/constraint.h"

namespace rigel::constraints {

// Where the up vector comes from.
enum class UpType : std::uint8_t {
  kWorld,           // `up` is a world vector
  kObject,          // towards up_target: up = position(up_target) - position(joint)
  kObjectRotation,  // `up` in up_target's space: up = rotation(up_target) * up
};

// The constrained world rotation R maps aim_axis (joint space) onto the unit direction from the
// joint to the target, and up_axis's component perpendicular to aim_axis onto the up vector's
// component perpendicular to that direction. When the up vector is parallel to the direction
// (no roll defined), R is the smallest rotation taking the joint's current aim axis onto the
// direction. When the target sits on the joint, nothing changes. Blended by `influence`.
struct AimConstraint {
  // Validates the job. Returns false (and sets `error`) when:
  // - joint or target is not a joint of the skeleton, or they are the same joint;
  // - up_target is needed (kObject, kObjectRotation) and is not a joint, or is the joint itself;
  // - influence is outside [0, 1];
  // - aim_axis or up_axis is not unit length, or they are parallel; `up` is zero (kWorld,
  //   kObjectRotation);
  // - the joint lacks three rotation channels.
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // Applies the constraint to `pose` (world transforms up to date).
  bool Run(const Skeleton& skeleton, Pose& pose, int frame, State& state, std::string* error) const;

  int joint = -1;
  int target = -1;
  double influence = 1.0;
  Eigen::Vector3d aim_axis = Eigen::Vector3d::UnitX();  // joint space, unit
  Eigen::Vector3d up_axis = Eigen::Vector3d::UnitY();   // joint space, unit, not along aim_axis
  UpType up_type = UpType::kWorld;
  Eigen::Vector3d up = Eigen::Vector3d::UnitY();  // kWorld: world; kObjectRotation: up_target's
  int up_target = -1;
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_AIM_H_
