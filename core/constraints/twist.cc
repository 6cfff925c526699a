// Twist distribution. See twist.h.
#include "core/constraints/twist.h"

#include <cmath>
#include <vector>

#include "core/euler.h"
#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::constraints {

namespace {

// Whether `ancestor` lies strictly above `joint`.
bool Above(const Skeleton& s, int ancestor, int joint) { return IsDescendant(s, joint, ancestor); }

// The rest rotation of `joint` in the space of its ancestor `reference`: the product of the rest
// orientations on the path below the reference.
Eigen::Quaterniond RestRotation(const Skeleton& s, int reference, int joint) {
  Eigen::Quaterniond q = Eigen::Quaterniond::Identity();
  for (int j = joint; j != reference && j >= 0; j = s.parent(j)) q = s.rest_orientation(j) * q;
  return q;
}

// The rest position of `joint` in the space of its ancestor `reference`.
Eigen::Vector3d RestPosition(const Skeleton& s, int reference, int joint) {
  Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
  for (int j = joint; j != reference && j >= 0; j = s.parent(j)) {
    Eigen::Isometry3d local = Eigen::Isometry3d::Identity();
    local.translation() = s.rest_translation(j);
    local.linear() = s.rest_orientation(j).toRotationMatrix();
    t = local * t;
  }
  return t.translation();
}

}  // namespace

void SwingTwist(const Eigen::Quaterniond& rotation, const Eigen::Vector3d& axis,
                Eigen::Quaterniond* swing, Eigen::Quaterniond* twist) {
  const double along = rotation.vec().dot(axis);
  Eigen::Quaterniond t(rotation.w(), along * axis.x(), along * axis.y(), along * axis.z());
  const double norm = t.norm();
  t = norm > 1e-12 ? Eigen::Quaterniond(t.coeffs() / norm) : Eigen::Quaterniond::Identity();
  if (twist != nullptr) *twist = t;
  if (swing != nullptr) *swing = rotation * t.conjugate();
}

double TwistAngle(const Eigen::Quaterniond& rotation, const Eigen::Vector3d& axis) {
  Eigen::Quaterniond twist;
  SwingTwist(rotation, axis, nullptr, &twist);
  // twist = (cos(a/2), sin(a/2) axis): the signed angle, with w >= 0 for the shortest turn.
  double s = twist.vec().dot(axis), c = twist.w();
  if (c < 0) {
    s = -s;
    c = -c;
  }
  return 2.0 * std::atan2(s, c);
}

int TwistConstraint::ReferenceJoint(const Skeleton& skeleton) const {
  if (reference >= 0) return reference;
  if (driver < 0 || driver >= skeleton.num_joints()) return -1;
  for (int j = skeleton.parent(driver); j >= 0; j = skeleton.parent(j)) {
    bool above_all = true;
    for (const int k : joints) {
      above_all = above_all && k >= 0 && k < skeleton.num_joints() && Above(skeleton, j, k);
    }
    if (above_all) return j;
  }
  return -1;
}

Eigen::Vector3d TwistConstraint::Axis(const Skeleton& skeleton, int ref) const {
  if (axis.squaredNorm() > 0) return axis.normalized();
  const Eigen::Vector3d bone = RestPosition(skeleton, ref, driver);
  return bone.norm() > 1e-12 ? Eigen::Vector3d(bone.normalized()) : Eigen::Vector3d::Zero();
}

