// Limit location. See limit_location.h.
#include "core/constraints/limit_location.h"

#include <algorithm>
#include <cmath>

#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

namespace {

// The axes with a finite bound (bit 0 = X).
std::uint8_t BoundedAxes(const Eigen::Vector3d& min, const Eigen::Vector3d& max) {
  std::uint8_t axes = 0;
  for (int a = 0; a < 3; ++a) {
    if (std::isfinite(min[a]) || std::isfinite(max[a]))
      axes = static_cast<std::uint8_t>(axes | 1 << a);
  }
  return axes;
}

}  // namespace

bool LimitLocationConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  if (!CheckCommon(skeleton, "limit_location", joint, -1, false, influence, error)) return false;
  std::string why;
  for (int a = 0; a < 3 && why.empty(); ++a) {
    if (std::isnan(min[a]) || std::isnan(max[a])) {
      why = std::string("bound on axis ") + static_cast<char>('x' + a) + " is NaN";
    } else if (min[a] > max[a]) {
      why = std::string("min > max on axis ") + static_cast<char>('x' + a);
    }
  }
  const std::uint8_t bounded = BoundedAxes(min, max);
  if (why.empty() && bounded == 0) why = "no bound given";
  if (!why.empty()) {
    if (error != nullptr) *error = "limit_location: " + why;
    return false;
  }
  return CheckPositionChannels(skeleton, "limit_location", joint,
                               space == Space::kWorld ? kAllAxes : bounded, error);
}

bool LimitLocationConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State&,
                                  std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  if (space == Space::kWorld) {
    const Eigen::Vector3d p = pose.world[joint].translation();
    const Eigen::Vector3d limited = p.cwiseMax(min).cwiseMin(max);
    if (limited == p) return true;
    return ApplyWorldPosition(skeleton, pose, joint, limited, influence, error);
  }
  bool changed = false;
  for (int a = 0; a < 3; ++a) {
    const int c = skeleton.translation_channel(joint, a);
    if (c < 0) continue;
    double& value = pose.channels[c];
    const double limited = std::clamp(value, min[a], max[a]);
    if (limited == value) continue;
    value = influence >= 1.0 ? limited : value + influence * (limited - value);
    changed = true;
  }
  if (changed) pose.UpdateWorld(skeleton, joint);
  return true;
}

}  // namespace rigel::constraints
