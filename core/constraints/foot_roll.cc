#include "core/constraints/foot_roll.h"

#include <algorithm>
#include <cmath>

#include "core/constraints/constraint.h"
#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

namespace {

// The rotation by `angle` about `axis` through `pivot` (all in the foot's frame).
Eigen::Isometry3d About(const Eigen::Vector3d& pivot, const Eigen::Vector3d& axis, double angle) {
  Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
  t.linear() = Eigen::AngleAxisd(angle, axis).toRotationMatrix();
  t.translation() = pivot - t.linear() * pivot;
  return t;
}

}  // namespace

bool FootRoll::Validate(std::string* error) const {
  const double s = side.norm(), f = forward.norm();
  if (!side.allFinite() || !forward.allFinite() || s == 0 || f == 0) {
    *error = "foot roll: the side and forward axes must be finite and not zero";
    return false;
  }
  if (side.cross(forward).norm() <= 1e-9 * s * f) {
    *error = "foot roll: the side and forward axes are parallel";
    return false;
  }
  for (const Eigen::Vector3d* p : {&heel, &ball, &toe, &inner, &outer}) {
    if (!p->allFinite()) {
      *error = "foot roll: a pivot is not finite";
      return false;
    }
  }
  if (!std::isfinite(roll) || !std::isfinite(bank) || !std::isfinite(toe_tap) ||
      !std::isfinite(break_angle) || break_angle < 0) {
    *error = "foot roll: roll, bank and toe tap must be finite and the break angle >= 0";
    return false;
  }
  return true;
}

FootRollResult SolveFootRoll(const FootRoll& foot, const Eigen::Isometry3d& planted) {
  const Eigen::Vector3d side = foot.side.normalized();
  // Forward made perpendicular to the side axis (the bank axis lies along the sole).
  const Eigen::Vector3d forward = (foot.forward - foot.forward.dot(side) * side).normalized();
  Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
  if (foot.bank > 0) t = t * About(foot.outer, forward, foot.bank);
  if (foot.bank < 0) t = t * About(foot.inner, forward, foot.bank);
  // A positive roll turns the toes down about the side axis: the heel rises.
  const double heel = std::min(foot.roll, 0.0);
  const double ball = std::clamp(foot.roll, 0.0, foot.break_angle);
  const double tip = std::max(foot.roll - foot.break_angle, 0.0);
  if (heel != 0) t = t * About(foot.heel, side, heel);
  if (tip != 0) t = t * About(foot.toe, side, tip);
  if (ball != 0) t = t * About(foot.ball, side, ball);
  FootRollResult result;
  result.ankle = planted * t;
  // Over the ball the toes stay planted: they turn back by what the foot turned about the ball.
  result.toe_angle = -ball + foot.toe_tap;
  return result;
}

bool FootRollRig::Validate(const Skeleton& skeleton, std::string* error) const {
  if (!foot.Validate(error)) return false;
  if (ankle < 0 || ankle >= skeleton.num_joints()) {
    *error = "foot roll: the effector's joint is not a joint of the skeleton";
    return false;
  }
  if (toe < 0) return true;
  if (toe >= skeleton.num_joints() || !IsDescendant(skeleton, toe, ankle)) {
    *error =
        "foot roll: the toe joint must be a joint below the ankle '" + skeleton.name(ankle) + "'";
    return false;
  }
  return CheckRotationChannels(skeleton, "foot roll", toe, error);
}

Eigen::Isometry3d FootRollRig::Goal(const Eigen::Isometry3d& planted) const {
  return SolveFootRoll(foot, planted).ankle;
}

bool FootRollRig::TurnToe(const Skeleton& skeleton, Pose& pose, std::string* error) const {
  if (toe < 0) return true;
  const double angle = SolveFootRoll(foot, Eigen::Isometry3d::Identity()).toe_angle;
  if (angle == 0) return true;
  const Eigen::Matrix3d a = pose.world[ankle].linear();
  const Eigen::Matrix3d turn =
      a * Eigen::AngleAxisd(angle, foot.side.normalized()).toRotationMatrix() * a.transpose();
  return ApplyWorldRotation(skeleton, pose, toe, turn * pose.world[toe].linear(), 1.0, error);
}

}  // namespace rigel::constraints
