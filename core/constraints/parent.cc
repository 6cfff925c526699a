// Parent (child-of) constraint. See parent.h.
#include "core/constraints/parent.h"

#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

int ParentConstraint::TargetAt(int frame) const {
  if (switches.empty()) return target;
  int t = switches.front().target;
  for (const TargetSwitch& s : switches) {
    if (s.frame <= frame) t = s.target;
  }
  return t;
}

bool ParentConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  if (!CheckCommon(skeleton, "parent", joint, switches.empty() ? target : switches[0].target, true,
                   influence, error)) {
    return false;
  }
  for (size_t i = 0; i < switches.size(); ++i) {
    if (!CheckCommon(skeleton, "parent", joint, switches[i].target, true, influence, error)) {
      return false;
    }
    if (i > 0 && switches[i].frame <= switches[i - 1].frame) {
      if (error != nullptr) *error = "parent: switches must be in increasing frame order";
      return false;
    }
  }
  return CheckRotationChannels(skeleton, "parent", joint, error) &&
         CheckPositionChannels(skeleton, "parent", joint, kAllAxes, error);
}

bool ParentConstraint::Run(const Skeleton& skeleton, Pose& pose, int frame, State& state,
                           std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const int t = TargetAt(frame);
  if (!state.captured) {
    state.offset = maintain_offset ? pose.world[t].inverse() * pose.world[joint]
                                   : Eigen::Isometry3d::Identity();
    state.target = t;
    state.captured = true;
  } else if (t != state.target) {
    const Eigen::Isometry3d held = pose.world[state.target] * state.offset;
    state.offset = pose.world[t].inverse() * held;
    state.target = t;
  }
  return ApplyWorld(skeleton, pose, joint, pose.world[t] * state.offset, influence, true, true,
                    error);
}

}  // namespace rigel::constraints
