#include "core/retarget/root_motion.h"

#include <cmath>
#include <utility>

#include "core/euler.h"
#include "core/pose.h"
#include "core/skeleton_builder.h"
#include "core/skeleton_utils.h"

namespace rigel::retarget {

namespace {

// Signed angle from `a` to `b` (both horizontal) about axis `up`.
double YawBetween(const Eigen::Vector3d& a, const Eigen::Vector3d& b, int up) {
  return std::atan2(Eigen::Vector3d::Unit(up).dot(a.cross(b)), a.dot(b));
}

// Writes the position channels of `joint` so its local translation is `local`.
void SetTranslationChannels(const Skeleton& s, int joint, const Eigen::Vector3d& local,
                            std::span<double> row) {
  const Eigen::Vector3d delta = local - s.rest_translation(joint);
  for (int axis = 0; axis < 3; ++axis) {
    const int ch = s.translation_channel(joint, axis);
    if (ch >= 0) row[ch] = delta[axis];
  }
}

// Writes the channels of `joint` so its world transform is `world`, given its parent's world.
void SetWorld(const Skeleton& s, int joint, const Eigen::Isometry3d& parent_world,
              const Eigen::Isometry3d& world, std::span<double> row, std::span<const double> near) {
  const Eigen::Isometry3d local = parent_world.inverse() * world;
  SetRotationChannels(s, joint,
                      s.rest_orientation(joint).toRotationMatrix().transpose() * local.linear(),
                      row, near);
  SetTranslationChannels(s, joint, local.translation(), row);
}

}  // namespace

std::shared_ptr<const Skeleton> AddRootBone(const Skeleton& target, const std::string& name,
                                            int up_axis, std::string* error) {
  RawSkeleton raw = ToRawSkeleton(target);
  if (raw.roots.size() != 1) {
    *error = "--root-motion extract: the target has " + std::to_string(raw.roots.size()) +
             " roots: cannot add the root bone '" + name + "' above them";
    return nullptr;
  }
  if (target.FindJoint(name) >= 0) {
    *error = "--root-motion extract: the target already has a joint '" + name + "'";
    return nullptr;
  }
  // At the ground under the hips of the rest pose: inside the pose's bounds, so the up-axis guess
  // and the ground the alignment finds are the target's own.
  std::vector<Eigen::Isometry3d> w(target.num_joints());
  ForwardKinematics(target, std::vector<double>(target.num_channels(), 0.0), w);
  const int up = up_axis >= 1 ? up_axis : GuessUpAxis(JointBounds(w));
  double ground = 0.0;
  PoseHeight(target, w, up, &ground);
  Eigen::Vector3d at = w[0].translation();
  at[up] = ground;
  RawSkeleton::Joint root;
  root.name = name;
  root.rest_translation = at;
  raw.roots[0].rest_translation -= at;
  root.channels = {ChannelType::kXposition, ChannelType::kYposition, ChannelType::kZposition};
  bool rotations = false;
  for (const ChannelType c : raw.roots[0].channels) {
    if (IsRotation(c)) {
      root.channels.push_back(c);
      rotations = true;
    }
  }
  if (!rotations) {
    root.channels.insert(root.channels.end(), {ChannelType::kZrotation, ChannelType::kXrotation,
                                               ChannelType::kYrotation});
  }
  root.children.push_back(std::move(raw.roots[0]));
  raw.roots[0] = std::move(root);
  std::unique_ptr<Skeleton> built = SkeletonBuilder().Build(raw, error);
  return std::shared_ptr<const Skeleton>(std::move(built));
}

void ShiftForAddedRoot(int added_channels, Alignment* a) {
  auto shift = [](int& j) {
    if (j >= 0) ++j;
  };
  for (int& j : a->single_child) shift(j);
  a->source_of.insert(a->source_of.begin(), -1);
  a->alignment.insert(a->alignment.begin(), Eigen::Matrix3d::Identity());
  a->single_child.insert(a->single_child.begin(), -1);
  a->child_segment.insert(a->child_segment.begin(), Eigen::Vector3d::Zero());
  a->target_reference_row.insert(a->target_reference_row.begin(), added_channels, 0.0);
  shift(a->target_hips);
  shift(a->translation_joint);
  shift(a->left_upper_leg);
  shift(a->right_upper_leg);
  for (Bone& b : a->bones) {
    shift(b.target_a);
    shift(b.target_b);
  }
  for (Limb& l : a->limbs) {
    shift(l.upper);
    shift(l.lower);
    shift(l.end);
  }
}

std::string SetUpRootMotion(const Skeleton& tgt, const RetargetOptions& options, bool added,
                            Alignment* a, std::vector<std::string>* warnings) {
  const int hips = a->target_hips;
  int root = hips;
  while (tgt.parent(root) >= 0) root = tgt.parent(root);
  if (!options.root_motion_bone.empty()) {
    root = tgt.FindJoint(options.root_motion_bone);
    if (root < 0 || !IsAncestor(tgt, root, hips)) {
      return "--root-motion-bone '" + options.root_motion_bone + "': " +
             (root < 0 ? std::string("no such joint in the target")
                       : "not above the hips '" + tgt.name(hips) + "'");
    }
    if (added && tgt.parent(hips) != root) {
      return "--root-motion-bone '" + options.root_motion_bone + "': no such joint in the " +
             "target, and a new root is added only above the hips (the target's root is '" +
             tgt.name(tgt.children(root)[0]) + "')";
    }
  } else if (root == hips) {
    return "--root-motion extract: the target's root is its hips '" + tgt.name(hips) +
           "': name a root bone to add with --root-motion-bone NAME";
  }
  const int up = a->target_up;
  for (int axis = 0; axis < 3; ++axis) {
    if (axis != up && tgt.translation_channel(root, axis) < 0) {
      return "--root-motion extract: the root bone '" + tgt.name(root) +
             "' has no position channel along the horizontal axis " + "XYZ"[axis];
    }
  }
  for (int axis = 0; axis < 3; ++axis) {
    if (tgt.translation_channel(hips, axis) < 0) {
      return "--root-motion extract: the hips '" + tgt.name(hips) +
             "' have no position channel along " + "XYZ"[axis] +
             ": they could not keep their height and offset from the root";
    }
  }
  if (tgt.rotation_channels(root).empty()) {
    warnings->push_back("--root-motion extract: the root bone '" + tgt.name(root) +
                        "' has no rotation channel: the heading stays on the hips");
  }
  std::vector<Eigen::Isometry3d> w(tgt.num_joints());
  ForwardKinematics(tgt, a->target_reference_row, w);
  a->root_bone = root;
  a->root_bone_added = added;
  a->root_reference_position = w[root].translation();
  a->root_reference_rotation = w[root].linear();
  // Heading axis: the line from the right thigh to the left one, else any horizontal axis.
  Eigen::Vector3d axis = Eigen::Vector3d::Unit(up == 0 ? 1 : 0);
  if (a->left_upper_leg >= 0 && a->right_upper_leg >= 0) {
    const Eigen::Vector3d lr =
        Horizontal(w[a->left_upper_leg].translation() - w[a->right_upper_leg].translation(), up);
    if (lr.norm() > 1e-9) axis = lr.normalized();
  }
  a->heading_axis_world = axis;
  a->heading_axis_hips = w[hips].linear().transpose() * axis;
  return "";
}

RootMotionSummary ExtractRootMotion(const Skeleton& tgt, const Alignment& a, Clip* clip) {
  RootMotionSummary out;
  const int up = a.target_up;
  const int root = a.root_bone;
  const int hips = a.target_hips;
  const bool heading = !tgt.rotation_channels(root).empty();
  std::vector<Eigen::Isometry3d> w(tgt.num_joints());
  std::vector<double> prev(clip->num_channels());
  double yaw = 0.0;
  double first_yaw = 0.0;
  Eigen::Vector3d prev_position = Eigen::Vector3d::Zero();
  for (int f = 0; f < clip->num_frames(); ++f) {
    std::span<double> row = clip->frame(f);
    if (f == 0) std::copy(row.begin(), row.end(), prev.begin());
    ForwardKinematics(tgt, row, w);
    const Eigen::Isometry3d hips_world = w[hips];
    // Heading: the yaw of the hips' heading axis from the reference pose's, unwrapped.
    if (heading) {
      const Eigen::Vector3d now = Horizontal(hips_world.linear() * a.heading_axis_hips, up);
      if (now.norm() > 1e-9) {
        const double raw = YawBetween(a.heading_axis_world, now, up);
        const double next = f == 0 ? raw : WrapNear(raw, yaw);
        out.heading_turned += std::abs(next - yaw) * (f > 0);
        yaw = next;
      }
      if (f == 0) first_yaw = yaw;
    }
    Eigen::Isometry3d root_world = Eigen::Isometry3d::Identity();
    Eigen::Vector3d position = hips_world.translation();
    position[up] = a.root_reference_position[up];
    root_world.translation() = position;
    root_world.linear() = Eigen::AngleAxisd(yaw, Eigen::Vector3d::Unit(up)).toRotationMatrix() *
                          a.root_reference_rotation;
    const int root_parent = tgt.parent(root);
    SetWorld(tgt, root, root_parent < 0 ? Eigen::Isometry3d::Identity() : w[root_parent],
             root_world, row, prev);
    // The hips keep their world transform under the new root.
    ForwardKinematics(tgt, row, w, root);
    SetWorld(tgt, hips, w[tgt.parent(hips)], hips_world, row, prev);
    if (f > 0) out.path_length += (position - prev_position).norm();
    prev_position = position;
    std::copy(row.begin(), row.end(), prev.begin());
  }
  out.heading_change = yaw - first_yaw;
  return out;
}

}  // namespace rigel::retarget
