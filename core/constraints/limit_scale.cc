// Limit scale. See limit_scale.h.
#include "core/constraints/limit_scale.h"

#include <algorithm>
#include <cmath>

#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

bool LimitScaleConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  if (!CheckCommon(skeleton, "limit_scale", joint, -1, false, influence, error)) return false;
  std::string why;
  bool any = false;
  for (int a = 0; a < 3 && why.empty(); ++a) {
    const char axis = static_cast<char>('x' + a);
    if (std::isnan(min[a]) || std::isnan(max[a])) {
      why = std::string("bound on axis ") + axis + " is NaN";
    } else if (min[a] > max[a]) {
      why = std::string("min > max on axis ") + axis;
    } else if ((std::isfinite(min[a]) && min[a] <= 0) || (std::isfinite(max[a]) && max[a] <= 0)) {
      why = std::string("bound on axis ") + axis + " is not positive";
    } else if (std::isfinite(min[a]) || std::isfinite(max[a])) {
      any = true;
      if (skeleton.scale_channel(joint, a) < 0) {
        why = "joint '" + skeleton.name(joint) + "' has no " + static_cast<char>('X' + a) +
              "scale channel";
      }
    }
  }
  if (why.empty() && !any) why = "no bound given";
  if (why.empty()) return true;
  if (error != nullptr) *error = "limit_scale: " + why;
  return false;
}

bool LimitScaleConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State&,
                               std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const Eigen::Vector3d own = LocalScale(skeleton, joint, pose.channels);
  bool changed = false;
  for (int a = 0; a < 3; ++a) {
    const int c = skeleton.scale_channel(joint, a);
    if (c < 0) continue;
    const double clamped = std::clamp(own[a], min[a], max[a]);
    if (clamped == own[a]) continue;
    pose.channels[c] = own[a] + influence * (clamped - own[a]) - 1.0;
    changed = true;
  }
  if (changed) pose.UpdateWorld(skeleton, joint);
  return true;
}

}  // namespace rigel::constraints
