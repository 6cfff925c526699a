// Shared pieces of the constraint jobs. See constraint.h.
#include "core/constraints/constraint.h"

#include <algorithm>
#include <vector>

#include "core/euler.h"
#include "core/pose.h"
#include "core/pose_edit.h"
#include "core/skeleton.h"

namespace rigel::constraints {

bool ApplyWorld(const Skeleton& skeleton, Pose& pose, int joint, const Eigen::Isometry3d& desired,
                double influence, bool write_rotation, bool write_position, std::string* error) {
  const Eigen::Isometry3d& own = pose.world[joint];
  const int parent = skeleton.parent(joint);
  const Eigen::Isometry3d world_from_parent =
      parent >= 0 ? pose.world[parent] : Eigen::Isometry3d::Identity();
  const Eigen::Quaterniond own_rotation(own.linear());
  const Eigen::Quaterniond desired_rotation(desired.linear());
  const Eigen::Quaterniond rotation =
      influence >= 1.0 ? desired_rotation : own_rotation.slerp(influence, desired_rotation);
  const Eigen::Vector3d position =
      own.translation() + influence * (desired.translation() - own.translation());
  if (write_rotation) {
    if (!SetJointWorldRotation(skeleton, joint, Eigen::Quaterniond(world_from_parent.linear()),
                               rotation, pose.channels)) {
      if (error != nullptr)
        *error = "joint '" + skeleton.name(joint) + "' needs three rotation channels";
      return false;
    }
  }
  if (write_position) {
    // The joint's offset is in its parent's scaled space (skeletons with scale).
    Eigen::Vector3d local = world_from_parent.inverse() * position;
    if (skeleton.has_scale() && parent >= 0) {
      std::vector<Eigen::Isometry3d> world(skeleton.num_joints());
      std::vector<Eigen::Matrix3d> linear(skeleton.num_joints());
      ForwardKinematicsScaled(skeleton, pose.channels, world, linear);
      local = linear[parent].inverse() * (position - world[parent].translation());
    }
    if (!SetJointLocalPosition(skeleton, joint, local, pose.channels)) {
      if (error != nullptr) *error = "joint '" + skeleton.name(joint) + "' lacks position channels";
      return false;
    }
  }
  pose.UpdateWorld(skeleton, joint);
  return true;
}

bool ApplyWorldPosition(const Skeleton& skeleton, Pose& pose, int joint,
                        const Eigen::Vector3d& position, double influence, std::string* error) {
  Eigen::Isometry3d desired = pose.world[joint];
  desired.translation() = position;
  return ApplyWorld(skeleton, pose, joint, desired, influence, false, true, error);
}

bool ApplyWorldRotation(const Skeleton& skeleton, Pose& pose, int joint,
                        const Eigen::Matrix3d& rotation, double influence, std::string* error) {
  Eigen::Isometry3d desired = pose.world[joint];
  desired.linear() = rotation;
  return ApplyWorld(skeleton, pose, joint, desired, influence, true, false, error);
}

Eigen::Vector3d MaskAxes(const Eigen::Vector3d& own, const Eigen::Vector3d& replacement,
                         std::uint8_t axes) {
  Eigen::Vector3d masked = own;
  for (int a = 0; a < 3; ++a) {
    if ((axes >> a & 1) != 0) masked[a] = replacement[a];
  }
  return masked;
}

Eigen::Quaterniond MaskRotation(const Eigen::Quaterniond& own,
                                const Eigen::Quaterniond& replacement, std::uint8_t axes) {
  if ((axes & kAllAxes) == kAllAxes) return replacement;
  return FromWorldEulerXYZ(MaskAxes(WorldEulerXYZ(own), WorldEulerXYZ(replacement), axes));
}

Eigen::Vector3d WorldEulerXYZ(const Eigen::Quaterniond& rotation) {
  return MatrixToEuler(rotation.toRotationMatrix(), EulerOrder::kZYX);
}

Eigen::Quaterniond FromWorldEulerXYZ(const Eigen::Vector3d& xyz) {
  return EulerToQuaternion(EulerOrder::kZYX, xyz);
}

bool IsDescendant(const Skeleton& skeleton, int joint, int ancestor) {
  for (int j = skeleton.parent(joint); j >= 0; j = skeleton.parent(j)) {
    if (j == ancestor) return true;
  }
  return false;
}

bool CheckCommon(const Skeleton& skeleton, const char* kind, int joint, int target,
                 bool target_required, double influence, std::string* error) {
  const int n = skeleton.num_joints();
  std::string why;
  if (joint < 0 || joint >= n) {
    why = "joint index " + std::to_string(joint) + " out of range";
  } else if (target_required && (target < 0 || target >= n)) {
    why = "target index " + std::to_string(target) + " out of range";
  } else if (target >= n) {
    why = "target index " + std::to_string(target) + " out of range";
  } else if (target == joint) {
    why = "joint '" + skeleton.name(joint) + "' cannot be its own target";
  } else if (target >= 0 && IsDescendant(skeleton, target, joint)) {
    why = "target '" + skeleton.name(target) + "' is a descendant of '" + skeleton.name(joint) +
          "' (it would move with the joint)";
  } else if (!(influence >= 0.0 && influence <= 1.0)) {
    why = "influence must be in [0, 1]";
  }
  if (why.empty()) return true;
  if (error != nullptr) *error = std::string(kind) + ": " + why;
  return false;
}

bool CheckMasked(const Skeleton& skeleton, const char* kind, int joint, int target,
                 double influence, std::uint8_t axes, Part part, std::string* error) {
  if (!CheckCommon(skeleton, kind, joint, target, true, influence, error)) return false;
  if ((axes & kAllAxes) == 0) {
    if (error != nullptr) *error = std::string(kind) + ": no axis constrained";
    return false;
  }
  return part == Part::kPosition ? CheckPositionChannels(skeleton, kind, joint, axes, error)
                                 : CheckRotationChannels(skeleton, kind, joint, error);
}

bool CheckRotationChannels(const Skeleton& skeleton, const char* kind, int joint,
                           std::string* error) {
  if (skeleton.rotation_order(joint)) return true;
  if (error != nullptr) {
    *error = std::string(kind) + ": joint '" + skeleton.name(joint) + "' has " +
             std::to_string(skeleton.rotation_channels(joint).size()) +
             " rotation channel(s); this needs three";
  }
  return false;
}

bool CheckPositionChannels(const Skeleton& skeleton, const char* kind, int joint, std::uint8_t axes,
                           std::string* error) {
  for (int a = 0; a < 3; ++a) {
    if ((axes >> a & 1) != 0 && skeleton.translation_channel(joint, a) < 0) {
      if (error != nullptr) {
        *error = std::string(kind) + ": joint '" + skeleton.name(joint) + "' has no " +
                 static_cast<char>('X' + a) + "position channel";
      }
      return false;
    }
  }
  return true;
}

}  // namespace rigel::constraints
