#include "core/ik/validate.h"

#include <utility>

#include "core/euler.h"
#include "core/skeleton.h"

namespace rigel::ik::internal {

namespace {

// The per-channel and per-joint arrays: sizes, limits, preferred values, strengths.
bool ValidateArrays(const Rig& rig, std::string* error) {
  const Skeleton& s = rig.skeleton();
  const size_t nc = s.num_channels();
  const size_t nj = s.num_joints();
  if (rig.min.size() != nc || rig.max.size() != nc || rig.locked.size() != nc ||
      rig.preferred.size() != nc || rig.preferred_gain.size() != nc) {
    return Fail(error, "rig per-channel arrays: expected " + std::to_string(nc) + " entries");
  }
  if (rig.strength.size() != nj) {
    return Fail(error, "rig strength: expected " + std::to_string(nj) + " entries, got " +
                           std::to_string(rig.strength.size()));
  }
  for (size_t c = 0; c < nc; ++c) {
    if (std::isnan(rig.min[c]) || std::isnan(rig.max[c]) || rig.min[c] > rig.max[c]) {
      return Fail(error, "channel " + std::to_string(c) + ": limits min > max or NaN");
    }
    if (!Finite(rig.preferred[c]) || !Finite(rig.preferred_gain[c]) || rig.preferred_gain[c] < 0) {
      return Fail(error, "channel " + std::to_string(c) + ": bad preferred value or gain");
    }
  }
  for (size_t j = 0; j < nj; ++j) {
    if (!Finite(rig.strength[j]) || rig.strength[j] < 0) {
      return Fail(error, "joint '" + s.name(static_cast<int>(j)) + "': negative strength");
    }
  }
  return true;
}

// The bone limits: one per joint, cone angles and hinge axes and ranges.
bool ValidateBoneLimits(const Rig& rig, std::string* error) {
  const Skeleton& s = rig.skeleton();
  const size_t nj = s.num_joints();
  if (rig.bone_limits.size() != nj) {
    return Fail(error, "rig bone_limits: expected " + std::to_string(nj) + " entries, got " +
                           std::to_string(rig.bone_limits.size()));
  }
  for (size_t j = 0; j < nj; ++j) {
    const BoneLimit& b = rig.bone_limits[j];
    const std::string where = "joint '" + s.name(static_cast<int>(j)) + "'";
    if (b.kind == BoneLimit::Kind::kCone && !(b.max_angle >= 0 && b.max_angle <= kPi)) {
      return Fail(error, where + ": cone angle must be in [0, 180] degrees");
    }
    if (b.kind == BoneLimit::Kind::kHinge) {
      if (!b.axis.allFinite() || std::abs(b.axis.norm() - 1.0) > 1e-6) {
        return Fail(error, where + ": hinge axis must be a non-zero finite vector");
      }
      if (!(b.min >= -kPi && b.max <= kPi && b.min <= b.max)) {
        return Fail(error, where + ": hinge range must satisfy -180 <= min <= max <= 180 degrees");
      }
    }
  }
  return true;
}

// Task i: its joints, offsets, weight and per-type fields.
bool ValidateTask(const Skeleton& s, const Task& t, size_t i, std::string* error) {
  const int n = s.num_joints();
  const std::string where =
      "task " + std::to_string(i) + " (" + std::string(TaskTypeName(t.type)) + ")";
  if (t.joint < 0 || t.joint >= n) return Fail(error, where + ": joint out of range");
  if (!t.offset.allFinite()) return Fail(error, where + ": offset not finite");
  if (!t.offset_rotation.coeffs().allFinite() || std::abs(t.offset_rotation.norm() - 1.0) > 1e-6) {
    return Fail(error, where + ": offset_rotation not unit length");
  }
  if (!Finite(t.weight) || t.weight < 0) return Fail(error, where + ": negative weight");
  if ((t.type == TaskType::kPosition || t.type == TaskType::kPose) && (t.position_axes & 7) == 0) {
    return Fail(error, where + ": no position axis");
  }
  if (t.type == TaskType::kAim &&
      (!t.aim_axis.allFinite() || std::abs(t.aim_axis.norm() - 1.0) > 1e-6)) {
    return Fail(error, where + ": aim_axis not unit length");
  }
  if (t.type == TaskType::kPole) {
    if (t.pole_root < 0 || t.pole_root >= n || t.pole_mid < 0 || t.pole_mid >= n) {
      return Fail(error, where + ": pole_root/pole_mid out of range");
    }
    if (!IsAncestorOrSelf(s, t.pole_root, t.pole_mid) ||
        !IsAncestorOrSelf(s, t.pole_mid, t.joint) || t.pole_root == t.pole_mid ||
        t.pole_mid == t.joint) {
      return Fail(error, where + ": pole_root and pole_mid must be ancestors of the joint");
    }
  }
  return true;
}

// Stage i: its task indexes, chain root, settings and blend.
bool ValidateStage(const Rig& rig, const Stage& st, size_t i, std::string* error) {
  const int n = rig.skeleton().num_joints();
  const std::string where =
      "stage " + std::to_string(i) + " (" + std::string(MethodName(st.method)) + ")";
  for (const int t : st.tasks) {
    if (t < 0 || t >= static_cast<int>(rig.tasks.size())) {
      return Fail(error, where + ": task index out of range");
    }
  }
  if (st.chain_root < -1 || st.chain_root >= n) {
    return Fail(error, where + ": chain_root out of range");
  }
  const Settings& x = st.settings;
  if (x.max_iterations < 1 || !(x.position_tolerance >= 0) || !(x.angle_tolerance >= 0) ||
      !(x.lambda >= 0) || !(x.lambda_min >= 0) || !(x.lambda_max >= x.lambda_min) ||
      x.stall_iterations < 1 || x.preferred_power < 2 || x.preferred_power % 2 != 0 ||
      !Finite(x.max_step) || !Finite(x.preferred_step) || !(x.svd_threshold >= 0)) {
    return Fail(error, where + ": settings out of range");
  }
  if (!(st.ik_blend >= 0 && st.ik_blend <= 1)) {
    return Fail(error, where + ": ik_blend must be in [0, 1]");
  }
  return true;
}

}  // namespace

// Validates the rig's data arrays and tasks.
bool ValidateRig(const Rig& rig, std::string* error) {
  if (!rig.skeleton_ptr()) return Fail(error, "rig has no skeleton");
  if (!ValidateArrays(rig, error) || !ValidateBoneLimits(rig, error)) return false;
  for (size_t i = 0; i < rig.tasks.size(); ++i) {
    if (!ValidateTask(rig.skeleton(), rig.tasks[i], i, error)) return false;
  }
  for (size_t i = 0; i < rig.stages.size(); ++i) {
    if (!ValidateStage(rig, rig.stages[i], i, error)) return false;
  }
  return true;
}

bool ValidateFrame(const Rig& rig, std::span<const Target> targets, const Pose& pose,
                   std::string* error) {
  if (!rig.skeleton_ptr()) return Fail(error, "rig has no skeleton");
  const Skeleton& s = rig.skeleton();
  if (!pose.matches(s)) {
    return Fail(error, "pose does not match the skeleton: expected " +
                           std::to_string(s.num_channels()) + " channels, got " +
                           std::to_string(pose.channels.size()));
  }
  if (targets.size() != rig.tasks.size()) {
    return Fail(error, "targets: expected " + std::to_string(rig.tasks.size()) + ", got " +
                           std::to_string(targets.size()));
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    const Target& t = targets[i];
    if (!t.position.allFinite() || !t.orientation.coeffs().allFinite() || !Finite(t.weight) ||
        t.weight < 0) {
      return Fail(error, "target " + std::to_string(i) + ": not finite or negative weight");
    }
    if (!(t.ik_blend >= 0 && t.ik_blend <= 1)) {
      return Fail(error, "target " + std::to_string(i) + ": ik_blend must be in [0, 1]");
    }
    const TaskType type = rig.tasks[i].type;
    if ((type == TaskType::kOrientation || type == TaskType::kPose) &&
        std::abs(t.orientation.norm() - 1.0) > 1e-6) {
      return Fail(error, "target " + std::to_string(i) + ": orientation not unit length");
    }
  }
  // Keyed per frame (rig:stage_ik_blend), so checked per frame too.
  for (size_t i = 0; i < rig.stages.size(); ++i) {
    if (!(rig.stages[i].ik_blend >= 0 && rig.stages[i].ik_blend <= 1)) {
      return Fail(error, "stage " + std::to_string(i) + ": ik_blend must be in [0, 1]");
    }
  }
  for (size_t c = 0; c < pose.channels.size(); ++c) {
    if (!Finite(pose.channels[c])) {
      return Fail(error, "pose channel " + std::to_string(c) + " is not finite");
    }
  }
  return true;
}

}  // namespace rigel::ik::internal
