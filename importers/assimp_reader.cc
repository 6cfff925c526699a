#include "importers/assimp_reader.h"

#include <assimp/config.h>
#include <assimp/scene.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <assimp/Importer.hpp>
#include <cmath>
#include <limits>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/euler.h"
#include "core/raw_skeleton.h"
#include "core/skeleton_builder.h"
#include "importers/load_scene.h"

namespace rigel {

namespace {

constexpr std::string_view kHelperTag = "_$AssimpFbx$_";
constexpr int kMaxFrames = 1'000'000;
constexpr double kMaxClipValues = 2e8;

Eigen::Affine3d ToEigen(const aiMatrix4x4& m) {
  Eigen::Matrix4d e;
  e << m.a1, m.a2, m.a3, m.a4, m.b1, m.b2, m.b3, m.b4, m.c1, m.c2, m.c3, m.c4, m.d1, m.d2, m.d3,
      m.d4;
  return Eigen::Affine3d(e);
}

// A rigid frame: the rotation and origin of a (possibly scaled) transform.
struct Frame {
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
  Eigen::Vector3d origin = Eigen::Vector3d::Zero();
};

// Removes scale from `t`. Sets *nonuniform when the axes' scales differ by more than 1e-4.
Frame ToFrame(const Eigen::Affine3d& t, bool* nonuniform) {
  Frame f;
  f.origin = t.translation();
  Eigen::Matrix3d m = t.linear();
  Eigen::Vector3d norms(m.col(0).norm(), m.col(1).norm(), m.col(2).norm());
  if (norms.minCoeff() <= 0.0 || !std::isfinite(norms.maxCoeff())) {
    *nonuniform = true;
    return f;
  }
  const bool uniform = norms.maxCoeff() - norms.minCoeff() <= 1e-4 * norms.maxCoeff();
  if (!uniform) *nonuniform = true;
  for (int i = 0; i < 3; ++i) m.col(i) /= norms[i];
  // A uniform negative scale (3ds Max "Nub" bones: -1 -1 -1) is a rotation times -s: positions
  // below stay exact because local translations are taken from world positions.
  if (m.determinant() < 0)
    m = uniform ? Eigen::Matrix3d(-m) : Eigen::Matrix3d(m * Eigen::Vector3d(1, 1, -1).asDiagonal());
  f.rotation = Eigen::Quaterniond(m).normalized().toRotationMatrix();
  return f;
}

struct Node {
  const aiNode* ai = nullptr;
  int parent = -1;
  std::string name;
  bool helper = false;
  std::string helper_kind;   // "PreRotation", "Translation", ... for helpers
  int owner = -1;            // helpers above a node: that node's index
  std::vector<int> helpers;  // real nodes: their helper chain above them
  Eigen::Affine3d static_local = Eigen::Affine3d::Identity();
};

std::string Ext(const std::string& path) { return LowerExtension(path); }

template <typename Key>
int KeyIndexAfter(const Key* keys, unsigned count, double t) {
  // First key with time > t.
  const Key* it =
      std::upper_bound(keys, keys + count, t, [](double v, const Key& k) { return v < k.mTime; });
  return static_cast<int>(it - keys);
}

// The key (keys[i - 1] or keys[i]) within `snap` ticks of `t`, or -1. Frames that fall on a key
// take it exactly: a clip keyed on every frame at a rate that is not a whole number (BVH's
// "Frame Time: .0083333") then survives being resampled at the snapped rate (120 fps).
template <typename Key>
int NearKey(const Key* keys, unsigned count, int i, double t, double snap) {
  if (i > 0 && std::abs(keys[i - 1].mTime - t) <= snap) return i - 1;
  if (i < static_cast<int>(count) && std::abs(keys[i].mTime - t) <= snap) return i;
  return -1;
}

Eigen::Vector3d SampleVector(const aiVectorKey* keys, unsigned count, double t, double snap,
                             const Eigen::Vector3d& fallback) {
  if (count == 0) return fallback;
  const int i = KeyIndexAfter(keys, count, t);
  auto v = [&](int k) {
    return Eigen::Vector3d(keys[k].mValue.x, keys[k].mValue.y, keys[k].mValue.z);
  };
  if (const int k = NearKey(keys, count, i, t, snap); k >= 0) return v(k);
  if (i == 0) return v(0);
  if (i >= static_cast<int>(count)) return v(static_cast<int>(count) - 1);
  const double t0 = keys[i - 1].mTime, t1 = keys[i].mTime;
  const double a = t1 > t0 ? (t - t0) / (t1 - t0) : 0.0;
  return (1.0 - a) * v(i - 1) + a * v(i);
}

Eigen::Quaterniond SampleRotation(const aiQuatKey* keys, unsigned count, double t, double snap,
                                  const Eigen::Quaterniond& fallback) {
  if (count == 0) return fallback;
  const int i = KeyIndexAfter(keys, count, t);
  auto q = [&](int k) {
    const aiQuaternion& v = keys[k].mValue;
    return Eigen::Quaterniond(v.w, v.x, v.y, v.z).normalized();
  };
  if (const int k = NearKey(keys, count, i, t, snap); k >= 0) return q(k);
  if (i == 0) return q(0);
  if (i >= static_cast<int>(count)) return q(static_cast<int>(count) - 1);
  const double t0 = keys[i - 1].mTime, t1 = keys[i].mTime;
  const double a = t1 > t0 ? (t - t0) / (t1 - t0) : 0.0;
  return q(i - 1).slerp(a, q(i)).normalized();
}

// Snaps `x` to the nearest whole number when within 0.1%.
double SnapRate(double x) {
  const double r = std::round(x);
  return (r > 0 && std::abs(x - r) <= 1e-3 * x) ? r : x;
}

class Converter {
 public:
  Converter(const aiScene& scene, const std::string& path) : scene_(scene), path_(path) {}

