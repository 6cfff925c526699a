#include "core/constraints/foot_roll.h"

#include <algorithm>
#include <cmath>

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

}  // namespace rigel::constraints
