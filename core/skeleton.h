// Skeleton: the immutable, flat joint hierarchy shared (read-only, thread-safe) by every pose,
// clip, rig and solver of a character. Built only by SkeletonBuilder.
#ifndef RIGEL_CORE_SKELETON_H_
#define RIGEL_CORE_SKELETON_H_

#include <Eigen/Geometry>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/channel.h"
#include "core/euler.h"

namespace rigel {

class SkeletonBuilder;

// A BVH "End Site": a fixed point in the space of its parent joint (fingertip, head top).
struct EndSite {
  int parent = -1;
  Eigen::Vector3d offset = Eigen::Vector3d::Zero();
  // The leaf node's name where the file names it (an FBX or glTF leaf bone such as 3ds Max's
  // "Bip01 HeadNub"); empty for BVH's unnamed End Sites. Writers that name end sites use it.
  std::string name;
};

class Skeleton {
 public:
  // Bounds enforced by SkeletonBuilder (and by importers before they allocate).
  static constexpr int kMaxJoints = 1024;
  static constexpr int kMaxDepth = 256;
  static constexpr int kNoParent = -1;

  Skeleton(const Skeleton&) = delete;
  Skeleton& operator=(const Skeleton&) = delete;
  Skeleton(Skeleton&&) = default;
  Skeleton& operator=(Skeleton&&) = default;

  int num_joints() const { return static_cast<int>(parents_.size()); }
  // Total channels over all joints: the width of a Clip row.
  int num_channels() const { return static_cast<int>(channels_.size()); }

  // Parent index of each joint; parents()[i] < i, roots have kNoParent.
  std::span<const int> parents() const { return parents_; }
  int parent(int joint) const { return parents_[joint]; }
  // Children of `joint` in file order.
  std::span<const int> children(int joint) const { return children_[joint]; }

  const std::string& name(int joint) const { return names_[joint]; }
  std::span<const std::string> names() const { return names_; }
  // Index of the joint called `name`, or -1.
  int FindJoint(std::string_view name) const;

  // Rest translation of a joint in its parent's space (BVH OFFSET).
  const Eigen::Vector3d& rest_translation(int joint) const { return rest_translations_[joint]; }
  // Rest orientation of a joint in its parent's space (identity for BVH).
  const Eigen::Quaterniond& rest_orientation(int joint) const { return rest_orientations_[joint]; }

  // How the source file stated this joint's position channels (the BVH writer restores it). Clip
  // values are deltas added to rest_translation() whatever the mode.
  TranslationMode translation_mode(int joint) const { return translation_modes_[joint]; }

  // The whole channel layout, joint after joint, in file order.
  std::span<const ChannelType> channels() const { return channels_; }
  // First channel of `joint` in a Clip row, and its count.
  int channel_begin(int joint) const { return channel_begin_[joint]; }
  int channel_count(int joint) const { return channel_begin_[joint + 1] - channel_begin_[joint]; }
  std::span<const ChannelType> joint_channels(int joint) const {
    return std::span<const ChannelType>(channels_).subspan(channel_begin_[joint],
                                                           channel_count(joint));
  }
  // The joint owning channel `channel`.
  int channel_joint(int channel) const { return channel_joint_[channel]; }

  // Row index of the joint's X/Y/Z position channel (0, 1, 2 = axis), or -1 when absent.
  int translation_channel(int joint, int axis) const { return translation_channel_[joint][axis]; }
  // Row index of the joint's X/Y/Z scale channel (0, 1, 2 = axis), or -1 when absent.
  int scale_channel(int joint, int axis) const { return scale_channel_[joint][axis]; }
  // The joint has a scale channel.
  bool has_scale(int joint) const {
    return scale_channel_[joint][0] >= 0 || scale_channel_[joint][1] >= 0 ||
           scale_channel_[joint][2] >= 0;
  }
  // Some joint has a scale channel: FK then computes world linear parts (Pose::linear).
  bool has_scale() const { return has_scale_; }
  // How the joint inherits its parent's scale (FBX InheritType).
  ScaleInheritance scale_inheritance(int joint) const { return scale_inheritance_[joint]; }
  // Rotation channels of the joint in product order (indices into a Clip row).
  std::span<const int> rotation_channels(int joint) const {
    return std::span<const int>(rotation_channel_[joint].data(), rotation_count_[joint]);
  }
  // The Euler order of a joint with three rotation channels; nullopt otherwise.
  std::optional<EulerOrder> rotation_order(int joint) const;

  std::span<const EndSite> end_sites() const { return end_sites_; }

 private:
  friend class SkeletonBuilder;
  Skeleton() = default;

  std::vector<int> parents_;
  std::vector<std::vector<int>> children_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, int> index_by_name_;
  std::vector<Eigen::Vector3d> rest_translations_;
  std::vector<Eigen::Quaterniond> rest_orientations_;
  std::vector<TranslationMode> translation_modes_;
  std::vector<ChannelType> channels_;
  std::vector<int> channel_begin_;  // num_joints + 1 entries.
  std::vector<int> channel_joint_;
  std::vector<std::array<int, 3>> translation_channel_;
  std::vector<std::array<int, 3>> rotation_channel_;
  std::vector<std::array<int, 3>> scale_channel_;
  std::vector<ScaleInheritance> scale_inheritance_;
  bool has_scale_ = false;
  std::vector<unsigned char> rotation_count_;
  std::vector<EndSite> end_sites_;
};

// Whether `ancestor` is `joint` or one of its ancestors.
inline bool IsAncestorOrSelf(const Skeleton& s, int ancestor, int joint) {
  for (int j = joint; j != Skeleton::kNoParent; j = s.parent(j)) {
    if (j == ancestor) return true;
  }
  return false;
}

// Whether `ancestor` is one of `joint`'s ancestors (a joint is not its own).
inline bool IsAncestor(const Skeleton& s, int ancestor, int joint) {
  return joint != Skeleton::kNoParent && IsAncestorOrSelf(s, ancestor, s.parent(joint));
}

}  // namespace rigel

#endif  // RIGEL_CORE_SKELETON_H_
