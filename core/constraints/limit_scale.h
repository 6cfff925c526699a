// Limit scale: clamps the joint's own scale, per axis, with influence (Blender's Limit Scale in
// local space, Maya's scale limits).
#ifndef RIGEL_CORE_CONSTRAINTS_LIMIT_SCALE_H_
#define RIGEL_CORE_CONSTRAINTS_LIMIT_SCALE_H_

#include <limits>
#include <string>

#include "core/constraints/constraint.h"

namespace rigel::constraints {

// Each axis's own scale (1 + its scale channel) outside [min, max] is set to the nearer bound; an
// infinite bound does not limit. A scale already inside is left untouched, bit for bit. Blended
// by `influence` (a lerp of the scales). Rotation and position channels are untouched.
struct LimitScaleConstraint {
  // Validates the job. Returns false (and sets `error`) when:
  // - joint is not a joint of the skeleton; influence is outside [0, 1];
  // - a bound is NaN, min > max on an axis, a finite bound is not positive, or no bound is
  //   given (finite);
  // - the joint lacks the scale channel of a bounded axis.
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // Applies the constraint to `pose` (world transforms up to date; kept up to date).
  bool Run(const Skeleton& skeleton, Pose& pose, int frame, State& state, std::string* error) const;

  int joint = -1;
  double influence = 1.0;
  Eigen::Vector3d min = Eigen::Vector3d::Constant(-std::numeric_limits<double>::infinity());
  Eigen::Vector3d max = Eigen::Vector3d::Constant(std::numeric_limits<double>::infinity());
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_LIMIT_SCALE_H_