  Scene Run() {
    Flatten();
    ResolveHelpers();
    CollectAnimated();
    SelectJoints();
    ComputeRest();
    Scene out;
    out.source = path_;
    out.file_unit_metres = FileUnit();
    BuildSkeleton(out);
    if (scene_.mNumAnimations == 0) {
      out.warnings.push_back(path_ + ": no animation; the clip is the one pose stored in the file");
      out.clips.push_back(SampleClip(-1, "", *out.skeleton));
    }
    for (unsigned a = 0; a < scene_.mNumAnimations; ++a) {
      const aiAnimation* anim = scene_.mAnimations[a];
      std::string name = anim->mName.C_Str();
      if (name.empty()) name = fmt::format("clip{}", a);
      out.clips.push_back(SampleClip(static_cast<int>(a), name, *out.skeleton));
    }
    if (nonuniform_scale_) {
      warnings_.push_back(fmt::format(
          "{}: non-uniform or negative scale on '{}' (and maybe others) cannot be represented "
          "by rotation and translation channels; motion is approximated",
          path_, nonuniform_name_));
    }
    out.warnings.insert(out.warnings.end(), warnings_.begin(), warnings_.end());
    return out;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw ImportError(fmt::format("{}: {}", path_, what));
  }

  void Flatten() {
    if (!scene_.mRootNode) Fail("the file has no node hierarchy");
    std::vector<std::pair<const aiNode*, int>> stack{{scene_.mRootNode, -1}};
    while (!stack.empty()) {
      auto [ai, parent] = stack.back();
      stack.pop_back();
      if (nodes_.size() > 100000) Fail("more than 100000 nodes");
      Node n;
      n.ai = ai;
      n.parent = parent;
      n.name = ai->mName.C_Str();
      n.static_local = ToEigen(ai->mTransformation);
      const std::size_t tag = n.name.find(kHelperTag);
      if (tag != std::string::npos) {
        n.helper = true;
        n.helper_kind = n.name.substr(tag + kHelperTag.size());
      }
      const int index = static_cast<int>(nodes_.size());
      nodes_.push_back(std::move(n));
      index_by_name_.emplace(nodes_.back().name, index);  // keeps the first of duplicates
      for (unsigned c = ai->mNumChildren; c-- > 0;) stack.push_back({ai->mChildren[c], index});
    }
    children_.assign(nodes_.size(), {});
    for (int i = 1; i < static_cast<int>(nodes_.size()); ++i) {
      children_[nodes_[i].parent].push_back(i);
    }
  }

