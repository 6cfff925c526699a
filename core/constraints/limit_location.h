// Limit location: clamps the joint's position, per axis, in world or local space, with influence
// (Blender's Limit Location, Maya's translate limits).
#ifndef RIGEL_CORE_CONSTRAINTS_LIMIT_LOCATION_H_
#define RIGEL_CORE_CONSTRAINTS_LIMIT_LOCATION_H_

#include <limits>
#include <string>

#include "core/constraints/constraint.h"

namespace rigel::constraints {

// Where a limit location's bounds apply.
enum class Space : std::uint8_t {
  // The joint's world position, per world axis (Blender's World Space).
  kWorld,
  // The joint's position channels: its offset from the rest position, in its parent's space
  // (Blender's Local Space, Maya's translate limits).
  kLocal,
};

// Each coordinate outside [min, max] of its axis is set to the nearer bound; an infinite bound
// does not limit (min = -inf, max = +inf by default: set only the sides to limit). A position
// already inside is left untouched, bit for bit. Blended by `influence` (a lerp of the positions).
// Rotation is untouched.
struct LimitLocationConstraint {
  // Validates the job. Returns false (and sets `error`) when:
  // - joint is not a joint of the skeleton; influence is outside [0, 1];
  // - a bound is NaN, min > max on an axis, or no bound is finite;
  // - kWorld: the joint lacks one of its three position channels; kLocal: it lacks the position
  //   channel of a bounded axis.
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // Applies the constraint to `pose` (world transforms up to date; kept up to date).
  bool Run(const Skeleton& skeleton, Pose& pose, int frame, State& state, std::string* error) const;

  int joint = -1;
  double influence = 1.0;
  // Bounds per axis (x, y, z), length units.
  Eigen::Vector3d min = Eigen::Vector3d::Constant(-std::numeric_limits<double>::infinity());
  Eigen::Vector3d max = Eigen::Vector3d::Constant(std::numeric_limits<double>::infinity());
  Space space = Space::kWorld;
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_LIMIT_LOCATION_H_
