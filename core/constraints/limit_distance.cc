// Limit distance. See limit_distance.h.
#include "core/constraints/limit_distance.h"

#include <cmath>

#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

bool LimitDistanceConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  if (!CheckCommon(skeleton, "limit_distance", joint, target, true, influence, error)) {
    return false;
  }
  if (std::isnan(distance)) {
    if (error != nullptr) *error = "limit_distance: distance is NaN";
    return false;
  }
  return CheckPositionChannels(skeleton, "limit_distance", joint, kAllAxes, error);
}

bool LimitDistanceConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State& state,
                                  std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const Eigen::Vector3d center = pose.world[target].translation();
  const Eigen::Vector3d v = pose.world[joint].translation() - center;
  const double d = v.norm();
  if (!state.captured) {
    state.distance = distance >= 0 ? distance : d;
    state.captured = true;
  }
  const double r = state.distance;
  const bool outside_ok = mode != DistanceMode::kInside || d <= r;
  const bool inside_ok = mode != DistanceMode::kOutside || d >= r;
  const bool surface_ok = mode != DistanceMode::kSurface || d == r;
  if ((outside_ok && inside_ok && surface_ok) || d == 0.0) return true;
  return ApplyWorldPosition(skeleton, pose, joint, center + v * (r / d), influence, error);
}

}  // namespace rigel::constraints
