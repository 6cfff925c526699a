// Limit rotation. See limit_rotation.h.
#include "core/constraints/limit_rotation.h"

#include <vector>

#include "core/channel.h"
#include "core/euler.h"
#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

bool LimitRotationConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  if (!CheckCommon(skeleton, "limit_rotation", joint, -1, false, influence, error)) return false;
  std::string why;
  if ((axes & kAllAxes) == 0) {
    why = "no axis limited";
  } else if (skeleton.rotation_channels(joint).empty()) {
    why = "joint '" + skeleton.name(joint) + "' has no rotation channel";
  }
  for (int a = 0; a < 3 && why.empty(); ++a) {
    if ((axes >> a & 1) != 0 && !(min[a] <= max[a])) {
      why = std::string("min > max on axis ") + static_cast<char>('x' + a);
    }
  }
  if (why.empty()) return true;
  if (error != nullptr) *error = "limit_rotation: " + why;
  return false;
}

bool LimitRotationConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State&,
                                  std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const std::span<const int> rot = skeleton.rotation_channels(joint);
  double limited[3];
  bool changed = false;
  for (size_t i = 0; i < rot.size(); ++i) {
    const int c = rot[i];
    const int a = ChannelAxis(skeleton.channels()[c]);
    limited[i] = pose.channels[c];
    if ((axes >> a & 1) == 0) continue;
    const double wrapped = WrapNear(pose.channels[c], 0.0);
    if (wrapped < min[a]) limited[i] = min[a];
    if (wrapped > max[a]) limited[i] = max[a];
    changed = changed || limited[i] != pose.channels[c];
  }
  if (!changed) return true;
  if (influence < 1.0 && rot.size() == 3) {
    std::vector<double> channels = pose.channels;
    for (size_t i = 0; i < rot.size(); ++i) channels[rot[i]] = limited[i];
    const int parent = skeleton.parent(joint);
    const Eigen::Matrix3d world_from_parent =
        parent >= 0 ? Eigen::Matrix3d(pose.world[parent].linear()) : Eigen::Matrix3d::Identity();
    return ApplyWorldRotation(skeleton, pose, joint,
                              world_from_parent * LocalRotation(skeleton, joint, channels),
                              influence, error);
  }
  for (size_t i = 0; i < rot.size(); ++i) {
    double& value = pose.channels[rot[i]];
    value = influence >= 1.0 ? limited[i] : value + influence * (limited[i] - value);
  }
  pose.UpdateWorld(skeleton, joint);
  return true;
}

}  // namespace rigel::constraints