  void ResolveHelpers() {
    for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
      if (nodes_[i].helper) continue;
      const std::string prefix = nodes_[i].name + std::string(kHelperTag);
      for (int p = nodes_[i].parent; p >= 0 && nodes_[p].helper; p = nodes_[p].parent) {
        if (nodes_[p].name.rfind(prefix, 0) != 0) break;
        nodes_[p].owner = i;
        nodes_[i].helpers.push_back(p);
      }
    }
  }

  // Node index a channel targets; a missing node is an error.
  int ChannelNode(const aiAnimation& anim, const aiNodeAnim& channel) const {
    const auto it = index_by_name_.find(channel.mNodeName.C_Str());
    if (it == index_by_name_.end()) {
      Fail(fmt::format("animation '{}' has a channel for node '{}', which is not in the scene",
                       anim.mName.C_Str(), channel.mNodeName.C_Str()));
    }
    return it->second;
  }

  void CollectAnimated() {
    animated_.assign(nodes_.size(), false);
    maps_.push_back(ChannelMap(nullptr));  // no animation
    for (unsigned a = 0; a < scene_.mNumAnimations; ++a) {
      maps_.push_back(ChannelMap(scene_.mAnimations[a]));
      for (std::size_t n = 0; n < nodes_.size(); ++n) {
        if (!maps_.back()[n]) continue;
        animated_[nodes_[n].helper && nodes_[n].owner >= 0 ? nodes_[n].owner : n] = true;
      }
    }
  }

  void SelectJoints() {
    std::unordered_set<std::string> cameras_lights;
    for (unsigned i = 0; i < scene_.mNumCameras; ++i) {
      cameras_lights.insert(scene_.mCameras[i]->mName.C_Str());
    }
    for (unsigned i = 0; i < scene_.mNumLights; ++i) {
      cameras_lights.insert(scene_.mLights[i]->mName.C_Str());
    }
    const int n = static_cast<int>(nodes_.size());
    is_bone_.assign(n, false);
    bind_world_.assign(n, Eigen::Affine3d::Identity());
    std::vector<Eigen::Affine3d> static_global(n);
    for (int i = 0; i < n; ++i) {
      static_global[i] = nodes_[i].parent < 0
                             ? nodes_[i].static_local
                             : static_global[nodes_[i].parent] * nodes_[i].static_local;
    }
    // Mesh nodes, to place bind poses in the world.
    std::vector<int> mesh_node(scene_.mNumMeshes, 0);
    for (int i = 0; i < n; ++i) {
      for (unsigned m = 0; m < nodes_[i].ai->mNumMeshes; ++m) {
        const unsigned mesh = nodes_[i].ai->mMeshes[m];
        if (mesh < scene_.mNumMeshes) mesh_node[mesh] = i;
      }
    }
    for (unsigned m = 0; m < scene_.mNumMeshes; ++m) {
      const aiMesh* mesh = scene_.mMeshes[m];
      for (unsigned b = 0; b < mesh->mNumBones; ++b) {
        const aiBone* bone = mesh->mBones[b];
        const auto it = index_by_name_.find(bone->mName.C_Str());
        if (it == index_by_name_.end() || is_bone_[it->second]) continue;
        is_bone_[it->second] = true;
        bind_world_[it->second] =
            static_global[mesh_node[m]] * ToEigen(bone->mOffsetMatrix).inverse();
      }
    }
    is_joint_.assign(n, false);
    for (int i = 0; i < n; ++i) {
      const Node& node = nodes_[i];
      if (node.helper) continue;
      if (!is_bone_[i] && (!animated_[i] || cameras_lights.count(node.name))) continue;
      is_joint_[i] = true;
      for (int p = node.parent; p > 0 && !is_joint_[p]; p = nodes_[p].parent) {
        if (!nodes_[p].helper) is_joint_[p] = true;
      }
    }
    // Nearest joint ancestor.
    joint_parent_.assign(n, -1);
    for (int i = 1; i < n; ++i) {
      const int p = nodes_[i].parent;
      joint_parent_[i] = is_joint_[p] ? p : joint_parent_[p];
    }
    // Drop lone single-node trees (camera targets, props) when a real skeleton exists.
    std::vector<int> tree_size(n, 0);
    std::vector<bool> tree_has_bone(n, false);
    std::vector<int> root_of(n, -1);
    for (int i = 0; i < n; ++i) {
      if (!is_joint_[i]) continue;
      root_of[i] = joint_parent_[i] < 0 ? i : root_of[joint_parent_[i]];
      ++tree_size[root_of[i]];
      if (is_bone_[i]) tree_has_bone[root_of[i]] = true;
    }
    std::vector<int> roots;
    for (int i = 0; i < n; ++i) {
      if (is_joint_[i] && joint_parent_[i] < 0) roots.push_back(i);
    }
    if (roots.empty()) {
      Fail("no skeleton: the file has no skin bones and no animated nodes");
    }
    if (roots.size() > 1) {
      std::vector<std::string> dropped;
      const bool any_big = std::any_of(roots.begin(), roots.end(),
                                       [&](int r) { return tree_size[r] > 1 || tree_has_bone[r]; });
      if (any_big) {
        for (const int r : roots) {
          if (tree_size[r] > 1 || tree_has_bone[r]) continue;
          is_joint_[r] = false;
          dropped.push_back(nodes_[r].name);
        }
      }
      if (!dropped.empty()) {
        warnings_.push_back(fmt::format("{}: left out {} animated node(s) outside the skeleton: {}",
                                        path_, dropped.size(), fmt::join(dropped, ", ")));
      }
    }
    for (int i = 0; i < n; ++i) {
      if (is_joint_[i]) joints_.push_back(i);
    }
    if (static_cast<int>(joints_.size()) > Skeleton::kMaxJoints) {
      Fail(fmt::format("{} joints, more than the limit of {}", joints_.size(),
                       Skeleton::kMaxJoints));
    }
  }

