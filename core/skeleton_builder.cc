#include "core/skeleton_builder.h"

#include <array>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/fail.h"

namespace rigel {

int RawSkeleton::num_joints() const {
  int count = 0;
  std::vector<const Joint*> stack;
  for (const Joint& root : roots) stack.push_back(&root);
  while (!stack.empty()) {
    const Joint* joint = stack.back();
    stack.pop_back();
    ++count;
    for (const Joint& child : joint->children) stack.push_back(&child);
  }
  return count;
}

namespace {

// Joint #index's name (non-empty, unused so far), depth, rest transform and channel count;
// `names` and `index_by_name` hold the joints built so far.
bool CheckJoint(const RawSkeleton::Joint& j, int index, int parent, int depth,
                const std::string& where, const std::vector<std::string>& names,
                const std::unordered_map<std::string, int>& index_by_name, std::string* error) {
  if (index >= Skeleton::kMaxJoints) {
    return Fail(error, "too many joints: more than " + std::to_string(Skeleton::kMaxJoints));
  }
  if (depth > Skeleton::kMaxDepth) {
    return Fail(error,
                where + ": nested deeper than " + std::to_string(Skeleton::kMaxDepth) + " levels");
  }
  if (j.name.empty()) {
    return Fail(error, "joint #" + std::to_string(index) + " (child of " +
                           (parent < 0 ? std::string("no parent") : names[parent]) +
                           "): empty name");
  }
  if (index_by_name.count(j.name)) {
    return Fail(error, where + ": name used twice (joints #" +
                           std::to_string(index_by_name.at(j.name)) + " and #" +
                           std::to_string(index) + ")");
  }
  if (!j.rest_translation.allFinite()) {
    return Fail(error, where + ": rest translation is not finite");
  }
  if (!j.rest_orientation.coeffs().allFinite() ||
      std::abs(j.rest_orientation.norm() - 1.0) > 1e-6) {
    return Fail(error, where + ": rest orientation is not a unit quaternion");
  }
  if (j.channels.size() > 9) {
    return Fail(error,
                where + ": " + std::to_string(j.channels.size()) + " channels, at most 9 expected");
  }
  return true;
}

// A joint's channels as rows of the clip, from `first_row`: by axis for translation and scale,
// in order for rotation.
struct JointRows {
  std::array<int, 3> translation = {-1, -1, -1};
  std::array<int, 3> rotation = {-1, -1, -1};
  std::array<int, 3> scale = {-1, -1, -1};
  unsigned char rotation_count = 0;
  bool has_scale = false;
};

bool MapChannels(const RawSkeleton::Joint& j, int first_row, const std::string& where,
                 JointRows* rows, std::string* error) {
  unsigned used = 0;
  for (size_t k = 0; k < j.channels.size(); ++k) {
    const ChannelType c = j.channels[k];
    if (static_cast<int>(c) > static_cast<int>(ChannelType::kZscale)) {
      return Fail(error, where + ": unknown channel type " + std::to_string(static_cast<int>(c)));
    }
    const unsigned bit = 1u << static_cast<int>(c);
    if (used & bit) {
      return Fail(error, where + ": channel " + std::string(ChannelName(c)) + " listed twice");
    }
    used |= bit;
    const int row = first_row + static_cast<int>(k);
    if (IsTranslation(c)) {
      rows->translation[ChannelAxis(c)] = row;
    } else if (IsScale(c)) {
      rows->scale[ChannelAxis(c)] = row;
      rows->has_scale = true;
    } else {
      rows->rotation[rows->rotation_count++] = row;
    }
  }
  return true;
}

// End Site names (none, or one per End Site) and finite offsets.
bool CheckEndSites(const RawSkeleton::Joint& j, const std::string& where, std::string* error) {
  if (!j.end_site_names.empty() && j.end_site_names.size() != j.end_sites.size()) {
    return Fail(error, where + ": End Site names do not match its End Sites");
  }
  for (const Eigen::Vector3d& e : j.end_sites) {
    if (!e.allFinite()) return Fail(error, where + ": End Site offset is not finite");
  }
  return true;
}

}  // namespace

std::unique_ptr<Skeleton> SkeletonBuilder::Build(const RawSkeleton& raw, std::string* error) const {
  if (raw.roots.empty()) {
    Fail(error, "skeleton has no joint");
    return nullptr;
  }
  std::unique_ptr<Skeleton> s(new Skeleton());
  struct Item {
    const RawSkeleton::Joint* joint;
    int parent;
    int depth;
  };
  std::vector<Item> stack;
  for (auto it = raw.roots.rbegin(); it != raw.roots.rend(); ++it) stack.push_back({&*it, -1, 1});
  s->channel_begin_.push_back(0);
  while (!stack.empty()) {
    const Item item = stack.back();
    stack.pop_back();
    const RawSkeleton::Joint& j = *item.joint;
    const int index = s->num_joints();
    const std::string where = "joint '" + j.name + "'";
    JointRows rows;
    if (!CheckJoint(j, index, item.parent, item.depth, where, s->names_, s->index_by_name_,
                    error) ||
        !MapChannels(j, s->num_channels(), where, &rows, error) ||
        !CheckEndSites(j, where, error)) {
      return nullptr;
    }
    if (rows.has_scale) s->has_scale_ = true;
    for (std::size_t k = 0; k < j.end_sites.size(); ++k) {
      s->end_sites_.push_back(
          {index, j.end_sites[k], j.end_site_names.empty() ? std::string() : j.end_site_names[k]});
    }
    s->parents_.push_back(item.parent);
    s->children_.emplace_back();
    if (item.parent >= 0) s->children_[item.parent].push_back(index);
    s->names_.push_back(j.name);
    s->index_by_name_.emplace(j.name, index);
    s->rest_translations_.push_back(j.rest_translation);
    s->rest_orientations_.push_back(j.rest_orientation.normalized());
    s->translation_modes_.push_back(j.translation_mode);
    for (const ChannelType c : j.channels) {
      s->channels_.push_back(c);
      s->channel_joint_.push_back(index);
    }
    s->channel_begin_.push_back(s->num_channels());
    s->translation_channel_.push_back(rows.translation);
    s->rotation_channel_.push_back(rows.rotation);
    s->rotation_count_.push_back(rows.rotation_count);
    s->scale_channel_.push_back(rows.scale);
    s->scale_inheritance_.push_back(j.scale_inheritance);
    for (auto it = j.children.rbegin(); it != j.children.rend(); ++it) {
      stack.push_back({&*it, index, item.depth + 1});
    }
  }
  return s;
}

RawSkeleton ToRawSkeleton(const Skeleton& skeleton) {
  const int n = skeleton.num_joints();
  std::vector<std::vector<Eigen::Vector3d>> end_sites(n);
  std::vector<std::vector<std::string>> end_site_names(n);
  bool named = false;
  for (const EndSite& e : skeleton.end_sites()) {
    end_sites[e.parent].push_back(e.offset);
    end_site_names[e.parent].push_back(e.name);
    named = named || !e.name.empty();
  }
  std::function<RawSkeleton::Joint(int)> make = [&](int j) {
    RawSkeleton::Joint joint;
    joint.name = skeleton.name(j);
    joint.rest_translation = skeleton.rest_translation(j);
    joint.rest_orientation = skeleton.rest_orientation(j);
    joint.translation_mode = skeleton.translation_mode(j);
    joint.scale_inheritance = skeleton.scale_inheritance(j);
    const auto channels = skeleton.joint_channels(j);
    joint.channels.assign(channels.begin(), channels.end());
    joint.end_sites = end_sites[j];
    if (named) joint.end_site_names = end_site_names[j];
    for (const int c : skeleton.children(j)) joint.children.push_back(make(c));
    return joint;
  };
  RawSkeleton raw;
  for (int j = 0; j < n; ++j) {
    if (skeleton.parent(j) == Skeleton::kNoParent) raw.roots.push_back(make(j));
  }
  return raw;
}

}  // namespace rigel
