// Aim constraint. See aim.h.
#include "core/constraints/aim.h"

#include <cmath>

#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

namespace {

constexpr double kUnitTolerance = 1e-9;
constexpr double kParallel = 1e-9;  // |a x b| below this: parallel

}  // namespace

bool AimConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  if (!CheckCommon(skeleton, "aim", joint, target, true, influence, error)) return false;
  std::string why;
  const bool needs_up_target = up_type != UpType::kWorld;
  if (needs_up_target && (up_target < 0 || up_target >= skeleton.num_joints())) {
    why = "up_target is required for this up type";
  } else if (needs_up_target && (up_target == joint || IsDescendant(skeleton, up_target, joint))) {
    why = "up_target cannot be the constrained joint or one of its descendants";
  } else if (std::abs(aim_axis.norm() - 1) > kUnitTolerance ||
             std::abs(up_axis.norm() - 1) > kUnitTolerance) {
    why = "aim_axis and up_axis must be unit length";
  } else if (aim_axis.cross(up_axis).norm() < kParallel) {
    why = "aim_axis and up_axis must not be parallel";
  } else if (up_type != UpType::kObject && up.norm() < kParallel) {
    why = "the up vector must not be zero";
  }
  if (!why.empty()) {
    if (error != nullptr) *error = "aim: " + why;
    return false;
  }
  return CheckRotationChannels(skeleton, "aim", joint, error);
}

bool AimConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State&,
                        std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const Eigen::Isometry3d& own = pose.world[joint];
  const Eigen::Vector3d to_target = pose.world[target].translation() - own.translation();
  if (to_target.norm() < kParallel) return true;  // no direction: leave the joint as it is
  const Eigen::Vector3d a = to_target.normalized();
  Eigen::Vector3d up_world = up;
  if (up_type == UpType::kObject) {
    up_world = pose.world[up_target].translation() - own.translation();
  } else if (up_type == UpType::kObjectRotation) {
    up_world = pose.world[up_target].linear() * up;
  }
  const Eigen::Vector3d u_perp = up_world - up_world.dot(a) * a;
  Eigen::Matrix3d desired;
  if (u_perp.norm() < kParallel * std::max(1.0, up_world.norm())) {
    // No roll defined: the smallest rotation of the current aim direction onto the target's.
    const Eigen::Vector3d current = own.linear() * aim_axis;
    desired = (Eigen::Quaterniond::FromTwoVectors(current, a) * Eigen::Quaterniond(own.linear()))
                  .toRotationMatrix();
  } else {
    // Orthonormal frames: joint space (aim, up', aim x up') onto world (a, u, a x u).
    const Eigen::Vector3d up_local = (up_axis - up_axis.dot(aim_axis) * aim_axis).normalized();
    Eigen::Matrix3d local_frame, world_frame;
    local_frame << aim_axis, up_local, aim_axis.cross(up_local);
    const Eigen::Vector3d u = u_perp.normalized();
    world_frame << a, u, a.cross(u);
    desired = world_frame * local_frame.transpose();
  }
  return ApplyWorldRotation(skeleton, pose, joint, desired, influence, error);
}

}  // namespace rigel::constraints