  // Rest transforms (full affine, world) of every joint and end site.
  void ComputeRest() {
    const int n = static_cast<int>(nodes_.size());
    // Static chain without the helpers' own rotation/scaling: the rest carries translation and
    // pre-/post-rotation, the channels carry the FBX local rotation.
    std::vector<Eigen::Affine3d> rest_global(n);
    for (int i = 0; i < n; ++i) {
      const Node& node = nodes_[i];
      Eigen::Affine3d local = node.static_local;
      if (node.helper && node.owner >= 0 &&
          (node.helper_kind == "Rotation" || node.helper_kind == "Scaling")) {
        local.setIdentity();
      }
      rest_global[i] = node.parent < 0 ? local : rest_global[node.parent] * local;
    }
    rest_world_.assign(n, Eigen::Affine3d::Identity());
    for (const int j : joints_) {
      const int p = joint_parent_[j];
      if (is_bone_[j]) {
        rest_world_[j] = bind_world_[j];
      } else if (p >= 0) {
        rest_world_[j] = rest_world_[p] * (rest_global[p].inverse() * rest_global[j]);
      } else {
        rest_world_[j] = rest_global[j];
      }
    }
    // End sites: leaf nodes right below a joint (through helpers), without meshes.
    for (int i = 0; i < n; ++i) {
      const Node& node = nodes_[i];
      if (is_joint_[i] || node.helper || !children_[i].empty() || node.ai->mNumMeshes > 0) continue;
      const int j = joint_parent_[i];
      if (j < 0) continue;
      bool direct = true;
      for (int p = node.parent; p != j; p = nodes_[p].parent) direct = direct && nodes_[p].helper;
      if (!direct) continue;
      const Eigen::Vector3d world =
          (rest_world_[j] * (rest_global[j].inverse() * rest_global[i])).translation();
      end_sites_.push_back({j, world});
    }
  }

  double FileUnit() const {
    const std::string ext = Ext(path_);
    if (ext == ".gltf" || ext == ".glb" || ext == ".dae") return 1.0;
    if (ext == ".fbx" && scene_.mMetaData) {
      for (unsigned i = 0; i < scene_.mMetaData->mNumProperties; ++i) {
        if (std::string_view(scene_.mMetaData->mKeys[i].C_Str()) != "UnitScaleFactor") continue;
        const aiMetadataEntry& e = scene_.mMetaData->mValues[i];
        double v = 0;
        if (e.mType == AI_DOUBLE) v = *static_cast<const double*>(e.mData);
        if (e.mType == AI_FLOAT) v = *static_cast<const float*>(e.mData);
        if (std::isfinite(v) && v > 0) return v / 100.0;
      }
      return 0.01;  // FBX default: centimetres
    }
    return 0.0;
  }