bool TwistConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  const int n = skeleton.num_joints();
  std::string why;
  auto name = [&](int j) { return "'" + skeleton.name(j) + "'"; };
  if (driver < 0 || driver >= n) {
    why = "driver index " + std::to_string(driver) + " out of range";
  } else if (!(influence >= 0.0 && influence <= 1.0)) {
    why = "influence must be in [0, 1]";
  } else if (joints.empty()) {
    why = "no twist joint";
  } else if (weights.size() != joints.size()) {
    why = std::to_string(weights.size()) + " weight(s) for " + std::to_string(joints.size()) +
          " twist joint(s)";
  } else if (!axis.allFinite()) {
    why = "axis not finite";
  }
  for (size_t i = 0; i < joints.size() && why.empty(); ++i) {
    const int j = joints[i];
    if (j < 0 || j >= n) {
      why = "twist joint index " + std::to_string(j) + " out of range";
    } else if (j == driver) {
      why = "the driver " + name(j) + " cannot be one of its twist joints";
    } else if (IsDescendant(skeleton, j, driver)) {
      why = "twist joint " + name(j) + " is below the driver " + name(driver);
    } else if (!(weights[i] >= 0.0 && weights[i] <= 1.0)) {
      why = "weight of " + name(j) + " must be in [0, 1]";
    } else if (!CheckRotationChannels(skeleton, "twist", j, error)) {
      return false;
    }
    for (size_t k = 0; k < i && why.empty(); ++k) {
      if (joints[k] == j) why = "twist joint " + name(j) + " appears twice";
    }
  }
  if (why.empty()) {
    const int ref = ReferenceJoint(skeleton);
    bool ok = ref >= 0 && ref < n && Above(skeleton, ref, driver);
    for (const int k : joints) ok = ok && Above(skeleton, ref, k);
    if (!ok) {
      why = reference >= 0
                ? "reference " + (reference < n ? name(reference) : std::to_string(reference)) +
                      " is not above the driver and every twist joint"
                : "no joint lies above the driver and every twist joint";
    } else if (Axis(skeleton, ref).squaredNorm() == 0) {
      why = "the driver " + name(driver) + " rests on the reference joint " + name(ref) +
            ": give an axis";
    }
  }
  if (why.empty()) {
    for (const int k : joints) {
      if (IsDescendant(skeleton, driver, k)) {
        return CheckRotationChannels(skeleton, "twist", driver, error);
      }
    }
    return true;
  }
  if (error != nullptr) *error = "twist: " + why;
  return false;
}

bool TwistConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State& state,
                          std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  const int ref = ReferenceJoint(skeleton);
  const Eigen::Vector3d a = Axis(skeleton, ref);
  const Eigen::Quaterniond world_from_ref(pose.world[ref].linear());
  const Eigen::Quaterniond driver_world(pose.world[driver].linear());
  // The driver's twist after its rest rotation, unwrapped from the previous frame's.
  const Eigen::Quaterniond driver_rest = RestRotation(skeleton, ref, driver);
  double twist = TwistAngle(driver_rest.conjugate() * world_from_ref.conjugate() * driver_world,
                            driver_rest.conjugate() * a);
  if (state.captured) twist = WrapNear(twist, state.twist);
  state.captured = true;
  state.twist = twist;
  // Each twist joint's goal from the pose as it came (its own swing before any twist joint
  // moved), then written parents first (ascending index; a handful, so a scan per joint).
  constexpr size_t kInline = 8;
  Eigen::Quaterniond inline_goals[kInline];
  std::vector<Eigen::Quaterniond> more;
  if (joints.size() > kInline) more.resize(joints.size());
  Eigen::Quaterniond* goals = joints.size() > kInline ? more.data() : inline_goals;
  bool driver_below = false;
  for (size_t i = 0; i < joints.size(); ++i) {
    const int j = joints[i];
    driver_below = driver_below || IsDescendant(skeleton, driver, j);
    const Eigen::Quaterniond rest = RestRotation(skeleton, ref, j);
    const Eigen::Vector3d a_j = rest.conjugate() * a;
    const Eigen::Quaterniond own =
        rest.conjugate() * world_from_ref.conjugate() * Eigen::Quaterniond(pose.world[j].linear());
    Eigen::Quaterniond swing;
    SwingTwist(own, a_j, &swing, nullptr);
    goals[i] = world_from_ref * rest * swing *
               Eigen::Quaterniond(Eigen::AngleAxisd(weights[i] * twist, a_j));
  }
  int previous = -1;
  for (size_t done = 0; done < joints.size(); ++done) {
    size_t i = joints.size();
    for (size_t k = 0; k < joints.size(); ++k) {
      if (joints[k] > previous && (i == joints.size() || joints[k] < joints[i])) i = k;
    }
    previous = joints[i];
    if (!ApplyWorldRotation(skeleton, pose, joints[i], goals[i].toRotationMatrix(), influence,
                            error)) {
      return false;
    }
  }
  if (driver_below) {
    return ApplyWorldRotation(skeleton, pose, driver, driver_world.toRotationMatrix(), 1.0, error);
  }
  return true;
}

}  // namespace rigel::constraints
