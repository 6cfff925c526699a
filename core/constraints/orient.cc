// Orient constraint. See orient.h.
#include "core/constraints/orient.h"

#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

bool OrientConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  return CheckMasked(skeleton, "orient", joint, target, influence, axes, Part::kRotation, error);
}

bool OrientConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State& state,
                           std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const Eigen::Quaterniond own(pose.world[joint].linear());
  const Eigen::Quaterniond goal(pose.world[target].linear());
  if (!state.captured) {
    state.offset = Eigen::Isometry3d::Identity();
    if (maintain_offset) state.offset.linear() = (goal.conjugate() * own).toRotationMatrix();
    state.captured = true;
  }
  const Eigen::Quaterniond constrained = goal * Eigen::Quaterniond(state.offset.linear());
  return ApplyWorldRotation(skeleton, pose, joint,
                            MaskRotation(own, constrained, axes).toRotationMatrix(), influence,
                            error);
}

}  // namespace rigel::constraints