  void BuildSkeleton(Scene& out) {
    const int n = static_cast<int>(nodes_.size());
    frame_index_.assign(n, -1);
    std::vector<Frame> rest(n);
    for (const int j : joints_) {
      bool nonuniform = false;
      rest[j] = ToFrame(rest_world_[j], &nonuniform);
      if (nonuniform) NoteNonuniform(j);
    }
    // Joint names must be unique and non-empty.
    std::unordered_set<std::string> used;
    std::vector<std::string> names(n);
    for (const int j : joints_) {
      std::string base = nodes_[j].name.empty() ? std::string("joint") : nodes_[j].name;
      std::string name = base;
      for (int k = 1; used.count(name); ++k) name = fmt::format("{}.{}", base, k);
      if (name != nodes_[j].name) {
        warnings_.push_back(fmt::format("{}: joint '{}' renamed '{}' (names must be unique)", path_,
                                        nodes_[j].name, name));
      }
      used.insert(name);
      names[j] = name;
    }
    // Characteristic length for "is this translation animated" tests.
    double extent = 0;
    for (const int j : joints_) extent = std::max(extent, rest[j].origin.norm());
    translation_tolerance_ = 1e-6 * std::max(extent, 1e-3);
    // Which joints get position channels: roots, and joints whose translation moves.
    has_position_.assign(n, false);
    for (const int j : joints_) has_position_[j] = joint_parent_[j] < 0;
    rest_local_.assign(n, Frame());
    for (const int j : joints_) {
      const int p = joint_parent_[j];
      Frame& local = rest_local_[j];
      if (p < 0) {
        local = rest[j];
      } else {
        local.rotation = rest[p].rotation.transpose() * rest[j].rotation;
        local.origin = rest[p].rotation.transpose() * (rest[j].origin - rest[p].origin);
      }
    }
    DetectAnimatedTranslations();

    std::vector<RawSkeleton::Joint> raw(n);
    for (const int j : joints_) {
      RawSkeleton::Joint& joint = raw[j];
      joint.name = names[j];
      joint.rest_translation = rest_local_[j].origin;
      joint.rest_orientation = Eigen::Quaterniond(rest_local_[j].rotation).normalized();
      if (has_position_[j]) {
        joint.channels = {ChannelType::kXposition, ChannelType::kYposition,
                          ChannelType::kZposition};
      }
      joint.channels.insert(joint.channels.end(), {ChannelType::kZrotation, ChannelType::kYrotation,
                                                   ChannelType::kXrotation});
    }
    for (const auto& [j, world] : end_sites_) {
      raw[j].end_sites.push_back(rest[j].rotation.transpose() * (world - rest[j].origin));
    }
    RawSkeleton skeleton;
    for (auto it = joints_.rbegin(); it != joints_.rend(); ++it) {
      const int j = *it;
      const int p = joint_parent_[j];
      if (p >= 0) raw[p].children.insert(raw[p].children.begin(), std::move(raw[j]));
    }
    for (const int j : joints_) {
      if (joint_parent_[j] < 0) skeleton.roots.push_back(std::move(raw[j]));
    }
    std::string error;
    std::unique_ptr<Skeleton> built = SkeletonBuilder().Build(skeleton, &error);
    if (!built) Fail(error);
    for (const int j : joints_) frame_index_[j] = built->FindJoint(names[j]);
    out.skeleton = std::move(built);
  }

  void NoteNonuniform(int node) {
    if (nonuniform_scale_) return;
    nonuniform_scale_ = true;
    nonuniform_name_ = nodes_[node].name;
  }

