// Point constraint. See point.h.
#include "core/constraints/point.h"

#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

bool PointConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  return CheckMasked(skeleton, "point", joint, target, influence, axes, Part::kPosition, error);
}

bool PointConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State& state,
                          std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const Eigen::Vector3d own = pose.world[joint].translation();
  const Eigen::Vector3d goal = pose.world[target].translation();
  if (!state.captured) {
    state.offset = Eigen::Isometry3d::Identity();
    if (maintain_offset) state.offset.translation() = own - goal;
    state.captured = true;
  }
  return ApplyWorldPosition(skeleton, pose, joint,
                            MaskAxes(own, goal + state.offset.translation(), axes), influence,
                            error);
}

}  // namespace rigel::constraints