  // Per animation: node -> channel (duplicates are reported once, here).
  std::vector<const aiNodeAnim*> ChannelMap(const aiAnimation* anim) {
    std::vector<const aiNodeAnim*> map(nodes_.size(), nullptr);
    if (!anim) return map;
    for (unsigned c = 0; c < anim->mNumChannels; ++c) {
      const aiNodeAnim* ch = anim->mChannels[c];
      const int n = ChannelNode(*anim, *ch);
      if (map[n]) {
        warnings_.push_back(
            fmt::format("{}: animation '{}' has two channels for node '{}'; the "
                        "first is used",
                        path_, anim->mName.C_Str(), nodes_[n].name));
        continue;
      }
      map[n] = ch;
    }
    return map;
  }

  // World transforms of every node at `tick` (channels from `map`).
  void EvaluateGlobals(const std::vector<const aiNodeAnim*>& map, double tick, double snap,
                       std::vector<Eigen::Affine3d>& global) const {
    const int n = static_cast<int>(nodes_.size());
    global.resize(n);
    for (int i = 0; i < n; ++i) {
      const Node& node = nodes_[i];
      Eigen::Affine3d local;
      const bool whole_owner =
          node.helper && node.owner >= 0 && map[node.owner] &&
          std::none_of(nodes_[node.owner].helpers.begin(), nodes_[node.owner].helpers.end(),
                       [&](int h) { return map[h] != nullptr; });
      if (whole_owner) {
        // The owner's channel holds the whole chain's transform (Assimp bakes pre-rotation and
        // translation into it when it is "simple"), so the helpers contribute nothing.
        local.setIdentity();
      } else if (const aiNodeAnim* ch = map[i]) {
        local = Sample(*ch, node.static_local, tick, snap);
      } else {
        local = node.static_local;
      }
      global[i] = node.parent < 0 ? local : global[node.parent] * local;
    }
  }

  static Eigen::Affine3d Sample(const aiNodeAnim& ch, const Eigen::Affine3d& fallback, double tick,
                                double snap) {
    // Fallback components (an SVD) only for channels with an empty key list.
    Eigen::Matrix3d rot = Eigen::Matrix3d::Identity(), scale = Eigen::Matrix3d::Identity();
    if (ch.mNumPositionKeys == 0 || ch.mNumRotationKeys == 0 || ch.mNumScalingKeys == 0) {
      fallback.computeRotationScaling(&rot, &scale);
    }
    const Eigen::Vector3d t =
        SampleVector(ch.mPositionKeys, ch.mNumPositionKeys, tick, snap, fallback.translation());
    const Eigen::Quaterniond q =
        SampleRotation(ch.mRotationKeys, ch.mNumRotationKeys, tick, snap, Eigen::Quaterniond(rot));
    const Eigen::Vector3d s =
        SampleVector(ch.mScalingKeys, ch.mNumScalingKeys, tick, snap, scale.diagonal());
    Eigen::Affine3d out = Eigen::Affine3d::Identity();
    out.translate(t);
    out.rotate(q);
    out.scale(s);
    return out;
  }

  // The common key spacing (ticks) when every channel with more than two keys is keyed on one
  // evenly spaced grid starting at 0 whose spacing is within 0.1% of `ticks_per_frame`; else 0.
  static double KeyGrid(const aiAnimation& anim, double ticks_per_frame) {
    double grid = 0;
    auto check = [&](auto* keys, unsigned count) {
      if (count <= 2) return true;
      const double dt = (keys[count - 1].mTime - keys[0].mTime) / (count - 1);
      if (!(std::abs(dt - ticks_per_frame) <= 1e-3 * ticks_per_frame)) return false;
      if (grid == 0) grid = dt;
      if (std::abs(dt - grid) > 1e-6 * grid) return false;
      for (unsigned k = 0; k < count; ++k) {
        if (std::abs(keys[k].mTime - k * dt) > 1e-3 * dt) return false;
      }
      return true;
    };
    for (unsigned c = 0; c < anim.mNumChannels; ++c) {
      const aiNodeAnim* ch = anim.mChannels[c];
      if (!check(ch->mPositionKeys, ch->mNumPositionKeys) ||
          !check(ch->mRotationKeys, ch->mNumRotationKeys) ||
          !check(ch->mScalingKeys, ch->mNumScalingKeys)) {
        return 0;
      }
    }
    return grid;
  }

  // Frame timing of an animation: frames per second, ticks per frame, number of frames.
  struct Timing {
    double fps = 30;
    double ticks_per_frame = 1;
    int frames = 1;
  };

  Timing TimingOf(const aiAnimation* anim) const {
    Timing timing;
    if (!anim) return timing;
    const double tps = anim->mTicksPerSecond > 0 ? anim->mTicksPerSecond : 25.0;
    bool integral = true;
    double min_dt = std::numeric_limits<double>::infinity();
    double max_time = 0;
    auto scan = [&](auto* keys, unsigned count) {
      for (unsigned k = 0; k < count; ++k) {
        const double t = keys[k].mTime;
        if (std::abs(t - std::round(t)) > 1e-3) integral = false;
        max_time = std::max(max_time, t);
        if (k > 0 && t - keys[k - 1].mTime > 1e-9 * tps) {
          min_dt = std::min(min_dt, t - keys[k - 1].mTime);
        }
      }
    };
    for (unsigned c = 0; c < anim->mNumChannels; ++c) {
      const aiNodeAnim* ch = anim->mChannels[c];
      scan(ch->mPositionKeys, ch->mNumPositionKeys);
      scan(ch->mRotationKeys, ch->mNumRotationKeys);
      scan(ch->mScalingKeys, ch->mNumScalingKeys);
    }
    if (Ext(path_) == ".fbx" || (tps <= 480 && integral)) {
      timing.fps = SnapRate(tps);
    } else if (std::isfinite(min_dt)) {
      timing.fps = SnapRate(tps / min_dt);
      if (timing.fps < 12) timing.fps = 30;
    }
    timing.ticks_per_frame = tps / timing.fps;
    if (const double grid = KeyGrid(*anim, timing.ticks_per_frame); grid > 0) {
      // Keyed on every frame at a rate a little off the snapped one (BVH "Frame Time: .0083333"
      // written as is): frame f is key f, so nothing is interpolated.
      timing.ticks_per_frame = grid;
    }
    double duration = anim->mDuration > 0 ? anim->mDuration : max_time;
    if (!std::isfinite(duration) || duration < 0) Fail("animation duration is not finite");
    const double frames = std::round(duration / timing.ticks_per_frame) + 1;
    if (!(frames <= kMaxFrames)) {
      Fail(fmt::format("animation '{}' would have {} frames at {} fps (limit {})",
                       anim->mName.C_Str(), frames, timing.fps, kMaxFrames));
    }
    timing.frames = static_cast<int>(frames);
    return timing;
  }

  // Sets has_position_ for joints whose local translation leaves the rest in any clip.
  void DetectAnimatedTranslations() {
    std::vector<Eigen::Affine3d> global;
    bool nonuniform = false;
    for (unsigned a = 0; a < scene_.mNumAnimations; ++a) {
      const aiAnimation* anim = scene_.mAnimations[a];
      const std::vector<const aiNodeAnim*>& map = maps_[a + 1];
      const Timing timing = TimingOf(anim);
      std::vector<int> candidates;
      for (const int j : joints_) {
        if (!has_position_[j] && animated_[j]) candidates.push_back(j);
      }
      if (candidates.empty()) continue;
      for (int f = 0; f < timing.frames; ++f) {
        EvaluateGlobals(map, f * timing.ticks_per_frame, 0.01 * timing.ticks_per_frame, global);
        for (const int j : candidates) {
          if (has_position_[j]) continue;
          const int p = joint_parent_[j];
          const Frame fp = ToFrame(global[p], &nonuniform);
          const Eigen::Vector3d t = fp.rotation.transpose() * (global[j].translation() - fp.origin);
          if ((t - rest_local_[j].origin).norm() > translation_tolerance_) has_position_[j] = true;
        }
      }
    }
  }

  // Samples animation `a` (-1: the static pose) on every frame.
  Clip SampleClip(int a, const std::string& name, const Skeleton& skeleton) {
    const aiAnimation* anim = a >= 0 ? scene_.mAnimations[a] : nullptr;
    const std::vector<const aiNodeAnim*>& map = maps_[a + 1];
    const Timing timing = TimingOf(anim);
    const double values =
        static_cast<double>(timing.frames) * static_cast<double>(skeleton.num_channels());
    if (values > kMaxClipValues) {
      Fail(fmt::format("animation '{}' is too large ({} frames x {} channels)", name, timing.frames,
                       skeleton.num_channels()));
    }
    Clip clip(timing.frames, skeleton.num_channels(), 1.0 / timing.fps);
    clip.set_name(name);
    std::vector<Eigen::Affine3d> global;
    std::vector<Frame> world(nodes_.size());
    std::vector<Eigen::Vector3d> previous(nodes_.size(), Eigen::Vector3d::Zero());
    for (int f = 0; f < timing.frames; ++f) {
      EvaluateGlobals(map, f * timing.ticks_per_frame, 0.01 * timing.ticks_per_frame, global);
      std::span<double> row = clip.frame(f);
      for (const int j : joints_) {
        bool nonuniform = false;
        world[j] = ToFrame(global[j], &nonuniform);
        if (nonuniform) NoteNonuniform(j);
        const int p = joint_parent_[j];
        Eigen::Matrix3d rotation = world[j].rotation;
        Eigen::Vector3d translation = world[j].origin;
        if (p >= 0) {
          rotation = world[p].rotation.transpose() * world[j].rotation;
          translation = world[p].rotation.transpose() * (world[j].origin - world[p].origin);
        }
        const int k = frame_index_[j];
        const Eigen::Matrix3d channel_rotation = rest_local_[j].rotation.transpose() * rotation;
        const Eigen::Vector3d xyz =
            MatrixToEulerNear(channel_rotation, EulerOrder::kZYX, previous[j]);
        previous[j] = xyz;
        const std::span<const int> rc = skeleton.rotation_channels(k);
        // Channels are Zrotation Yrotation Xrotation.
        row[rc[0]] = xyz.z();
        row[rc[1]] = xyz.y();
        row[rc[2]] = xyz.x();
        const Eigen::Vector3d delta = translation - rest_local_[j].origin;
        for (int axis = 0; axis < 3; ++axis) {
          const int c = skeleton.translation_channel(k, axis);
          if (c >= 0) row[c] = delta[axis];
        }
      }
    }
    for (const double v : clip.values()) {
      if (!std::isfinite(v)) Fail(fmt::format("animation '{}' has non-finite values", name));
    }
    return clip;
  }

  const aiScene& scene_;
  const std::string& path_;
  std::vector<Node> nodes_;
  std::vector<std::vector<int>> children_;
  std::unordered_map<std::string, int> index_by_name_;
  std::vector<bool> animated_;
  std::vector<bool> is_bone_;
  std::vector<bool> is_joint_;
  std::vector<bool> has_position_;
  std::vector<int> joint_parent_;
  std::vector<int> joints_;
  std::vector<int> frame_index_;
  std::vector<Eigen::Affine3d> bind_world_;
  std::vector<Eigen::Affine3d> rest_world_;
  std::vector<Frame> rest_local_;
  std::vector<std::pair<int, Eigen::Vector3d>> end_sites_;
  std::vector<std::string> warnings_;
  std::vector<std::vector<const aiNodeAnim*>> maps_;  // [0]: none, [a + 1]: animation a
  double translation_tolerance_ = 1e-9;
  bool nonuniform_scale_ = false;
  std::string nonuniform_name_;
};

}  // namespace

std::vector<std::string> AssimpExtensions() { return {".fbx", ".glb", ".gltf", ".dae"}; }

Scene ReadWithAssimp(const std::string& path) {
  Assimp::Importer importer;
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, true);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_ALL_GEOMETRY_LAYERS, false);
  const aiScene* scene = nullptr;
  try {
    scene = importer.ReadFile(path, 0);
  } catch (const std::exception& e) {
    throw ImportError(fmt::format("{}: Assimp failed: {}", path, e.what()));
  }
  if (!scene) {
    std::string why = importer.GetErrorString();
    std::replace(why.begin(), why.end(), '\n', ' ');
    throw ImportError(
        fmt::format("{}: cannot read ({})", path, why.empty() ? "unknown Assimp error" : why));
  }
  return Converter(*scene, path).Run();
}

}  // namespace rigel
